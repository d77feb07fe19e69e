// Rubric preview: the rating page as raters see it, but its draft saves are answered here
// instead of reaching the server: accepted as they would be (so Submit goes on to the
// server's check, as on the real screen) and marked as a preview, so nothing says "saved".
// Loaded before rating.js.
(function () {
  "use strict";
  const realFetch = window.fetch.bind(window);
  window.fetch = function (url, options) {
    const form = document.getElementById("rating-form");
    if (form && url === form.dataset.draftUrl) {
      let version = 0;
      try { version = JSON.parse(options.body).version || 0; } catch (err) { /* keep 0 */ }
      const body = JSON.stringify({ version: version, preview: "this is a preview; nothing is saved." });
      return Promise.resolve(new Response(body, { status: 200, headers: { "Content-Type": "application/json" } }));
    }
    return realFetch(url, options);
  };
})();
