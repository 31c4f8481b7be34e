/* xlakb triage in the browser: the same rules as `xlakb triage` (src/xlakb/triage.py), run on the
 * signatures the site build exports (assets/triage.json). The pasted log never leaves the page.
 * tests/site/test_browser.py runs this engine and the Python one on the same corpus and compares
 * their JSON results. */
(function (global) {
  "use strict";

  var KINDS = ["message", "check", "frame", "call", "env"];

  function lineOf(text, pos) {
    var n = 1;
    for (var i = text.indexOf("\n"); i !== -1 && i < pos; i = text.indexOf("\n", i + 1)) n += 1;
    return n;
  }

  function firstMatch(pattern, flags, text) {
    return new RegExp(pattern, flags).exec(text);
  }

  function facts(text, data) {
    var frames = [];
    var re = new RegExp(data.frame_pattern, "gm");
    var m;
    while ((m = re.exec(text)) !== null) {
      frames.push([m[1], m[2], (m[3] || "").trim()]);
      if (m[0].length === 0) re.lastIndex += 1;
    }
    var signs = data.torch_xla_signs.filter(function (s) { return new RegExp(s[1], s[2]).test(text); })
      .map(function (s) { return s[0]; });
    function version(name) {
      var pats = data.version_patterns[name];
      for (var i = 0; i < pats.length; i++) {
        var v = firstMatch(pats[i][1], pats[i][2], text);
        if (v) return [v[1], pats[i][0]];
      }
      return [null, null];
    }
    var xla = version("torch_xla");
    return { text: text, frames: frames, signs: signs, torch_xla: xla[0], where: xla[1], torch: version("torch")[0] };
  }

  function describe(sig) {
    if (sig.kind === "frame") return "frame " + sig.file + (sig.function ? " in " + sig.function : "");
    if (sig.kind === "env") return "env " + sig.name + (sig.pattern ? "=" + sig.pattern : "");
    return sig.kind + " " + sig.pattern;
  }

  function hit(sig, f) {
    var text = f.text, m, i;
    if (sig.kind === "message" || sig.kind === "check") {
      m = firstMatch(sig.pattern, "m", text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index) } : null;
    }
    if (sig.kind === "frame") {
      for (i = 0; i < f.frames.length; i++) {
        var path = f.frames[i][0], fn = f.frames[i][1];
        var base = path.split(/[\/\\]/).pop();
        if (new RegExp("^(?:" + sig.file + ")$").test(base) &&
            (!sig.function || new RegExp("^(?:" + sig.function + ")$").test(fn))) {
          return { sig: sig, excerpt: base + " in " + fn, line: lineOf(text, Math.max(text.indexOf('"' + path + '"'), 0)) };
        }
      }
      return null;
    }
    if (sig.kind === "call") {
      for (i = 0; i < f.frames.length; i++) {
        var src = f.frames[i][2];
        if (src && new RegExp(sig.pattern).test(src)) {
          return { sig: sig, excerpt: src.slice(0, 160), line: lineOf(text, Math.max(text.indexOf(src), 0)) };
        }
      }
      m = firstMatch(sig.pattern, "m", text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index) } : null;
    }
    if (sig.kind === "env") {
      var value = sig.pattern || "\\S*";
      m = new RegExp("\\b" + sig.name + "\\b\\s*[=:]\\s*['\"]?(" + value + ")").exec(text);
      if (!m && !sig.pattern) m = new RegExp("\\b" + sig.name + "\\b").exec(text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index) } : null;
    }
    return null;
  }

  function order(a, b) {
    return (a.line - b.line) || (KINDS.indexOf(a.sig.kind) - KINDS.indexOf(b.sig.kind));
  }

  function judge(record, f, data) {
    var hits = record.signatures.map(function (s) { return hit(s, f); }).filter(function (h) { return h; });
    var messages = hits.filter(function (h) { return data.message_kinds.indexOf(h.sig.kind) !== -1; });
    if (!messages.length) return null;
    var first = messages.slice().sort(function (a, b) {
      return ((a.sig.kind !== "message") - (b.sig.kind !== "message")) || order(a, b);
    })[0];
    var context = hits.filter(function (h) { return data.context_kinds.indexOf(h.sig.kind) !== -1 && h !== first; });
    var score = hits.reduce(function (n, h) { return n + data.weights[h.sig.kind]; }, 0);
    return { record: record, strength: context.length ? "strong" : "possible", score: score, hits: hits.slice().sort(order) };
  }

  function advice(record, version) {
    var fixed = record.fixed_in || null;
    if (!version) return { code: "no-version", fixed_in: fixed };
    var v = version.split("+")[0];
    var measured = Object.prototype.hasOwnProperty.call(record.measured, v) ? record.measured[v] : null;
    if (measured === "reproduced") return { code: "known-bug", version: v, fixed_in: fixed };
    if (measured === "not-reproduced") return { code: "measured-fixed", version: v, fixed_in: fixed };
    return { code: "not-measured", version: v, fixed_in: fixed, verdict: measured };
  }

  /* The result as `xlakb triage --json` prints it. */
  function triage(text, data, torchXla) {
    var f = facts(text, data);
    var version = torchXla || f.torch_xla;
    var result = { torch_xla: version || null, torch: f.torch || null,
                   version_source: torchXla ? "given" : (f.where || null), torch_xla_signs: f.signs, matches: [] };
    if (!f.signs.length) return result;
    var matches = data.records.map(function (r) { return judge(r, f, data); }).filter(function (m) { return m; });
    matches.sort(function (a, b) {
      return ((a.strength !== "strong") - (b.strength !== "strong")) || (b.score - a.score) ||
             (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0);
    });
    result.matches = matches.map(function (m) {
      return { id: m.record.id, strength: m.strength, score: m.score,
               matched: m.hits.map(function (h) {
                 return { kind: h.sig.kind, signature: describe(h.sig), excerpt: h.excerpt, line: h.line };
               }),
               advice: advice(m.record, version) };
    });
    return result;
  }

  function adviceText(a, id, words) {
    var fix = a.fixed_in ? words.fixed.replace("{fixed_in}", a.fixed_in) : words.unfixed;
    return words[a.code].replace(/\{version\}/g, a.version || "").replace(/\{id\}/g, id).replace("{fix}", fix);
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  /* The paste box: <form class="xlakb-triage" data-src="...triage.json" data-lang="en" data-records="../records/"> */
  function setup() {
    var form = document.querySelector("form.xlakb-triage");
    if (!form) return;
    var lang = form.dataset.lang || "en";
    var out = form.parentNode.querySelector(".xlakb-triage-result");
    var t = JSON.parse(form.querySelector("script.xlakb-triage-words").textContent);
    var data = null;
    fetch(form.dataset.src).then(function (r) { return r.json(); }).then(function (d) {
      data = d;
      form.dataset.ready = "1";
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!data) return;
      var text = form.querySelector("textarea").value;
      var version = form.querySelector("input[name=torch_xla]").value.trim();
      if (!text.trim()) { out.innerHTML = "<p>" + esc(t.empty) + "</p>"; return; }
      var res = triage(text, data, version || null);
      global.xlakbLastTriage = res;
      var byId = {};
      data.records.forEach(function (r) { byId[r.id] = r; });
      var html = [];
      if (!res.torch_xla_signs.length) {
        html.push('<p class="xlakb-triage-none">' + esc(t.no_xla) + "</p>");
      } else if (!res.matches.length) {
        html.push('<p class="xlakb-triage-none">' + esc(t.no_match) + "</p>");
      }
      html.push('<p class="xlakb-triage-version">' + esc(res.torch_xla ? t.version_found.replace("{v}", res.torch_xla) : t.no_version) + "</p>");
      var possibleShown = false;
      res.matches.forEach(function (m, i) {
        var rec = byId[m.id];
        if (m.strength === "possible" && !possibleShown) {
          possibleShown = true;
          html.push('<h3 class="xlakb-triage-possible">' + esc(t.possible) + "</h3>");
        }
        html.push('<div class="xlakb-triage-match" data-id="' + esc(m.id) + '" data-strength="' + m.strength + '">' +
          "<h3>" + (i + 1) + '. <a href="' + esc(form.dataset.records + m.id + "/") + '">' + esc(rec.title[lang]) + "</a> " +
          '<span class="xlakb-badge xlakb-status-' + esc(rec.status) + '">' + esc(t.strength[m.strength]) + "</span></h3>" +
          "<ul>" + m.matched.map(function (h) {
            return "<li>" + esc(t.matched) + " <code>" + esc(h.signature) + "</code> (" + esc(t.line) + " " + h.line + "): <code>" +
              esc(h.excerpt) + "</code></li>";
          }).join("") + "</ul>" +
          '<p class="xlakb-triage-advice">' + esc(adviceText(m.advice, m.id, data.advice[lang])) + "</p>" +
          "<p><strong>" + esc(t.workaround) + "</strong> " + esc(rec.workaround[lang]) + "</p></div>");
      });
      out.innerHTML = html.join("\n");
    });
  }

  global.xlakbTriage = { triage: triage, facts: facts };
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
    else setup();
  }
})(this);
