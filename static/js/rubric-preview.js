// Rubric preview: the rating page as raters see it, but its draft saves are answered here
// with "not saved" instead of reaching the server. Loaded before rating.js.
(function () {
  "use strict";
  const realFetch = window.fetch.bind(window);
  window.fetch = function (url, options) {
    const form = document.getElementById("rating-form");
    if (form && url === form.dataset.draftUrl) {
      const body = JSON.stringify({ error: "this is a preview; nothing is saved." });
      return Promise.resolve(new Response(body, { status: 403, headers: { "Content-Type": "application/json" } }));
    }
    return realFetch(url, options);
  };
})();
