/* xlakb: what the search box does before Material's word search (assets/phrases.json).
 *
 * - An error string (`Check failed: xtensor`, `unhashable type: 'list'`) lands on the record that has it word
 *   for word: records whose error signatures, title or symptoms contain the query as written are listed
 *   first (word search alone ranks `check*` matches such as "checkpoint" above it).
 * - A query in the other language (Chinese typed on an English page) is offered that language's pages, and
 *   a glossary term finds the records that use it in either language.
 * The entries are put at the top of Material's result list, in its own markup, whenever it re-renders. */
(function () {
  "use strict";

  var CJK = /[\u3400-\u4dbf\u4e00-\u9fff]/;
  var data = null, loading = null;

  function config() {
    var el = document.getElementById("__config");
    try { return el ? JSON.parse(el.textContent) : {}; } catch (e) { return {}; }
  }

  /* the page's language as the site names its folders: zh for zh-Hans */
  function pageLang() { return (document.documentElement.lang || "en").split("-")[0]; }

  function siteRoot() {
    /* the root of the whole site: Chinese pages point Material at /zh/ (their own index), the data is at / */
    var base = new URL(config().base || ".", window.location.href).href;
    var lang = pageLang();
    return lang !== "en" && base.slice(-(lang.length + 2)) === "/" + lang + "/" ? base.slice(0, -(lang.length + 1)) : base;
  }

  function load() {
    if (!loading) {
      loading = fetch(siteRoot() + "assets/phrases.json").then(function (r) { return r.json(); })
        .then(function (d) { data = d; return d; }).catch(function () { loading = null; });
    }
    return loading;
  }

  function norm(s) {
    return s.toLowerCase().replace(/[`\u2018\u2019\u201c\u201d]/g, "").replace(/["']/g, "'").replace(/\s+/g, " ").trim();
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  /* An error string, not plain words: punctuation of code, or a known error word. */
  function looksLikeError(q) {
    return q.length >= 6 && (/[:()_\[\]<>=.'"]/.test(q) || /\b(error|failed|check|assert|exception)\b/i.test(q));
  }

  function glossaryTerm(q) {
    var n = norm(q);
    for (var i = 0; i < data.glossary.length; i++) {
      var t = data.glossary[i];
      if (norm(t.zh) === n || t.en.some(function (e) { return norm(e) === n; })) return t;
    }
    return null;
  }

  function exact(q, lang) {
    var n = norm(q), hits = [];
    (data.records[lang] || []).forEach(function (r) {
      var rank = -1;
      if (r.errors.some(function (e) { var x = norm(e); return x.indexOf(n) !== -1 || (n.indexOf(x) !== -1 && x.length >= 12); })) rank = 0;
      else if (norm(r.title).indexOf(n) !== -1) rank = 1;
      else if (r.texts.some(function (t) { return norm(t).indexOf(n) !== -1; })) rank = 2;
      if (rank >= 0) hits.push({ rank: rank, r: r });
    });
    hits.sort(function (a, b) { return a.rank - b.rank || (a.r.id < b.r.id ? -1 : 1); });
    return hits.map(function (h) { return h.r; });
  }

  /* Whether `text` uses the term's word `w` as glossary.used does: a Chinese term anywhere, an English one as a
   * whole word (`amp` is not in per_device_samples). */
  function uses(text, w) {
    if (CJK.test(w)) return text.indexOf(w) !== -1;
    var re = new RegExp("(?<![\\p{L}\\p{N}_-])" + w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "(?![\\p{L}\\p{N}_-])", "iu");
    return re.test(text);
  }

  function byTerm(term, lang) {
    var words = [term.zh].concat(term.en).map(norm);
    return (data.records[lang] || []).filter(function (r) {
      return r.texts.concat(r.errors).some(function (t) {
        var x = norm(t);
        return words.some(function (w) { return uses(x, w); });
      });
    });
  }

  function item(href, title, text, cls) {
    return '<li class="md-search-result__item ' + cls + '"><a href="' + esc(href) + '" class="md-search-result__link" tabindex="-1">' +
      '<article class="md-search-result__article md-typeset"><div class="md-search-result__icon md-icon"></div>' +
      "<h1>" + esc(title) + "</h1>" + (text ? "<p>" + esc(text) + "</p>" : "") + "</article></a></li>";
  }

  var WORDS = {
    en: { exact: "Has this error word for word", term: "Uses this term", other: "Search the Chinese pages for" },
    zh: { exact: "逐字包含这条报错", term: "使用了这个术语", other: "在英文页面中搜索" }
  };

  function entries(q) {
    var lang = pageLang() === "zh" ? "zh" : "en";
    var other = lang === "en" ? "zh" : "en";
    var root = siteRoot(), w = WORDS[lang], out = [];
    var foreign = lang === "en" ? CJK.test(q) : (!CJK.test(q) && /[a-z]{3}/i.test(q) && !looksLikeError(q) && glossaryTerm(q));
    if (foreign) {
      out.push(item(root + (other === "en" ? "" : other + "/") + "?q=" + encodeURIComponent(q), w.other + " \u201c" + q + "\u201d", "",
                    "xlakb-search-language"));
    }
    var seen = {};
    var found = looksLikeError(q) ? exact(q, lang) : [];
    found.forEach(function (r) { seen[r.id] = 1; out.push(item(root + r.url, r.title, w.exact, "xlakb-search-exact")); });
    var term = glossaryTerm(q);
    if (term) {
      byTerm(term, lang).forEach(function (r) {
        if (!seen[r.id]) { seen[r.id] = 1; out.push(item(root + r.url, r.title, w.term + ": " + term.zh + " / " + term.en[0], "xlakb-search-term")); }
      });
    }
    return out;
  }

  var current = "";

  function path(href) {
    var u = new URL(href, window.location.href);
    return u.origin + u.pathname;
  }

  /* Material's own results: no `?h=` left empty (a query with no word to highlight), and none for a page listed
   * above already by an entry of ours (one hit per page). */
  function tidy(list) {
    var ours = {};
    Array.prototype.forEach.call(list.querySelectorAll(MINE), function (li) {
      var a = li.querySelector("a[href]");
      if (a) ours[path(a.href)] = 1;
    });
    Array.prototype.forEach.call(list.querySelectorAll(".md-search-result__item"), function (li) {
      if (li.matches(MINE)) return;
      var a = li.querySelector("a.md-search-result__link[href]");
      var dup = !!a && Object.prototype.hasOwnProperty.call(ours, path(a.href));
      if (li.hidden !== dup) li.hidden = dup;
    });
    Array.prototype.forEach.call(list.querySelectorAll('a[href*="?h="], a[href*="&h="]'), function (a) {
      var u = new URL(a.getAttribute("href"), window.location.href);
      if (u.searchParams.get("h") === "" || (u.searchParams.has("h") && !u.searchParams.get("h").trim())) {
        u.searchParams.delete("h");
        a.setAttribute("href", u.pathname + u.search + u.hash);
      }
    });
  }

  var MINE = ".xlakb-search-exact, .xlakb-search-term, .xlakb-search-language";

  function place() {
    var list = document.querySelector(".md-search-result__list");
    if (!list || !data) return;
    var mine = list.querySelectorAll(MINE);
    var html = current ? entries(current) : [];
    if (!(mine.length === html.length && list.dataset.xlakbQuery === current && (!mine.length || list.firstElementChild === mine[0]))) {
      Array.prototype.forEach.call(mine, function (el) { el.remove(); });
      list.dataset.xlakbQuery = current;
      if (html.length) list.insertAdjacentHTML("afterbegin", html.join(""));
    }
    tidy(list);
  }

  function setup() {
    var input = document.querySelector("input.md-search__input");
    var result = document.querySelector(".md-search-result");
    if (!input || !result) return;
    input.addEventListener("focus", load);
    input.addEventListener("input", function () {
      current = input.value.trim();
      load().then(place);
    });
    new MutationObserver(function () { if (data) place(); }).observe(result, { childList: true, subtree: true });
    if (input.value) { current = input.value.trim(); load().then(place); }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
