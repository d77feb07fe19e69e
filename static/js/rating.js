// The rating form: item lists, live points, autosave and active time.
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  if (!form) return;
  const rubric = JSON.parse(document.getElementById("rubric-data").textContent);
  const draft = JSON.parse(document.getElementById("draft-data").textContent) || {};
  const readonly = form.hasAttribute("data-readonly");
  const itemTemplate = document.getElementById("item-template");
  const statusEl = document.getElementById("save-status");
  const versionInput = document.getElementById("version");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const byKey = Object.fromEntries(rubric.map((d) => [d.key, d]));
  let itemCounter = 0;

  // Points for a count: the highest band whose lower bound the count reaches.
  function bandFor(dim, count) {
    let index = 0;
    dim.bands.forEach((band, i) => { if (count >= parseFloat(band[0])) index = i; });
    return { points: dim.bands[index][1], label: dim.band_labels[index][0] };
  }

  function addItem(fieldset, item, focus) {
    const dim = byKey[fieldset.dataset.dim];
    const list = fieldset.querySelector("[data-items]");
    const row = itemTemplate.content.firstElementChild.cloneNode(true);
    const text = row.querySelector("[data-item-text]");
    const half = row.querySelector("[data-item-half]");
    const halfLabel = row.querySelector("label");
    const id = "item-" + (++itemCounter);
    const position = list.children.length + 1;
    text.setAttribute("aria-label", dim.name + ", " + dim.item + " " + position);
    text.value = (item && item.text) || "";
    half.id = id;
    half.checked = !!(item && item.half);
    halfLabel.htmlFor = id;
    halfLabel.setAttribute("aria-label", "Half-weight (" + (dim.half_weight_hint || "counts 0.5") + ")");
    row.querySelector("[data-remove-item]").setAttribute("aria-label", "Remove " + dim.item + " " + position);
    list.appendChild(row);
    if (focus) text.focus();
    return row;
  }

  function readDimension(fieldset) {
    if (fieldset.dataset.kind === "counted") {
      const items = [];
      fieldset.querySelectorAll(".item-row").forEach((row) => {
        const text = row.querySelector("[data-item-text]").value.trim();
        if (text) items.push({ text: text, half: row.querySelector("[data-item-half]").checked });
      });
      return { items: items };
    }
    return { checked: Array.from(fieldset.querySelectorAll("[data-criterion]")).map((c) => c.checked) };
  }

  function readPayload() {
    const responses = {};
    form.querySelectorAll(".response-card").forEach((card) => {
      const values = {};
      card.querySelectorAll("fieldset.dimension").forEach((fs) => { values[fs.dataset.dim] = readDimension(fs); });
      responses[card.dataset.label] = values;
    });
    const confidence = form.querySelector("input[name=confidence]:checked");
    return {
      responses: responses,
      confidence: confidence ? confidence.value : "",
      notes: document.getElementById("notes").value,
    };
  }

  function restore(payload) {
    const responses = payload.responses || {};
    form.querySelectorAll(".response-card").forEach((card) => {
      const values = responses[card.dataset.label] || {};
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        const value = values[fs.dataset.dim] || {};
        if (fs.dataset.kind === "counted") {
          fs.querySelector("[data-items]").innerHTML = "";
          (value.items || []).forEach((item) => addItem(fs, item, false));
        } else {
          const checked = value.checked || [];
          fs.querySelectorAll("[data-criterion]").forEach((c, i) => { c.checked = !!checked[i]; });
        }
      });
    });
    form.querySelectorAll("input[name=confidence]").forEach((r) => { r.checked = r.value === payload.confidence; });
    document.getElementById("notes").value = payload.notes || "";
  }

  function updateScores() {
    form.querySelectorAll(".response-card").forEach((card) => {
      let total = 0;
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        const dim = byKey[fs.dataset.dim];
        const value = readDimension(fs);
        let points;
        if (fs.dataset.kind === "counted") {
          const count = value.items.reduce((sum, item) => sum + (item.half ? 0.5 : 1), 0);
          const band = bandFor(dim, count);
          points = band.points;
          fs.querySelector("[data-count]").textContent = count;
          fs.querySelector("[data-band]").textContent = band.label;
        } else {
          points = value.checked.filter(Boolean).length;
        }
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
  form.addEventListener("click", (event) => {
    const add = event.target.closest("[data-add-item]");
    if (add) { addItem(add.closest("fieldset"), null, true); changed(); return; }
    const remove = event.target.closest("[data-remove-item]");
    if (remove) {
      const fs = remove.closest("fieldset");
      remove.closest(".item-row").remove();
      const next = fs.querySelector("[data-add-item]");
      if (next) next.focus();
      changed();
    }
  });
  // Enter in an item adds the next one instead of submitting the form.
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.matches("[data-item-text]")) {
      event.preventDefault();
      addItem(event.target.closest("fieldset"), null, true);
      changed();
    }
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
