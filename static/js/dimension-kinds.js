// One entry per kind of rubric dimension: how its fieldset is read, restored and scored,
// and whether what it read answers the dimension (given: as the kind's class says on the
// server, studies/rubric/; a list of items or criteria, even empty, is an answer).
// The rating page (rating.js) calls these; a new kind adds an entry here and a template
// under templates/annotation/dimensions/.
window.ConcordKinds = (function () {
  "use strict";
  let itemCounter = 0;

  function addItem(fieldset, dim, item, focus) {
    const list = fieldset.querySelector("[data-items]");
    const row = document.getElementById("item-template").content.firstElementChild.cloneNode(true);
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

  // Points for a count: the highest band whose lower bound the count reaches.
  function bandFor(dim, count) {
    let index = 0;
    dim.bands.forEach((band, i) => { if (count >= parseFloat(band[0])) index = i; });
    return { points: dim.bands[index][1], label: dim.band_labels[index][0] };
  }

  const counted = {
    init(fieldset, dim, changed) {
      fieldset.addEventListener("click", (event) => {
        if (event.target.closest("[data-add-item]")) {
          addItem(fieldset, dim, null, true);
          changed();
        }
        const remove = event.target.closest("[data-remove-item]");
        if (remove) {
          remove.closest(".item-row").remove();
          fieldset.querySelector("[data-add-item]").focus();
          changed();
        }
      });
      // Enter in an item adds the next one instead of submitting the form.
      fieldset.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && event.target.matches("[data-item-text]")) {
          event.preventDefault();
          addItem(fieldset, dim, null, true);
          changed();
        }
      });
    },
    read(fieldset) {
      const items = [];
      fieldset.querySelectorAll(".item-row").forEach((row) => {
        const text = row.querySelector("[data-item-text]").value.trim();
        if (text) items.push({ text: text, half: row.querySelector("[data-item-half]").checked });
      });
      return { items: items };
    },
    restore(fieldset, dim, value) {
      fieldset.querySelector("[data-items]").innerHTML = "";
      (value.items || []).forEach((item) => addItem(fieldset, dim, item, false));
    },
    score(fieldset, dim, value) {
      const count = value.items.reduce((sum, item) => sum + (item.half ? 0.5 : 1), 0);
      const band = bandFor(dim, count);
      fieldset.querySelector("[data-count]").textContent = count;
      fieldset.querySelector("[data-band]").textContent = band.label;
      return band.points;
    },
    given(value) { return Array.isArray(value.items); },
  };

  const checklist = {
    init() {},
    read(fieldset) {
      return { checked: Array.from(fieldset.querySelectorAll("[data-criterion]")).map((c) => c.checked) };
    },
    restore(fieldset, dim, value) {
      const checked = value.checked || [];
      fieldset.querySelectorAll("[data-criterion]").forEach((c, i) => { c.checked = !!checked[i]; });
    },
    score(fieldset, dim, value) {
      return value.checked.filter(Boolean).length;
    },
    given(value) { return Array.isArray(value.checked); },
  };

  // Single-choice kinds (scale, categorical, pairwise) share one shape: {choice: value or null}.
  // Only a scale's choice is points; categories and preferences are not part of the total,
  // so their "0 / 0" in the heading is hidden.
  function singleChoice(parse, countsInTotal) {
    return {
      init(fieldset, dim, changed) {
        const points = fieldset.querySelector("legend [data-points]");
        if (points && !countsInTotal) points.parentElement.hidden = true;
        fieldset.addEventListener("click", (event) => {
          if (!event.target.closest("[data-clear-choice]")) return;
          fieldset.querySelectorAll("[data-choice]").forEach((input) => { input.checked = false; });
          changed();
        });
      },
      read(fieldset) {
        const checked = fieldset.querySelector("[data-choice]:checked");
        return { choice: checked ? parse(checked.value) : null };
      },
      restore(fieldset, dim, value) {
        const choice = value.choice === undefined || value.choice === null ? null : String(value.choice);
        fieldset.querySelectorAll("[data-choice]").forEach((input) => { input.checked = input.value === choice; });
      },
      score(fieldset, dim, value) {
        return countsInTotal && value.choice !== null ? value.choice : 0;
      },
      given(value) { return value.choice !== null && value.choice !== undefined; },
    };
  }

  const toInt = (text) => parseInt(text, 10);
  const asText = (text) => text;

  return {
    counted: counted,
    checklist: checklist,
    scale: singleChoice(toInt, true),
    categorical: singleChoice(asText, false),
    pairwise: singleChoice(toInt, false),
  };
})();
