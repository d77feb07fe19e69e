// Refreshes the agreement results without a reload when a newer result is stored.
(function () {
  "use strict";
  const box = document.getElementById("agreement-results");
  if (!box) return;
  let computed = parseInt(box.dataset.computed, 10);
  let stale = null;
  // Point estimates come first: refresh again once their intervals are stored.
  let pending = box.dataset.intervalsPending === "true";
  async function poll() {
    try {
      const status = await (await fetch(box.dataset.statusUrl, { credentials: "same-origin" })).json();
      if (
        status.computed !== computed ||
        (stale !== null && status.stale !== stale) ||
        status.intervals_pending !== pending
      ) {
        const html = await (await fetch(box.dataset.fragmentUrl, { credentials: "same-origin" })).text();
        box.innerHTML = html;
        computed = status.computed;
      }
      stale = status.stale;
      pending = status.intervals_pending;
    } catch (err) {
      // Offline for a moment: try again at the next tick.
    }
  }
  setInterval(poll, 5000);
})();
