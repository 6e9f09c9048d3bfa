// Progressive enhancement only: /games/new works without this file (every kind's options are
// shown, and only the chosen kind's are read). With it, only the chosen kind's fieldset shows;
// the others are hidden and disabled, so their inputs are not sent either.
(function () {
  "use strict";

  function enhance(form) {
    var select = form.querySelector("select[name=kind]");
    if (!select) return;
    var fieldsets = form.querySelectorAll("fieldset[data-kind]");
    function update() {
      for (var i = 0; i < fieldsets.length; i++) {
        var other = fieldsets[i].getAttribute("data-kind") !== select.value;
        fieldsets[i].hidden = other;
        fieldsets[i].disabled = other;
      }
    }
    select.addEventListener("change", update);
    update();
  }

  function start() {
    var forms = document.querySelectorAll("form[data-new-game]");
    for (var i = 0; i < forms.length; i++) enhance(forms[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
