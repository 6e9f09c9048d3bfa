// Live threads (progressive): new posts arrive over Server-Sent Events and are appended; the
// game panel is refreshed after a bot reply. Without JavaScript the pages work as before.
(function () {
  "use strict";
  var container = document.querySelector("[data-live-thread]");
  if (!container || !window.EventSource) return;
  var threadId = container.getAttribute("data-live-thread");
  var last = parseInt(container.getAttribute("data-last") || "0", 10);
  var panel = document.getElementById("game");
  var gameId = panel ? panel.getAttribute("data-game") : null;
  var source = new EventSource("/threads/" + threadId + "/events?after=" + last);

  function refreshPanel() {
    if (!gameId) return;
    fetch("/games/" + gameId + "/panel", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("game");
        var current = document.getElementById("game");
        if (fresh && current) current.replaceWith(document.importNode(fresh, true));
        // The lines legal now changed: the game page's builders follow (app.js).
        document.dispatchEvent(new CustomEvent("bbsgm:panel", { detail: { game: gameId } }));
      })
      .catch(function () {});
  }

  source.addEventListener("post", function (event) {
    var post = JSON.parse(event.data);
    if (post.number <= last || document.getElementById(String(post.number))) return;
    last = post.number;
    // Server-rendered, escaped HTML from our own origin (includes/post.html).
    var doc = new DOMParser().parseFromString(post.html, "text/html");
    var article = doc.querySelector("article.post");
    if (!article) return;
    article.classList.add("live-new");
    container.appendChild(document.importNode(article, true));
    var count = document.querySelector(".thread-title .count");
    if (count) count.textContent = "(" + post.number + ")";
    if (post.kind === "gm") refreshPanel();
  });
})();
