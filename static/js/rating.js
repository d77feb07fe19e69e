// The rating form: item lists, live points, autosave and active time.
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  if (!form) return;
  const rubric = JSON.parse(document.getElementById("rubric-data").textContent);
  const draft = JSON.parse(document.getElementById("draft-data").textContent) || {};
  const readonly = form.hasAttribute("data-readonly");
  const statusEl = document.getElementById("save-status");
  const versionInput = document.getElementById("version");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const byKey = Object.fromEntries(rubric.map((d) => [d.key, d]));
  const kinds = window.ConcordKinds;

  function kindOf(fieldset) { return kinds[fieldset.dataset.kind]; }

  function readDimension(fieldset) { return kindOf(fieldset).read(fieldset); }

  function readPayload() {
    const responses = {};
    form.querySelectorAll(".response-card").forEach((card) => {
      const values = {};
      card.querySelectorAll("fieldset.dimension").forEach((fs) => { values[fs.dataset.dim] = readDimension(fs); });
      responses[card.dataset.label] = values;
    });
    const caseValues = {};
    form.querySelectorAll("fieldset.case-dimension").forEach((fs) => { caseValues[fs.dataset.dim] = readDimension(fs); });
    const confidence = form.querySelector("input[name=confidence]:checked");
    return {
      responses: responses,
      case: caseValues,
      confidence: confidence ? confidence.value : "",
      notes: document.getElementById("notes").value,
    };
  }

  function restore(payload) {
    const responses = payload.responses || {};
    form.querySelectorAll(".response-card").forEach((card) => {
      const values = responses[card.dataset.label] || {};
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        kindOf(fs).restore(fs, byKey[fs.dataset.dim], values[fs.dataset.dim] || {});
      });
    });
    const caseValues = payload.case || {};
    form.querySelectorAll("fieldset.case-dimension").forEach((fs) => {
      kindOf(fs).restore(fs, byKey[fs.dataset.dim], caseValues[fs.dataset.dim] || {});
    });
    form.querySelectorAll("input[name=confidence]").forEach((r) => { r.checked = r.value === payload.confidence; });
    document.getElementById("notes").value = payload.notes || "";
  }

  function updateScores() {
    form.querySelectorAll(".response-card").forEach((card) => {
      let total = 0;
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        const points = kindOf(fs).score(fs, byKey[fs.dataset.dim], readDimension(fs)) || 0;
        fs.querySelector("[data-points]").textContent = points;
        total += points;
      });
      card.querySelector("[data-total]").textContent = total;
    });
  }

  // Active time: seconds while the page is visible and focused.
  let activeSeconds = 0;
  setInterval(() => {
    if (document.visibilityState === "visible" && document.hasFocus()) activeSeconds += 1;
  }, 1000);

  let saveTimer = null;
  let saving = false;
  let stale = false;

  function setStatus(text, isError) {
    statusEl.textContent = text;
    statusEl.classList.toggle("text-danger", !!isError);
  }

  async function saveDraft() {
    if (readonly || stale) return;
    if (saving) { scheduleSave(); return; }
    saving = true;
    const seconds = activeSeconds;
    try {
      const response = await fetch(form.dataset.draftUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ payload: readPayload(), version: parseInt(versionInput.value, 10), active_seconds: seconds }),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        versionInput.value = body.version;
        activeSeconds -= seconds;
        setStatus("Draft saved " + new Date().toLocaleTimeString());
      } else if (response.status === 409) {
        stale = true;
        setStatus(body.error || "Saved elsewhere; reload to continue.", true);
      } else {
        setStatus("Not saved: " + (body.error || "please sign in again"), true);
      }
    } catch (err) {
      setStatus("Not saved: no connection. Your answers stay in this tab; retrying…", true);
      scheduleSave(5000);
    } finally {
      saving = false;
    }
  }

  function scheduleSave(delay) {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, delay || 800);
  }

  function changed() {
    updateScores();
    if (!readonly) { setStatus("Unsaved changes"); scheduleSave(); }
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.querySelectorAll("fieldset.dimension").forEach((fs) => {
    kindOf(fs).init(fs, byKey[fs.dataset.dim], changed);
  });
  document.getElementById("save-draft").addEventListener("click", () => { clearTimeout(saveTimer); saveDraft(); });
  form.addEventListener("submit", () => {
    clearTimeout(saveTimer);
    document.getElementById("payload").value = JSON.stringify(readPayload());
    document.getElementById("active-seconds").value = activeSeconds;
    document.getElementById("submit-rating").disabled = true;
  });

  restore(draft);
  updateScores();
  if (readonly) form.querySelectorAll("input, textarea, button").forEach((el) => { el.disabled = true; });
})();
