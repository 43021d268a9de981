/* Sort and filter the site's long tables (div.gpukb-catalog > table: the dataset catalogs, the errata summary), in
 * the page, with no request anywhere.
 *
 * The table is plain HTML rendered from the catalog files when the site is built (gpukb.datasets.pages); without
 * JavaScript it is simply a full table. With it, a text box filters rows by any text they contain, a menu keeps one
 * verification status, and a click (or Enter) on a column header sorts by that column; numeric columns sort by value
 * (cells carry data-sort), and rows without a value go last either way.
 */
(function () {
  "use strict";

  function sortKey(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (!numeric) {
      return raw.toLowerCase();
    }
    var number = parseFloat(raw);
    return cell.hasAttribute("data-sort") && !isNaN(number) ? number : null;
  }

  function setup(container) {
    if (container.getAttribute("data-ready") === "1") {
      return;
    }
    container.setAttribute("data-ready", "1");
    var table = container.querySelector("table");
    if (!table || !table.tBodies.length) {
      return;
    }
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);

    var controls = document.createElement("div");
    controls.className = "gpukb-catalog-controls";
    controls.style.cssText = "display:flex;flex-wrap:wrap;gap:0.6em;align-items:center;margin:0.6em 0";
    var filter = document.createElement("input");
    filter.type = "search";
    filter.className = "gpukb-catalog-filter";
    filter.placeholder = container.getAttribute("data-placeholder") || "Filter: name, task, access, any text";
    filter.setAttribute("aria-label", "Filter the table");
    filter.style.cssText = "flex:1 1 16em;padding:0.3em 0.5em;border:1px solid currentColor;border-radius:0.2em;" +
      "background:transparent;color:inherit;font:inherit";
    var status = document.createElement("select");
    status.className = "gpukb-catalog-status";
    // The menu keeps the rows of one data-status: a catalog's verdicts, or what the container lists in data-menu
    // (JSON [[value, label], ...], the first the "any" choice), e.g. the chapters of the errata summary.
    var menu = container.hasAttribute("data-menu") ? JSON.parse(container.getAttribute("data-menu")) :
      [["", "any status"], ["verified", "verified"], ["corrected", "corrected"], ["unconfirmed", "unconfirmed"]];
    status.setAttribute("aria-label", container.getAttribute("data-menu-label") || "Verification status");
    status.style.cssText = "padding:0.3em;background:transparent;color:inherit;font:inherit";
    menu
      .forEach(function (pair) {
        var option = document.createElement("option");
        option.value = pair[0];
        option.textContent = pair[1];
        status.appendChild(option);
      });
    var count = document.createElement("span");
    count.className = "gpukb-catalog-count";
    count.setAttribute("aria-live", "polite");
    controls.appendChild(filter);
    controls.appendChild(status);
    controls.appendChild(count);
    container.insertBefore(controls, container.firstChild);

    function apply() {
      var query = filter.value.trim().toLowerCase();
      var wanted = status.value;
      var shown = 0;
      rows.forEach(function (row) {
        var keep = (!query || row.textContent.toLowerCase().indexOf(query) !== -1) &&
          (!wanted || row.getAttribute("data-status") === wanted);
        row.hidden = !keep;
        if (keep) {
          shown += 1;
        }
      });
      count.textContent = shown + " of " + rows.length + " " + (container.getAttribute("data-noun") || "datasets");
    }

    function sortBy(index) {
      var header = headers[index];
      var numeric = header.getAttribute("data-type") === "number";
      var ascending = header.getAttribute("aria-sort") !== "ascending";
      headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var keyed = rows.map(function (row, position) {
        return { row: row, key: sortKey(row, index, numeric), position: position };
      });
      keyed.sort(function (a, b) {
        if (a.key === null || b.key === null) {
          return a.key === b.key ? a.position - b.position : (a.key === null ? 1 : -1);
        }
        if (a.key < b.key) { return ascending ? -1 : 1; }
        if (a.key > b.key) { return ascending ? 1 : -1; }
        return a.position - b.position;
      });
      rows = keyed.map(function (k) { return k.row; });
      rows.forEach(function (row) { tbody.appendChild(row); });
    }

    headers.forEach(function (header, index) {
      header.setAttribute("role", "columnheader");
      header.setAttribute("tabindex", "0");
      header.style.cursor = "pointer";
      header.title = "Sort by " + header.textContent.trim();
      header.addEventListener("click", function () { sortBy(index); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(index);
        }
      });
    });
    filter.addEventListener("input", apply);
    status.addEventListener("change", apply);
    apply();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("div.gpukb-catalog"), setup);
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(init);  // Material's page-load observable (also fires with instant navigation)
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
