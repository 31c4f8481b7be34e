/* xlakb: filter the records table (home page) or the coverage heat map by status, component, tag and source.
 * The filters are mirrored in the address (?status=fixed&tag=spmd) so a filtered
 * view can be linked to. */
(function () {
  "use strict";

  function setup() {
    var form = document.querySelector(".xlakb-filters");
    var table = document.querySelector("table.xlakb-records");
    if (!form || !table) return;
    var selects = Array.prototype.slice.call(form.querySelectorAll("select.xlakb-filter"));
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var count = form.querySelector(".xlakb-count-n");
    var params = new URLSearchParams(window.location.search);

    selects.forEach(function (select) {
      var wanted = params.get(select.dataset.filter);
      if (wanted && select.querySelector('option[value="' + CSS.escape(wanted) + '"]')) {
        select.value = wanted;
      }
    });

    function apply() {
      var want = {};
      selects.forEach(function (s) { want[s.dataset.filter] = s.value; });
      var shown = 0;
      rows.forEach(function (row) {
        var ok = row.dataset.id ?
          (!want.status || row.dataset.status === want.status) &&
          (!want.component || row.dataset.component === want.component) &&
          (!want.source || row.dataset.source === want.source) &&
          (!want.tag || row.dataset.tags.indexOf(" " + want.tag + " ") !== -1) :
          (!want.component || row.dataset.component === want.component);  // a group heading (coverage)
        row.hidden = !ok;
        if (ok && row.dataset.id) shown += 1;  // group headings (coverage) are not records
      });
      if (count) {
        count.textContent = String(shown);
        var word = count.parentNode.querySelector(".xlakb-count-word");
        if (word) word.textContent = shown === 1 ? count.parentNode.dataset.one : count.parentNode.dataset.many;
      }
      var query = new URLSearchParams();
      Object.keys(want).forEach(function (k) { if (want[k]) query.set(k, want[k]); });
      var search = query.toString();
      var url = window.location.pathname + (search ? "?" + search : "") + window.location.hash;
      window.history.replaceState(null, "", url);
    }

    selects.forEach(function (s) { s.addEventListener("change", apply); });
    apply();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
