// Shows a running job's progress (a case import, Assign, an analysis); once it has ended,
// opens the job's page, which shows the result or what went wrong.
(function () {
  "use strict";
  const box = document.getElementById("job-progress");
  if (!box) return;
  const bar = document.getElementById("job-bar");
  const label = document.getElementById("job-label");
  async function poll() {
    try {
      const response = await fetch(box.dataset.statusUrl, { credentials: "same-origin" });
      const status = await response.json();
      if (status.state === "running") {
        bar.max = Math.max(status.total, 1);
        bar.value = status.done;
        label.textContent = status.message || "Waiting to start";
        setTimeout(poll, 1000);
      } else {
        window.location.assign(box.dataset.pageUrl);
      }
    } catch (err) {
      setTimeout(poll, 3000); // offline for a moment: try again
    }
  }
  setTimeout(poll, 1000);
})();
