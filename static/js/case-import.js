// Shows a running case import's progress; opens the test cases once it is done.
(function () {
  "use strict";
  const box = document.getElementById("import-progress");
  if (!box) return;
  const bar = document.getElementById("import-bar");
  const written = document.getElementById("import-written");
  const state = document.getElementById("import-state");
  async function poll() {
    try {
      const response = await fetch(box.dataset.statusUrl, { credentials: "same-origin" });
      const status = await response.json();
      if (status.state === "running") {
        bar.max = Math.max(status.total, 1);
        bar.value = status.written;
        written.textContent = status.written;
        setTimeout(poll, 1000);
      } else if (status.state === "done") {
        state.textContent = "Imported.";
        window.location.assign(box.dataset.doneUrl);
      } else {
        // Failed or stopped: the page lists what went wrong (nothing was imported).
        window.location.assign(box.dataset.pageUrl);
      }
    } catch (err) {
      setTimeout(poll, 3000); // offline for a moment: try again
    }
  }
  setTimeout(poll, 1000);
})();
