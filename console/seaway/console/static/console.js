// Seaway console: the little the pages need beyond HTML forms and htmx (no inline script: the CSP forbids it).
(function () {
  "use strict";
  // A form or button with data-confirm asks first (deletes, offset resets, stops).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    var text = (button && button.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
    if (text && !window.confirm(text)) {
      event.preventDefault();
    }
  }, true);
  // "/" focuses the page's search box, as in most consoles; Escape leaves it.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT");
    if (event.key === "/" && !typing) {
      var search = document.querySelector("input[type=search]");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
    } else if (event.key === "Escape" && typing) {
      target.blur();
    }
  });
  // The connector form: remember which fields the user changed, so the live validation only
  // reports errors of fields touched (a new form does not open covered in "missing" errors).
  document.addEventListener("change", function (event) {
    var field = event.target;
    var form = field && field.form;
    if (!form || !form.hasAttribute("data-track-touched") || !field.name || field.name.indexOf("cfg.") !== 0) {
      return;
    }
    var name = field.name.slice(4);
    if (!form.querySelector('input[name="touched"][value="' + CSS.escape(name) + '"]')) {
      var marker = document.createElement("input");
      marker.type = "hidden";
      marker.name = "touched";
      marker.value = name;
      form.appendChild(marker);
    }
  }, true);
})();
