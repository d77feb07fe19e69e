// Shows a running Assign job's progress; once it has ended, the page shows the result.
(function () {
  "use strict";
  const box = document.getElementById("assign-progress");
  if (!box) return;
  const bar = document.getElementById("assign-bar");
  const label = document.getElementById("assign-label");
  function stageText(status) {
    if (status.stage === "planning") {
      return "Planning: " + status.done + " of " + status.total + " test cases";
    }
    if (status.stage === "writing") {
      return "Writing: the cases of " + status.done + " of " + status.total + " raters";
    }
    return "Waiting to start";
  }
  async function poll() {
    try {
      const response = await fetch(box.dataset.statusUrl, { credentials: "same-origin" });
      const status = await response.json();
      if (status.state === "running") {
        bar.max = Math.max(status.total, 1);
        bar.value = status.done;
        label.textContent = stageText(status);
        setTimeout(poll, 1000);
      } else {
        // Done, failed or stopped: the job's page leads to the raters page with the result.
        window.location.assign(box.dataset.pageUrl);
      }
    } catch (err) {
      setTimeout(poll, 3000); // offline for a moment: try again
    }
  }
  setTimeout(poll, 1000);
})();
