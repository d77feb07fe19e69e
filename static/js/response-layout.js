// How much room the responses' text takes on the rating screen: tall, short, collapsed (the
// label and total only) or not pinned (scrolling with the page). The choice is remembered in
// this browser for the signed-in rater. While pinned, a field being typed in is kept below
// the panels rather than under them.
(function () {
  "use strict";
  var form = document.getElementById("rating-form");
  var bar = document.querySelector("[data-response-layout]");
  if (!form || !bar) return;
  var LAYOUTS = ["tall", "short", "collapsed", "unpinned"];
  var key = "concord:response-layout:" + bar.getAttribute("data-response-layout");
  var radios = bar.querySelectorAll('input[name="response-layout"]');

  function stored() {
    try {
      return window.localStorage.getItem(key);
    } catch (error) {
      return null; // storage refused (private mode): the default applies
    }
  }

  // The part of a response card that stays at the top of the screen, if any.
  function pinned(card) {
    var head = card.querySelector(".response-head");
    if (!head) return null;
    if (window.getComputedStyle(head).position === "sticky") return head;
    var header = head.querySelector(".card-header");
    return header && window.getComputedStyle(header).position === "sticky" ? header : null;
  }

  function measure() {
    var tallest = 0;
    form.querySelectorAll(".response-card").forEach(function (card) {
      var head = pinned(card);
      if (head) tallest = Math.max(tallest, head.getBoundingClientRect().height);
    });
    document.documentElement.style.setProperty("--response-head-height", tallest + "px");
  }

  function apply(layout) {
    form.setAttribute("data-layout", layout);
    radios.forEach(function (radio) {
      radio.checked = radio.value === layout;
    });
    measure();
  }

  function keepInView(field) {
    if (!field || !field.closest || field.closest(".response-head")) return;
    var card = field.closest(".response-card");
    var head = card && pinned(card);
    if (!head) return;
    var gap = field.getBoundingClientRect().top - head.getBoundingClientRect().bottom - 8;
    if (gap < 0) window.scrollBy(0, gap);
  }

  var saved = stored();
  apply(LAYOUTS.indexOf(saved) >= 0 ? saved : "tall");
  bar.hidden = false;
  bar.addEventListener("change", function (event) {
    if (event.target.name !== "response-layout" || LAYOUTS.indexOf(event.target.value) < 0) return;
    apply(event.target.value);
    try {
      window.localStorage.setItem(key, event.target.value);
    } catch (error) {
      // not remembered; the layout still applies on this page
    }
  });
  form.addEventListener("input", function (event) {
    keepInView(event.target);
  });
  form.addEventListener("focusin", function (event) {
    keepInView(event.target);
  });
  window.addEventListener("resize", measure);
})();
