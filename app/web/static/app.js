// Progressive enhancement only: every page works without this file.
// >>N anchors: hovering (or focusing) shows the target post in a small popup.
(function () {
  "use strict";
  var popup = null;

  function hide() {
    if (popup) { popup.remove(); popup = null; }
  }

  function show(anchor, node) {
    hide();
    popup = document.createElement("div");
    popup.className = "anchor-preview";
    popup.setAttribute("role", "tooltip");
    popup.appendChild(node);
    document.body.appendChild(popup);
    var rect = anchor.getBoundingClientRect();
    popup.style.left = Math.max(4, rect.left + window.scrollX) + "px";
    popup.style.top = (rect.bottom + window.scrollY + 4) + "px";
  }

  function fromPage(number) {
    var post = document.getElementById(String(number));
    return post && post.classList.contains("post") ? post.cloneNode(true) : null;
  }

  function fromApi(threadId, number, anchor) {
    fetch("/api/threads/" + threadId + "?after=" + (number - 1) + "&limit=1")
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data || !data.posts.length || data.posts[0].number !== number) return;
        var p = data.posts[0];
        var box = document.createElement("div");
        var meta = document.createElement("div");
        meta.className = "post-meta";
        meta.textContent = p.number + " " + p.author;
        var body = document.createElement("div");
        body.className = "post-body";
        body.textContent = p.body;  // plain text: never parsed as HTML
        box.appendChild(meta);
        box.appendChild(body);
        if (anchor.matches(":hover") || document.activeElement === anchor) show(anchor, box);
      })
      .catch(function () {});
  }

  function onEnter(event) {
    var anchor = event.target.closest && event.target.closest("a.anchor");
    if (!anchor) return;
    var number = parseInt(anchor.getAttribute("data-anchor"), 10);
    var container = document.querySelector(".posts[data-thread]");
    if (!number || !container) return;
    var node = fromPage(number);
    if (node) { node.removeAttribute("id"); show(anchor, node); }
    else fromApi(container.getAttribute("data-thread"), number, anchor);
  }

  function onLeave(event) {
    if (event.target.closest && event.target.closest("a.anchor")) hide();
  }

  document.addEventListener("mouseover", onEnter);
  document.addEventListener("focusin", onEnter);
  document.addEventListener("mouseout", onLeave);
  document.addEventListener("focusout", onLeave);
})();

// Legal command buttons: add the line to the post form's textarea (a sealed line: to the
// sealed form's).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.fill-command");
    if (!button) return;
    var sealed = button.getAttribute("data-target") === "sealed";
    var area = document.querySelector(sealed ? "#sealed textarea[name=body]" : "#reply textarea[name=body]");
    if (!area) {
      // The thread page has no sealed form: the game page has it.
      var panel = button.closest("[data-game]");
      if (sealed && panel) window.location.href = "/games/" + panel.getAttribute("data-game") + "#sealed";
      return;
    }
    var line = button.getAttribute("data-line");
    area.value = area.value && !/\n$/.test(area.value) ? area.value + "\n" + line : area.value + line;
    area.focus();
  });
})();
