// The rating form: item lists, live points and totals, "hard to apply" flags, autosave with a
// copy kept in this browser, stale-tab and expired-session handling, active time and keyboard
// shortcuts. The form's data-mode says where answers go:
//   rate          drafts saved to the server as the rater works; "Submit" posts the form
//   practice      kept in this browser only: nothing is sent
//   training, qualification, key   posted when submitted, no drafts
//   adjudicate    as "rate" (drafts saved as the adjudicator works), with a required reason
//                 (the notes box) and "cannot be resolved" instead of a confidence
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  if (!form) return;
  const mode = form.dataset.mode || "rate";
  // The modes whose drafts are saved to the server as the person works.
  const saves = mode === "rate" || mode === "adjudicate";
  // The modes where a submit must answer every required dimension (the server refuses it
  // otherwise): the missing ones are marked as the rater goes.
  const requiresAnswers = mode === "rate" || mode === "practice";
  const rubric = JSON.parse(document.getElementById("rubric-data").textContent);
  const serverDraft = JSON.parse(document.getElementById("draft-data").textContent) || {};
  const readonly = form.hasAttribute("data-readonly");
  const statusEl = document.getElementById("save-status");
  const versionInput = document.getElementById("version");
  const submitButton = document.getElementById("submit-rating");
  const alerts = document.getElementById("page-alerts");
  const notesEl = document.getElementById("notes");
  const unresolvableEl = document.getElementById("unresolvable");
  const byKey = Object.fromEntries(rubric.map((d) => [d.key, d]));
  const kinds = window.ConcordKinds;
  const IDLE_MS = 5 * 60 * 1000;
  // The rater's IANA time zone, sent with every save: a daily exposure limit resets at
  // their own midnight and says when in their own time.
  const timeZone = (function () {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (err) { return ""; }
  })();
  const timeZoneInput = document.getElementById("time-zone");
  if (timeZoneInput) timeZoneInput.value = timeZone;

  // ---- Reading, restoring and scoring -------------------------------------------------

  function kindOf(fieldset) { return kinds[fieldset.dataset.kind]; }

  function readFlag(fieldset) {
    const box = fieldset.querySelector("[data-flag]");
    if (!box) return {};
    const note = fieldset.querySelector("[data-flag-note]");
    // An unticked flag sends no note, but the note stays on screen in case it is ticked again.
    return { flagged: box.checked, flag_note: box.checked ? note.value.trim() : "" };
  }

  function showFlag(fieldset) {
    const box = fieldset.querySelector("[data-flag]");
    if (!box) return;
    fieldset.classList.toggle("is-flagged", box.checked);
    fieldset.querySelector("[data-flag-note-box]").hidden = !box.checked;
  }

  function restoreFlag(fieldset, value) {
    const box = fieldset.querySelector("[data-flag]");
    if (!box) return;
    box.checked = !!value.flagged;
    fieldset.querySelector("[data-flag-note]").value = value.flag_note || "";
    showFlag(fieldset);
  }

  function readDimension(fieldset) {
    return Object.assign(kindOf(fieldset).read(fieldset), readFlag(fieldset));
  }

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
    const payload = {
      responses: responses,
      case: caseValues,
      confidence: confidence ? confidence.value : "",
      notes: notesEl ? notesEl.value.trim() : "",
    };
    if (unresolvableEl) payload.unresolvable = unresolvableEl.checked;
    return payload;
  }

  function restore(payload) {
    payload = payload || {};
    const responses = payload.responses || {};
    form.querySelectorAll(".response-card").forEach((card) => {
      const values = responses[card.dataset.label] || {};
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        const value = values[fs.dataset.dim] || {};
        kindOf(fs).restore(fs, byKey[fs.dataset.dim], value);
        restoreFlag(fs, value);
      });
    });
    const caseValues = payload.case || {};
    form.querySelectorAll("fieldset.case-dimension").forEach((fs) => {
      const value = caseValues[fs.dataset.dim] || {};
      kindOf(fs).restore(fs, byKey[fs.dataset.dim], value);
      restoreFlag(fs, value);
    });
    form.querySelectorAll("input[name=confidence]").forEach((r) => { r.checked = r.value === payload.confidence; });
    if (notesEl) notesEl.value = payload.notes || "";
    if (unresolvableEl) unresolvableEl.checked = !!payload.unresolvable;
    updateScores();
  }

  // A required dimension not yet answered is marked as the rater goes, and the total of a
  // response with a part unanswered is shown as missing ("—"), as the server stores it
  // (studies/rubric/totals.py): a blank part is never worth 0 points.
  function markMissing(fieldset, value) {
    const dim = byKey[fieldset.dataset.dim] || {};
    const given = kindOf(fieldset).given(value);
    const missing = requiresAnswers && !!dim.required && !given;
    fieldset.classList.toggle("is-missing", missing);
    const badge = fieldset.querySelector("[data-missing]");
    if (badge) badge.hidden = !missing;
    return given;
  }

  function updateScores() {
    form.querySelectorAll(".response-card").forEach((card) => {
      let total = 0;
      let complete = true;
      card.querySelectorAll("fieldset.dimension").forEach((fs) => {
        const value = readDimension(fs);
        const points = kindOf(fs).score(fs, byKey[fs.dataset.dim], value) || 0;
        const given = markMissing(fs, value);
        const shown = fs.querySelector("[data-points]");
        if (shown) shown.textContent = given ? points : "—";
        if (!given && (byKey[fs.dataset.dim] || {}).counts_in_total) complete = false;
        total += points;
      });
      card.querySelector("[data-total]").textContent = complete ? total : "—";
    });
    form.querySelectorAll("fieldset.case-dimension").forEach((fs) => markMissing(fs, readDimension(fs)));
    const summary = document.getElementById("missing-answers");
    if (summary) {
      const count = missingFieldsets().length;
      summary.hidden = count === 0 || readonly;
      summary.textContent = count === 1 ? "1 required answer missing" : count + " required answers missing";
    }
  }

  function missingFieldsets() {
    return Array.from(form.querySelectorAll("fieldset.dimension.is-missing"));
  }

  // ---- Messages -------------------------------------------------------------------------

  function setStatus(text, isError) {
    if (!statusEl) return;
    statusEl.textContent = text;
    statusEl.classList.toggle("text-danger", !!isError);
    statusEl.classList.toggle("text-body-secondary", !isError);
  }

  // 24-hour UTC, as every other time on the pages ("14:08 UTC").
  function clock(ms) { return new Date(ms || Date.now()).toISOString().slice(11, 16) + " UTC"; }

  // An alert above the form with buttons or links; replaced when shown again under the same id.
  // What stops saving is shown in the sticky footer, in view beside the buttons.
  const footerAlerts = document.getElementById("footer-alerts");
  const IN_FOOTER = ["session-alert", "offline-alert", "stale-alert"];

  function showAlert(id, tone, message, actions) {
    removeAlert(id);
    const inFooter = footerAlerts && IN_FOOTER.includes(id);
    const box = document.createElement("div");
    box.id = id;
    box.className = "alert alert-" + tone + (inFooter ? " py-2 mb-2 small" : "");
    box.setAttribute("role", tone === "info" ? "status" : "alert");
    const text = document.createElement("p");
    text.className = actions && actions.length ? "mb-2" : "mb-0";
    text.textContent = message;
    box.appendChild(text);
    if (actions && actions.length) {
      const row = document.createElement("div");
      row.className = "d-flex flex-wrap gap-2";
      actions.forEach((action) => {
        const el = document.createElement(action.href ? "a" : "button");
        el.className = "btn btn-sm " + (action.primary ? "btn-" + tone : "btn-outline-dark");
        el.textContent = action.label;
        if (action.href) {
          el.href = action.href;
          if (action.newTab) { el.target = "_blank"; el.rel = "noopener"; }
        } else {
          el.type = "button";
          el.addEventListener("click", action.onClick);
        }
        row.appendChild(el);
      });
      box.appendChild(row);
    }
    if (inFooter) footerAlerts.appendChild(box);
    else (alerts || form.parentNode).insertBefore(box, alerts ? alerts.firstChild : form);
    return box;
  }

  function removeAlert(id) {
    const old = document.getElementById(id);
    if (old) old.remove();
  }

  // ---- A copy in this browser (localStorage) --------------------------------------------
  // Written on every change, cleared once the server has the same answers, so a reload, a
  // closed tab, a lost connection or an expired session loses nothing.

  const localKey = form.dataset.localKey ? "concord:" + form.dataset.localKey : null;
  const local = {
    read() {
      if (!localKey) return null;
      try { return JSON.parse(window.localStorage.getItem(localKey)); } catch (err) { return null; }
    },
    write(payload) {
      if (!localKey) return;
      try {
        window.localStorage.setItem(localKey, JSON.stringify({ payload: payload, version: currentVersion(), at: Date.now() }));
      } catch (err) { /* storage full or disabled: the server draft still works */ }
    },
    clear() {
      if (!localKey) return;
      try { window.localStorage.removeItem(localKey); } catch (err) { /* ignore */ }
    },
  };

  function currentVersion() { return parseInt(versionInput.value, 10) || 0; }

  // ---- Autosave (mode "rate") -------------------------------------------------------------

  let lastSaved = null; // the answers the server has, as JSON
  let saveTimer = null;
  let retryTimer = null;
  let saving = false;
  let submitting = false;
  let pendingSubmit = false;
  let stale = form.hasAttribute("data-stale");
  // The version the server has when this tab is stale (from the refusal).
  let staleVersion = parseInt(form.dataset.currentVersion, 10);
  let signedOut = null; // the server's answer while the session is expired
  let held = false; // paused, or the study closed, since the page opened: nothing is sent

  function csrfToken() {
    // Read from the cookie at each request: signing in again in another tab rotates it.
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    return form.querySelector("input[name=csrfmiddlewaretoken]").value;
  }

  function unsaved() { return lastSaved !== null && JSON.stringify(readPayload()) !== lastSaved; }

  function scheduleSave(delay) {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, delay || 800);
  }

  function retryLater(delay) {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => { if (unsaved()) saveDraft(); }, delay);
  }

  // Returns what happened: "saved", "unchanged", "busy", "skipped", or the reason it was not
  // saved ("stale", "signed_out", "token", "refused", "error", "offline").
  async function saveDraft(options) {
    options = options || {};
    if (!saves || readonly || stale || held || submitting) return "skipped";
    if (saving) { scheduleSave(); return "busy"; }
    const payload = readPayload();
    const text = JSON.stringify(payload);
    if (text === lastSaved && !options.force) return "unchanged";
    saving = true;
    const seconds = activeSeconds;
    setStatus("Saving…");
    try {
      const response = await fetch(form.dataset.draftUrl, {
        method: "POST",
        credentials: "same-origin",
        keepalive: !!options.keepalive,
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({ payload: payload, version: currentVersion(), active_seconds: seconds, time_zone: timeZone }),
      });
      const body = await response.json().catch(() => null);
      if (response.ok && body && typeof body.version === "number") {
        versionInput.value = body.version;
        activeSeconds = Math.max(0, activeSeconds - seconds);
        lastSaved = text;
        signedOut = null;
        removeAlert("session-alert");
        removeAlert("offline-alert");
        if (JSON.stringify(readPayload()) === text) local.clear(); else local.write(readPayload());
        setStatus(body.preview ? "Not saved: " + body.preview : "Draft saved at " + clock());
        return "saved";
      }
      local.write(payload);
      if (response.status === 409 && body && body.stale) {
        stale = true;
        staleVersion = body.version;
        showStale(body.error);
        return "stale";
      }
      if (response.status === 403 && body && body.closed) {
        showHold(body, options.quiet);
        return "held";
      }
      if (response.status === 401 || (body && body.signed_out)) {
        // Signed out, or every cookie gone (the security-token refusal says which).
        signedOut = body || {};
        showSignedOut();
        retryLater(15000);
        return "signed_out";
      }
      if (body && body.csrf) {
        // Still signed in but the security-token cookie is gone: a reload sets a new one.
        setStatus("Not saved: the page's security token was lost.", true);
        showAlert("session-alert", "warning", body.error,
          [{ label: "Reload the page (your answers come back)", primary: true, onClick: () => { local.write(readPayload()); window.location.reload(); } }]);
        return "token";
      }
      if (body && body.error) {
        setStatus("Not saved: " + body.error, true);
        return "refused";
      }
      if (response.status === 403) {
        // A security-token failure after signing in elsewhere: the cookie has the new one.
        setStatus("Not saved yet; retrying…", true);
        retryLater(5000);
        return "error";
      }
      setStatus("Not saved (server error " + response.status + "); retrying…", true);
      retryLater(10000);
      return "error";
    } catch (err) {
      local.write(payload);
      setStatus("Not saved: no connection. Retrying…", true);
      showAlert("offline-alert", "warning",
        "The connection is lost. Your answers are kept in this browser and will be saved as soon as it is back.");
      retryLater(5000);
      return "offline";
    } finally {
      saving = false;
      if (pendingSubmit) { pendingSubmit = false; submitAfterSave(); }
    }
  }

  function showStale(message) {
    setStatus("Not saved: this case was saved elsewhere.", true);
    showAlert("stale-alert", "warning",
      (message || "This case was saved from another tab or device after you opened it.") +
      " Your answers stay on this page and in this browser.",
      [
        { label: "Open the saved version", onClick: () => { local.write(readPayload()); window.location.reload(); } },
        {
          label: "Keep the answers on this page",
          primary: true,
          onClick: () => {
            versionInput.value = staleVersion;
            stale = false;
            removeAlert("stale-alert");
            saveDraft();
          },
        },
      ]);
  }

  // The rater was paused (or the study closed) while this page was open: the banner the
  // page would show if loaded now, and no Submit; the answers stay here and in this browser.
  function showHold(body, quiet) {
    held = true;
    setStatus("Not saved: " + (body.error || "rating is on hold."), true);
    if (submitButton) submitButton.disabled = true;
    const saveDraftButton = document.getElementById("save-draft");
    if (saveDraftButton) saveDraftButton.disabled = true;
    if (!holdTimer) holdTimer = setInterval(recheckHold, 30000);
    const old = document.getElementById("rating-hold");
    if (old && quiet) return; // a recheck that is still on hold: the banner stays as it is
    if (old) old.remove();
    if (body.hold && alerts) {
      // Rendered and escaped by the server (annotation/_hold.html).
      alerts.insertAdjacentHTML("afterbegin", body.hold);
      const banner = document.getElementById("rating-hold");
      if (banner) {
        banner.setAttribute("role", "alert");
        banner.setAttribute("tabindex", "-1");
        banner.scrollIntoView({ block: "nearest" });
      }
    }
  }

  // Reinstated (or the study reopened) while this page was open: every 30 seconds, and
  // whenever the page comes back to the front, the answers are offered to the server
  // again; once it takes them the banner goes and Submit is back, without a reload.
  let holdTimer = null;
  async function recheckHold() {
    if (!held || saving || submitting) return;
    held = false;
    if ((await saveDraft({ force: true, quiet: true })) !== "saved") return;
    clearInterval(holdTimer);
    holdTimer = null;
    const banner = document.getElementById("rating-hold");
    if (banner) banner.remove();
    if (submitButton) submitButton.disabled = false;
    const saveDraftButton = document.getElementById("save-draft");
    if (saveDraftButton) saveDraftButton.disabled = false;
  }
  window.addEventListener("focus", recheckHold);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) recheckHold(); });

  function showSignedOut() {
    setStatus("Not saved: signed out.", true);
    local.write(readPayload());
    const actions = [];
    if (signedOut.login_url) {
      // In another tab this page keeps running and saves once the sign-in is done; here,
      // the copy in this browser is offered again when the case opens.
      const here = signedOut.login_url.split("?")[0] + "?next=" + encodeURIComponent(window.location.pathname);
      actions.push({ label: "Sign in again (opens a new tab)", href: signedOut.login_url, newTab: true, primary: true });
      actions.push({ label: "Sign in here and come back to this case", href: here });
    }
    showAlert("session-alert", "warning", signedOut.error ||
      "Your session has expired. Sign in again in another tab; your answers are kept here.", actions);
  }

  // ---- Submitting -----------------------------------------------------------------------

  function fillHidden() {
    document.getElementById("payload").value = JSON.stringify(readPayload());
    document.getElementById("active-seconds").value = activeSeconds;
    form.querySelector("input[name=csrfmiddlewaretoken]").value = csrfToken();
  }

  function submitNow() {
    if (saves) {
      if (held) return;
      if (stale) { showStale(); return; }
      if (signedOut) { showSignedOut(); return; }
      local.write(readPayload());
    }
    fillHidden();
    submitting = true;
    if (submitButton) submitButton.disabled = true;
    form.submit();
  }

  // The draft is saved first: a lost session, a lost security token, a lost connection or
  // a newer version elsewhere is then told on this page, with the answers kept, instead of
  // ending on an error page.
  let preparing = false;
  async function submitAfterSave() {
    if (saving) { pendingSubmit = true; setStatus("Saving before submitting…"); return; }
    if (stale) { showStale(); return; }
    preparing = true;
    try {
      setStatus("Saving before submitting…");
      const outcome = await saveDraft({ force: true });
      if (outcome === "saved") submitNow();
    } finally {
      preparing = false;
    }
  }

  // ---- Field errors: next to the field they concern --------------------------------------

  function fieldTarget(field) {
    if (field === "confidence") return document.getElementById("confidence-group");
    if (field === "notes") return notesEl;
    return field ? document.getElementById(field) : null;
  }

  function clearFieldError(target) {
    const box = target && (target.matches("fieldset") ? target : target.parentNode);
    if (!box) return;
    box.querySelectorAll(":scope > .field-error").forEach((el) => el.remove());
    target.classList.remove("is-invalid");
    target.removeAttribute("aria-invalid");
  }

  function showFieldError(field, message) {
    const target = fieldTarget(field);
    if (!target) return false;
    clearFieldError(target);
    const note = document.createElement("div");
    note.className = "field-error invalid-feedback d-block fw-semibold";
    note.id = "error-" + (target.id || field);
    note.setAttribute("role", "alert");
    note.textContent = message;
    if (target.matches("fieldset")) {
      const legend = target.querySelector("legend");
      legend.parentNode.insertBefore(note, legend.nextSibling);
    } else {
      target.parentNode.insertBefore(note, target.nextSibling);
    }
    target.classList.add("is-invalid");
    target.setAttribute("aria-invalid", "true");
    target.setAttribute("aria-describedby", note.id);
    const clear = () => { clearFieldError(target); target.removeEventListener("change", clear); target.removeEventListener("input", clear); };
    target.addEventListener("change", clear);
    target.addEventListener("input", clear);
    target.scrollIntoView({ block: "center" });
    target.focus({ preventScroll: true });
    return true;
  }

  const CONFIDENCE_MISSING = "Choose your confidence (Low, Medium or High) before submitting.";
  const REASON_MISSING = "Give the reason for your decision.";

  // What the server would refuse and the page can see: checked before anything is sent.
  function checkBeforeSubmit() {
    if (mode === "adjudicate" && notesEl && !notesEl.value.trim()) {
      showFieldError("notes", REASON_MISSING);
      setStatus("Not recorded: give the reason.", true);
      return false;
    }
    if (!["rate", "practice"].includes(mode)) return true;
    const missing = missingFieldsets();
    if (missing.length) {
      const names = missing.map((fs) => {
        const card = fs.closest(".response-card");
        const name = (byKey[fs.dataset.dim] || {}).name || fs.dataset.dim;
        return card ? "Response " + card.dataset.shown + ": " + name : name;
      });
      showFieldError(missing[0].id, "Answer this before submitting. Missing: " + names.join("; ") + ".");
      setStatus("Not submitted: " + names.length + " required answer" + (names.length === 1 ? "" : "s") + " missing (your draft is kept).", true);
      return false;
    }
    const radios = form.querySelectorAll("input[name=confidence]");
    if (radios.length && !form.querySelector("input[name=confidence]:checked")) {
      showFieldError("confidence", CONFIDENCE_MISSING);
      setStatus("Not submitted: choose your confidence.", true);
      return false;
    }
    return true;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // A double click sends one request; the server would also treat a repeat as the same.
    if (submitting || preparing || readonly) return;
    if (!checkBeforeSubmit()) return;
    clearTimeout(saveTimer);
    if (saves) { submitAfterSave(); return; }
    submitNow();
  });

  // A refusal from the server names its field: shown there, and the top message links to it.
  const formError = document.getElementById("form-error");
  if (formError && formError.dataset.field) {
    const message = formError.querySelector("[data-message]").textContent;
    if (showFieldError(formError.dataset.field, message)) {
      const link = formError.querySelector("[data-go-to-field]");
      link.hidden = false;
      link.addEventListener("click", () => showFieldError(formError.dataset.field, message));
    }
  }

  const replaceSaved = document.querySelector("[data-replace-saved]");
  if (replaceSaved) {
    replaceSaved.addEventListener("click", () => {
      versionInput.value = form.dataset.currentVersion;
      stale = false;
      submitNow();
    });
  }

  // ---- Changes --------------------------------------------------------------------------

  function changed(event) {
    if (event && event.target && event.target.matches && event.target.matches("[data-flag]")) {
      const fieldset = event.target.closest("fieldset.dimension");
      showFlag(fieldset);
      if (event.type === "change" && event.target.checked) fieldset.querySelector("[data-flag-note]").focus();
    }
    updateScores();
    if (readonly) return;
    if (saves) {
      local.write(readPayload());
      if (!stale && !signedOut && !held) { setStatus("Unsaved changes"); scheduleSave(); }
    } else if (mode === "practice") {
      local.write(readPayload());
    }
  }

  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.querySelectorAll("fieldset.dimension").forEach((fs) => {
    kindOf(fs).init(fs, byKey[fs.dataset.dim], changed);
  });
  const saveButton = document.getElementById("save-draft");
  if (saveButton) saveButton.addEventListener("click", () => { clearTimeout(saveTimer); saveDraft(); });

  // ---- Active time: visible, focused and not idle for five minutes ------------------------

  let activeSeconds = 0;
  let lastActivity = Date.now();
  ["keydown", "pointerdown", "pointermove", "wheel", "touchstart", "scroll"].forEach((type) => {
    document.addEventListener(type, () => { lastActivity = Date.now(); }, { passive: true, capture: true });
  });
  setInterval(() => {
    if (document.visibilityState === "visible" && document.hasFocus() && Date.now() - lastActivity < IDLE_MS) {
      activeSeconds += 1;
    }
  }, 1000);

  // ---- Starting up: the server's draft, then any newer copy from this browser -------------

  restore(serverDraft);
  if (saves) {
    lastSaved = JSON.stringify(readPayload());
    const saved = local.read();
    if (stale) {
      // Re-shown after a refused submit: the answers on the page are this tab's; keep a copy.
      local.write(readPayload());
    } else if (saved && saved.payload && !readonly) {
      restore(saved.payload);
      const localText = JSON.stringify(readPayload());
      restore(serverDraft);
      if (localText === lastSaved) {
        local.clear();
      } else if (saved.version === currentVersion()) {
        // Nothing was saved since this copy was made: it is simply newer. Use it.
        restore(saved.payload);
        setStatus("Unsaved changes");
        scheduleSave(300);
        showAlert("restored-alert", "info",
          "Restored your answers from " + clock(saved.at) + " that had not been saved yet.",
          [{ label: "Discard them", onClick: () => { restore(serverDraft); local.clear(); removeAlert("restored-alert"); lastSaved = JSON.stringify(readPayload()); setStatus("Saved"); } }]);
      } else {
        showAlert("restored-alert", "warning",
          "This browser has answers to this case from " + clock(saved.at) +
          " that were not saved, and the case has been saved since (in another tab or on another device).",
          [
            { label: "Use the answers from this browser", primary: true, onClick: () => { restore(saved.payload); removeAlert("restored-alert"); changed(); } },
            { label: "Keep the saved version", onClick: () => { local.clear(); removeAlert("restored-alert"); } },
          ]);
      }
    }
    window.addEventListener("online", () => { if (unsaved()) saveDraft(); });
    window.addEventListener("focus", () => { if (signedOut || unsaved()) saveDraft(); });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden" && unsaved()) { clearTimeout(saveTimer); saveDraft({ keepalive: true }); }
    });
    if ("BroadcastChannel" in window && localKey) {
      // Two tabs on one case: say so early, before one of them is refused.
      const channel = new BroadcastChannel("concord-tabs");
      const me = Math.random().toString(36).slice(2);
      channel.onmessage = (event) => {
        const data = event.data || {};
        if (data.key !== localKey || data.from === me) return;
        if (data.type === "hello") channel.postMessage({ type: "here", key: localKey, from: me });
        showAlert("tab-alert", "info",
          "This case is also open in another tab. Work in one of them: a save from an older version is refused.");
      };
      channel.postMessage({ type: "hello", key: localKey, from: me });
    }
  } else if (mode === "practice") {
    const saved = local.read();
    if (saved && saved.payload) restore(saved.payload);
    const reset = document.getElementById("practice-reset");
    if (reset) reset.addEventListener("click", () => { local.clear(); restore({}); });
  }

  if (readonly) {
    // The answers are locked; how the responses are laid out (a choice of view) is not.
    form.querySelectorAll("input:not([name=response-layout]), textarea, button:not([data-bs-toggle])")
      .forEach((el) => { el.disabled = true; });
  }

  // ---- Keyboard -------------------------------------------------------------------------

  let currentDimension = null;
  form.addEventListener("focusin", (event) => {
    const fieldset = event.target.closest("fieldset.dimension");
    if (fieldset) currentDimension = fieldset;
  });

  function isTyping(el) {
    if (!el || !el.matches) return false;
    if (el.isContentEditable || el.matches("textarea, select")) return true;
    return el.matches("input") && !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(el.type);
  }

  function focusDimension(fieldset) {
    if (!fieldset) return;
    currentDimension = fieldset;
    fieldset.focus();
  }

  function moveDimension(step) {
    const all = Array.from(form.querySelectorAll("fieldset.dimension"));
    const index = all.indexOf(currentDimension);
    const next = index === -1 ? (step > 0 ? all[0] : all[all.length - 1]) : all[index + step];
    focusDimension(next);
  }

  function overlay(id, kind) {
    const el = document.getElementById(id);
    if (el && window.bootstrap) window.bootstrap[kind].getOrCreateInstance(el).show();
  }

  function removeEmptyItem(input) {
    const row = input.closest(".item-row");
    const previous = row.previousElementSibling;
    row.querySelector("[data-remove-item]").click();
    if (previous) previous.querySelector("[data-item-text]").focus();
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const overlayOpen = document.querySelector(".modal.show, .offcanvas.show");
    if (event.ctrlKey || event.metaKey) {
      if (event.altKey || overlayOpen) return;
      if (event.key === "Enter" && submitButton && !submitButton.disabled) {
        event.preventDefault();
        form.requestSubmit(submitButton);
      } else if ((event.key === "s" || event.key === "S") && saves) {
        event.preventDefault();
        clearTimeout(saveTimer);
        saveDraft();
      }
      return;
    }
    if (event.altKey) return;
    if (isTyping(target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        const fieldset = target.closest("fieldset.dimension");
        if (fieldset) focusDimension(fieldset); else target.blur();
      } else if (event.key === "Enter" && target.matches("input") && form.contains(target)) {
        event.preventDefault(); // Enter in a text box never submits the form
      } else if (event.key === "Backspace" && target.matches("[data-item-text]") && target.value === "") {
        event.preventDefault();
        removeEmptyItem(target);
      }
      return;
    }
    if (overlayOpen) {
      // Escape closes the sheet even before focus has moved into it.
      if (event.key === "Escape" && window.bootstrap) {
        const kind = overlayOpen.classList.contains("modal") ? "Modal" : "Offcanvas";
        window.bootstrap[kind].getOrCreateInstance(overlayOpen).hide();
      }
      return;
    }
    const key = event.key;
    if (key === "?") overlay("shortcuts", "Modal");
    else if (key === "i") overlay("help", "Offcanvas");
    else if (key === "p") { const prompt = document.getElementById("prompt"); if (prompt) prompt.focus(); else return; }
    else if (key === "j") moveDimension(1);
    else if (key === "k") moveDimension(-1);
    else if ((key === "+" || key === "=") && currentDimension && currentDimension.querySelector("[data-add-item]")) {
      currentDimension.querySelector("[data-add-item]").click();
    } else if (key === "f" && currentDimension && currentDimension.querySelector("[data-flag]") && !readonly) {
      const box = currentDimension.querySelector("[data-flag]");
      box.checked = !box.checked;
      showFlag(currentDimension);
      // Focus stays on the dimension, so that j and k go on moving (not typed into the
      // note); Shift+F is the way into the note.
      changed();
    } else if (key === "F" && currentDimension && currentDimension.querySelector("[data-flag]") && !readonly) {
      currentDimension.querySelector("[data-flag]").checked = true;
      showFlag(currentDimension);
      currentDimension.querySelector("[data-flag-note]").focus();
      changed();
    } else if (/^[0-9]$/.test(key) && !readonly && currentDimension &&
               currentDimension.contains(document.activeElement) &&
               currentDimension.querySelector("input[data-choice]")) {
      // A number on a dimension with options chooses one: a scale's by its value (4 is
      // "4 · Agree"), other options (categories, a preference) by their place from 1.
      const options = Array.from(currentDimension.querySelectorAll("input[data-choice]"));
      const byValue = options.every((o) => /^\d+$/.test(o.value));
      const option = byValue ? options.find((o) => o.value === key) : options[parseInt(key, 10) - 1];
      if (!option || option.disabled) return;
      option.click();
      option.focus();
    } else if (key === "c" && form.querySelector("input[name=confidence]")) {
      const group = document.getElementById("confidence-group");
      if (group) group.focus(); else return;
    } else if (key === "x" && document.getElementById("skip-case")) {
      const skip = document.getElementById("skip-case");
      skip.open = true;
      skip.querySelector("summary").focus();
      skip.scrollIntoView({ block: "nearest" });
    } else if (["1", "2", "3"].includes(key) && form.querySelector("input[name=confidence]") && !readonly) {
      const radio = form.querySelectorAll("input[name=confidence]")[parseInt(key, 10) - 1];
      radio.checked = true;
      radio.focus();
      changed();
    } else if (key === "n" && notesEl) notesEl.focus();
    else if (key === "u" && unresolvableEl && !readonly) {
      unresolvableEl.checked = !unresolvableEl.checked;
      unresolvableEl.focus();
      changed();
    }
    else if (/^[a-h]$/.test(key)) {
      const card = form.querySelector('.response-card[data-shown="' + key.toUpperCase() + '"]');
      if (!card) return;
      card.querySelector(".response-text").focus();
    } else return;
    event.preventDefault();
  });
})();
