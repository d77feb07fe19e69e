// A page that answers a form with something shown once (a new API token): reloading it must
// not send the form again (a second token). Replacing the history entry turns a reload into
// a plain GET of the same address, which shows the list without the secret.
(function () {
  "use strict";
  if (window.history && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.href);
  }
})();
