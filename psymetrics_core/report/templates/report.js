(function () {
  "use strict";
  var input = document.getElementById("sample-search");
  var table = document.getElementById("sample-table");
  var count = document.getElementById("sample-count");
  if (!input || !table || !count) { return; }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  input.addEventListener("input", function () {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (r, i) {
      var ok = words.every(function (w) { return texts[i].indexOf(w) !== -1; });
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " shown";
  });
})();
