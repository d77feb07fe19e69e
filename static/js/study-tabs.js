// The study tabs on a phone scroll sideways in one row: the current tab is brought into
// view, and the strip fades at an edge while more tabs lie beyond it.
(function () {
  "use strict";
  var strip = document.querySelector(".study-tabs");
  if (!strip) return;
  function edges() {
    var scrollable = strip.scrollWidth > strip.clientWidth + 1;
    strip.classList.toggle("more-left", scrollable && strip.scrollLeft > 1);
    strip.classList.toggle(
      "more-right",
      scrollable && strip.scrollLeft + strip.clientWidth < strip.scrollWidth - 1
    );
  }
  var active = strip.querySelector(".nav-link.active");
  if (active && strip.scrollWidth > strip.clientWidth) {
    var item = active.getBoundingClientRect();
    var box = strip.getBoundingClientRect();
    strip.scrollLeft += item.left - box.left - (strip.clientWidth - item.width) / 2;
  }
  edges();
  strip.addEventListener("scroll", edges, { passive: true });
  window.addEventListener("resize", edges);
})();
