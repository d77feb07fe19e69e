// The completion page's countdown: the seconds left, then the vendor's completion URL
// (the lead's, from the page; the meta refresh does the same without JavaScript).
(function () {
  const counter = document.getElementById("countdown");
  if (!counter) return;
  let left = parseInt(counter.dataset.seconds, 10) || 0;
  const url = counter.dataset.url;
  const tick = () => {
    counter.textContent = String(left);
    if (left <= 0) {
      if (/^https?:\/\//.test(url)) window.location.assign(url);
      return;
    }
    left -= 1;
    window.setTimeout(tick, 1000);
  };
  tick();
})();
