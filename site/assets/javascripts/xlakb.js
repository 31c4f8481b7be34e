/* xlakb: filter the records table (home page) or the coverage heat map by status, component, tag and source;
 * its release cells: one tab stop per table, a cell's detail on a tap.
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
      table.dispatchEvent(new CustomEvent("xlakb:filtered"));
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

  /* The release cells of a table (the home table's strips, the heat map): one tab stop for the whole table, not one
   * per cell (a roving tabindex: the arrow keys move between cells, Home and End to a row's ends), and a cell's
   * detail shown on a tap, a click, Enter or Space, not on hover only. */
  function cells(table) {
    var rows = Array.prototype.filter.call(table.querySelectorAll("tbody tr"), function (r) { return !r.hidden; });
    return rows.map(function (r) { return Array.prototype.slice.call(r.querySelectorAll(".xlakb-heat")); })
      .filter(function (row) { return row.length; });
  }

  function roving(table) {
    var all = table.querySelectorAll(".xlakb-heat");
    if (!all.length) return;
    Array.prototype.forEach.call(all, function (c) { c.tabIndex = -1; });

    function current() {
      var grid = cells(table);
      if (!grid.length) return null;
      var on = table.querySelector('.xlakb-heat[tabindex="0"]');
      if (on && !on.closest("tr").hidden) return on;
      grid[0][0].tabIndex = 0;
      if (on && on !== grid[0][0]) on.tabIndex = -1;
      return grid[0][0];
    }
    current();

    function open(cell) {
      Array.prototype.forEach.call(table.querySelectorAll(".xlakb-heat.xlakb-open"), function (c) {
        if (c !== cell) c.classList.remove("xlakb-open");
      });
      if (cell) cell.classList.toggle("xlakb-open");
    }

    function move(cell) {
      var on = table.querySelector('.xlakb-heat[tabindex="0"]');
      if (on) on.tabIndex = -1;
      cell.tabIndex = 0;
      cell.focus();
    }

    table.addEventListener("click", function (ev) {
      var cell = ev.target.closest(".xlakb-heat");
      if (!cell || ev.target.closest("a")) return;
      move(cell);
      open(cell);
    });
    table.addEventListener("focusout", function (ev) {
      if (!table.contains(ev.relatedTarget)) open(null);
    });
    table.addEventListener("keydown", function (ev) {
      var cell = ev.target.closest && ev.target.closest(".xlakb-heat");
      if (!cell) return;
      var grid = cells(table), r = -1, c = -1;
      grid.forEach(function (row, i) { var j = row.indexOf(cell); if (j !== -1) { r = i; c = j; } });
      if (r === -1) return;
      var to = null;
      if (ev.key === "ArrowRight") to = grid[r][c + 1];
      else if (ev.key === "ArrowLeft") to = grid[r][c - 1];
      else if (ev.key === "ArrowDown") to = grid[r + 1] && grid[r + 1][Math.min(c, grid[r + 1].length - 1)];
      else if (ev.key === "ArrowUp") to = grid[r - 1] && grid[r - 1][Math.min(c, grid[r - 1].length - 1)];
      else if (ev.key === "Home") to = grid[r][0];
      else if (ev.key === "End") to = grid[r][grid[r].length - 1];
      else if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(cell); return; }
      else if (ev.key === "Escape") { open(null); return; }
      else return;
      ev.preventDefault();
      if (to) { open(null); move(to); }
    });
    // a filter hid the row of the cell that was the tab stop: the first cell shown takes its place
    table.addEventListener("xlakb:filtered", current);
  }

  function setupCells() {
    Array.prototype.forEach.call(document.querySelectorAll("table.xlakb-records"), roving);
  }

  function start() {
    setup();
    setupCells();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
