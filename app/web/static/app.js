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
var SEAL_KEY = "bbsgm.seal.";
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.fill-command");
    if (!button) return;
    var sealed = button.getAttribute("data-target") === "sealed";
    var area = document.querySelector(sealed ? "#sealed textarea[name=body]" : "#reply textarea[name=body]");
    if (!area) {
      // The thread page has no sealed form: the game page has it, and finds the tapped line
      // there (kept for this tab only), so a newcomer need not tap it a second time.
      var panel = button.closest("[data-game]");
      if (!sealed || !panel) return;
      var game = panel.getAttribute("data-game");
      try { window.sessionStorage.setItem(SEAL_KEY + game, button.getAttribute("data-line")); } catch (e) { /* off */ }
      window.location.href = "/games/" + game + "#sealed";
      return;
    }
    addLine(area, button.getAttribute("data-line"));
  });
})();

// The game page's turn dock (#turn): a line added to a form there opens its fold and is said in
// the dock's status, without focusing the form (a phone would scroll and open its keyboard).
function addLine(area, line) {
  "use strict";
  area.value = area.value && !/\n$/.test(area.value) ? area.value + "\n" + line : area.value + line;
  var dock = area.closest("#turn");
  if (!dock) { area.focus(); return; }
  var fold = area.closest("details");
  if (fold) fold.open = true;
  area.dispatchEvent(new Event("input", { bubbles: true }));
  var status = dock.querySelector(".dock-status");
  var builders = dock.querySelector(".builders");
  if (status) status.textContent = (builders ? builders.getAttribute("data-added") + " " : "") + line;
}

// Builders of multi-part moves (templates/games/builders.html): every part comes from the page,
// which took it from the lines legal now; the script only puts the parts together.
(function () {
  "use strict";
  function areaOf(builder) {
    var target = builder.getAttribute("data-target") === "sealed" ? "#sealed" : "#reply";
    return document.querySelector(target + " textarea[name=body]");
  }

  function stepper(builder) {
    var combos = JSON.parse(builder.getAttribute("data-combos"));
    var steps = Array.prototype.slice.call(builder.querySelectorAll(".stepper"));
    var add = builder.querySelector(".builder-add");
    function values() {
      return steps.map(function (s) { return parseInt(s.querySelector(".step-value").textContent, 10); });
    }
    function update() {
      var now = values();
      var line = combos[now.join(",")];
      builder.querySelector(".step-sum").textContent = String(now.reduce(function (a, b) { return a + b; }, 0));
      builder.querySelector(".builder-line").textContent = line || "";
      builder.querySelector(".builder-illegal").hidden = Boolean(line);
      add.disabled = !line;
      steps.forEach(function (s) {
        var v = parseInt(s.querySelector(".step-value").textContent, 10);
        s.querySelector(".step-down").disabled = v <= parseInt(s.getAttribute("data-low"), 10);
        s.querySelector(".step-up").disabled = v >= parseInt(s.getAttribute("data-high"), 10);
      });
    }
    builder.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button || button.disabled) return;
      var step = button.closest(".stepper");
      if (step) {
        var out = step.querySelector(".step-value");
        out.textContent = String(parseInt(out.textContent, 10) + (button.classList.contains("step-up") ? 1 : -1));
        update();
      } else if (button.classList.contains("builder-add")) {
        var line = combos[values().join(",")];
        var area = areaOf(builder);
        if (line && area) addLine(area, line);
      }
    });
    update();
  }

  function cards(builder) {
    var verb = builder.getAttribute("data-verb");
    var most = parseInt(builder.getAttribute("data-most"), 10);
    var chosen = [];
    var add = builder.querySelector(".builder-add");
    function line() {
      var mark = builder.querySelector(".builder-mark input:checked");
      return chosen.length && mark ? [verb, mark.value].concat(chosen.map(function (b) { return b.getAttribute("data-card"); })).join(" ") : "";
    }
    function update() {
      builder.querySelector(".builder-line").textContent = line();
      add.disabled = !chosen.length;
      builder.querySelectorAll(".card-chip").forEach(function (chip) {
        var at = chosen.indexOf(chip);
        chip.setAttribute("aria-pressed", at >= 0 ? "true" : "false");
        chip.setAttribute("data-order", at >= 0 ? String(at + 1) : "");
        chip.disabled = at < 0 && chosen.length >= most;
      });
    }
    builder.addEventListener("change", update);
    builder.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button || button.disabled) return;
      if (button.classList.contains("card-chip")) {
        var at = chosen.indexOf(button);
        if (at >= 0) chosen.splice(at, 1); else if (chosen.length < most) chosen.push(button);
      } else if (button.classList.contains("builder-add")) {
        var area = areaOf(builder);
        if (area && chosen.length) addLine(area, line());
        chosen = [];
      } else if (button.classList.contains("builder-reset")) {
        chosen = [];
      }
      update();
    });
    update();
  }

  function chain(builder) {
    var src = builder.getAttribute("data-src");
    var first = builder.querySelector(".chain-next").innerHTML;
    var chosen = [];
    var list = builder.querySelector(".chain-chosen");
    builder.addEventListener("click", function (event) {
      var button = event.target.closest("button");
      if (!button || button.disabled) return;
      if (button.classList.contains("builder-reset")) {
        chosen = [];
        list.textContent = "";
        builder.querySelector(".chain-next").innerHTML = first;
        return;
      }
      if (!button.classList.contains("chain-line")) return;
      var line = button.getAttribute("data-line");
      var area = areaOf(builder);
      if (!area) return;
      chosen.push(line);
      addLine(area, line);
      var item = document.createElement("li");
      item.textContent = line;
      list.appendChild(item);
      builder.querySelectorAll(".chain-line").forEach(function (b) { b.disabled = true; });
      var query = chosen.map(function (l) { return "line=" + encodeURIComponent(l); }).join("&");
      fetch(src + "?" + query, { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var next = builder.querySelector(".chain-next");
          next.innerHTML = html;  // server-rendered, escaped by Jinja
          builder.setAttribute("data-steps", String(chosen.length));
        })
        .catch(function () {});
    });
  }

  function wire(root) {
    root.querySelectorAll(".builder").forEach(function (builder) {
      if (builder.classList.contains("builder-stepper")) stepper(builder);
      else if (builder.classList.contains("builder-cards")) cards(builder);
      else if (builder.classList.contains("builder-chain")) chain(builder);
      builder.hidden = false;
    });
  }
  wire(document);

  // After live.js refreshed the panel: the builders for the lines legal now, from the server.
  document.addEventListener("bbsgm:panel", function (event) {
    var slot = document.getElementById("builders-slot");
    if (!slot || !event.detail || !event.detail.game) return;
    fetch("/games/" + event.detail.game + "/builders", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("builders-slot");
        var current = document.getElementById("builders-slot");
        if (!fresh || !current) return;
        var node = document.importNode(fresh, true);
        current.replaceWith(node);
        wire(node);
      })
      .catch(function () {});
  });

  // The dock's 消す: empties the post form (shown once there is something to empty).
  var clear = document.querySelector("#turn .clear-body");
  var body = document.querySelector("#turn #reply textarea[name=body]");
  if (clear && body) {
    var shown = function () { clear.hidden = !body.value; };
    body.addEventListener("input", shown);
    clear.addEventListener("click", function () { body.value = ""; shown(); });
    shown();
  }
})();

// The dock's folds are remembered on this device (localStorage): a player who folded the post
// form, the sealed form or the builders finds them as they left them on the next game page —
// unless the page opens a fold to show something in it (a refusal of this form, a preview).
(function () {
  "use strict";
  var dock = document.getElementById("turn");
  var store = null;
  try { store = window.localStorage; } catch (e) { store = null; }
  if (!dock || !store) return;
  Array.prototype.forEach.call(dock.querySelectorAll("details.dock-part"), function (fold) {
    var name = fold.id || (fold.classList.contains("dock-builders") ? "builders" : "");
    if (!name) return;
    var key = "bbsgm.dock." + name;
    var saved = null;
    try { saved = store.getItem(key); } catch (e) { saved = null; }
    if (saved && !fold.querySelector(".form-error, .preview")) fold.open = saved === "open";
    // Only a change is remembered: Chromium also fires "toggle" for a fold the page rendered
    // open, which would otherwise store every fold the server opened as the player's choice.
    var was = fold.open;
    fold.addEventListener("toggle", function () {
      if (fold.open === was) return;
      was = fold.open;
      try { store.setItem(key, fold.open ? "open" : "closed"); } catch (e) { /* full or off */ }
    });
  });
})();

// A sealed line tapped on the thread page (above) arrives in the game page's sealed form.
(function () {
  "use strict";
  var panel = document.querySelector("#game[data-game]");
  var area = document.querySelector("#sealed textarea[name=body]");
  if (!panel || !area) return;
  var key = SEAL_KEY + panel.getAttribute("data-game");
  var line = null;
  try { line = window.sessionStorage.getItem(key); window.sessionStorage.removeItem(key); } catch (e) { line = null; }
  if (line) addLine(area, line);
})();

// After a post (or a sealed command taken) from the game page, the answer is the page at
// #thread-latest (#sealed): the newest post (the bot's answer) is shown, not the oldest of the
// recent ones or the dock's form, and on a phone above the dock that covers the bottom of the
// screen — its end when it fits, else its start. A refused sealed command is no redirect.
(function () {
  "use strict";
  var section = document.getElementById("thread-latest");
  var dock = document.getElementById("turn");
  var landing = window.location.hash;
  if (!section || !dock || (landing !== "#thread-latest" && landing !== "#sealed")) return;
  if (dock.querySelector(".form-error")) return;
  function show() {
    var posts = section.querySelectorAll("article.post");
    var newest = posts[posts.length - 1];
    if (!newest || window.location.hash !== landing) return;
    var bar = document.querySelector(".game-jump");
    var top = bar ? bar.getBoundingClientRect().bottom : 0;
    var bottom = Math.min(dock.getBoundingClientRect().top, window.innerHeight);
    var box = newest.getBoundingClientRect();
    window.scrollBy(0, box.height > bottom - top ? box.top - top : box.bottom - bottom + 4);
  }
  // After the board's picture has taken its room and the browser has gone to the fragment;
  // again while the posts' own (lazy) board pictures load and push the newest one down,
  // until the reader scrolls or taps themselves.
  var reader = false;
  ["wheel", "touchstart", "pointerdown", "keydown"].forEach(function (name) {
    window.addEventListener(name, function () { reader = true; }, { once: true, passive: true });
  });
  function start() {
    window.requestAnimationFrame(show);
    if (!window.ResizeObserver) return;
    new ResizeObserver(function () { if (!reader) show(); }).observe(section);
  }
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
