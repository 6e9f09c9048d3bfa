// The replay page (templates/archive/replay.html), progressively: without this file every
// control is a plain link or GET form. With it, moving through the game swaps only the
// #replay block (the URL still changes, so ?at=N stays linkable), the slider moves as it is
// dragged, and the keyboard works: ← → one move, Home / End the first and last.
(function () {
  "use strict";
  if (!document.getElementById("replay")) return;
  var loading = null;

  function replaceFrom(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.getElementById("replay");
    var current = document.getElementById("replay");
    if (!fresh || !current) return false;
    var focused = document.activeElement && document.activeElement.id;
    current.replaceWith(fresh);
    if (focused === "replay-at") document.getElementById("replay-at").focus();
    document.title = doc.title;
    var mark = fresh.querySelector(".replay-move-list .current");
    if (mark && mark.scrollIntoView) mark.scrollIntoView({ block: "nearest" });
    return true;
  }

  function go(url, push) {
    if (loading) loading.abort();
    var controller = window.AbortController ? new AbortController() : null;
    loading = controller;
    fetch(url, { headers: { Accept: "text/html" }, signal: controller ? controller.signal : undefined })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.text();
      })
      .then(function (html) {
        if (!replaceFrom(html)) { window.location.href = url; return; }
        if (push) window.history.pushState({ replay: true }, "", url);
      })
      .catch(function (error) {
        if (error && error.name === "AbortError") return;
        window.location.href = url;
      });
  }

  function formUrl(form) {
    var params = new URLSearchParams(new FormData(form));
    return form.getAttribute("action") + "?" + params.toString();
  }

  function follow(selector) {
    var link = document.querySelector("#replay " + selector);
    if (link && link.tagName === "A") go(link.href, true);
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("#replay .replay-nav a, #replay .replay-move-list a");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(link.href, true);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target.closest && event.target.closest("#replay form");
    if (!form) return;
    event.preventDefault();
    go(formUrl(form), true);
  });

  document.addEventListener("input", function (event) {
    if (event.target.id !== "replay-at") return;
    var label = document.getElementById("replay-at-label");
    if (label) label.textContent = event.target.value + " / " + event.target.max;
  });

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.id === "replay-at" || (target.name === "viewer" && target.closest("#replay form"))) {
      go(formUrl(target.form), true);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.target.isContentEditable) return;
    var selector = {
      ArrowLeft: ".replay-prev",
      ArrowRight: ".replay-next",
      Home: ".replay-first",
      End: ".replay-last"
    }[event.key];
    if (!selector) return;
    event.preventDefault();
    follow(selector);
  });

  window.addEventListener("popstate", function () {
    go(window.location.href, false);
  });
})();
