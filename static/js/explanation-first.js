// Explanation before the verdict: the preference between the two responses can be chosen
// only once the rater has written their reasoning. The server refuses a preference without
// it too (annotation.services); this makes the order visible while rating.
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  if (!form || !form.hasAttribute("data-explanation-first")) return;
  const notes = document.getElementById("notes");
  const hint = document.getElementById("explanation-hint");
  const choices = form.querySelectorAll(".case-dimension input[data-choice]");
  const readonly = form.hasAttribute("data-readonly");
  function update() {
    const written = notes.value.trim().length > 0;
    choices.forEach((choice) => { choice.disabled = readonly || !written; });
    if (hint) hint.hidden = written;
  }
  notes.addEventListener("input", update);
  // The rating script restores a draft after load; check again once it has.
  window.addEventListener("load", update);
  update();
})();
