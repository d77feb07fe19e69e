// Forms marked data-confirm="question" ask before they submit (no inline handlers: the
// Content-Security-Policy allows scripts from files only).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
