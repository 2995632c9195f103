// Search of the index page: by key, by text (citing sentences, method, rule) and by section.
// Plain JavaScript read from this folder; it filters the rows already on the page, so it
// works from disk (file://) without a server or the network. index.html?key=K&text=T&section=S
// opens with those filters.
(function () {
  "use strict";
  var key = document.getElementById("q-key");
  var text = document.getElementById("q-text");
  var section = document.getElementById("q-section");
  var count = document.getElementById("q-count");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#entries tbody tr"));

  function words(value) {
    return value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
  }

  function matches(row, keyWords, textWords, wanted) {
    var rowKey = row.getAttribute("data-key");
    var rowText = row.getAttribute("data-text");
    var sections = row.getAttribute("data-sections").split("|");
    if (wanted && sections.indexOf(wanted) < 0) { return false; }
    for (var i = 0; i < keyWords.length; i++) {
      if (rowKey.indexOf(keyWords[i]) < 0) { return false; }
    }
    for (var j = 0; j < textWords.length; j++) {
      if (rowText.indexOf(textWords[j]) < 0) { return false; }
    }
    return true;
  }

  function apply() {
    var keyWords = words(key.value);
    var textWords = words(text.value);
    var shown = 0;
    rows.forEach(function (row) {
      var ok = matches(row, keyWords, textWords, section.value);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " numbers";
  }

  var params = new URLSearchParams(window.location.search);
  key.value = params.get("key") || "";
  text.value = params.get("text") || "";
  section.value = params.get("section") || "";
  [key, text].forEach(function (el) { el.addEventListener("input", apply); });
  section.addEventListener("change", apply);
  apply();
}());
