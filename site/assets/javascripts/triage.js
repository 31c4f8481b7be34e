/* xlakb triage in the browser: the same rules as `xlakb triage` (src/xlakb/triage.py), run on the
 * data the site build exports (assets/triage.json: the records with each signature's measured
 * genericity, the message catalog, the generic lists). The pasted log never leaves the page.
 * tests/site/test_browser.py runs this engine and the Python one on both corpora (reproducer logs and
 * real pastes) and compares their JSON results. */
(function (global) {
  "use strict";

  var KINDS = ["message", "check", "frame", "call", "env"];
  var cache = {};

  function rx(pattern, flags) {
    var key = (flags || "") + "\u0000" + pattern;
    if (!cache[key]) cache[key] = new RegExp(pattern, flags || "");
    return cache[key];
  }
  function full(pattern) { return rx("^(?:" + pattern + ")$"); }

  function lineOf(text, pos) {
    var n = 1;
    for (var i = text.indexOf("\n"); i !== -1 && i < pos; i = text.indexOf("\n", i + 1)) n += 1;
    return n;
  }

  function normalize(text, data) {
    data.normalize.forEach(function (n) { text = text.replace(new RegExp(n[0], "g" + n[2]), n[1]); });
    return text;
  }

  function words(line) {
    var seen = {}, out = [];
    (line.match(/[A-Za-z0-9_]+/g) || []).forEach(function (w) { if (!seen[w]) { seen[w] = 1; out.push(w); } });
    return out;
  }

  function candidateLines(text, data) {
    var spans = [], start = 0, i;
    for (;;) {
      var e = text.indexOf("\n", start);
      spans.push([start, e < 0 ? text.length : e]);
      if (e < 0) break;
      start = e + 1;
    }
    if (spans.length <= data.short_paste) return spans;
    var keep = {}, re = new RegExp(data.error_line, "gm"), m;
    while ((m = re.exec(text)) !== null) {
      i = lineOf(text, m.index) - 1;
      keep[i] = 1; keep[i + 1] = 1;
      if (m[0].length === 0) re.lastIndex += 1;
    }
    return Object.keys(keep).map(Number).sort(function (a, b) { return a - b; })
      .filter(function (k) { return k < spans.length; }).map(function (k) { return spans[k]; });
  }

  function catalogIndex(data) {
    if (data._byKey) return data._byKey;
    var byKey = {};
    data.catalog.forEach(function (row) { (byKey[row.key] = byKey[row.key] || []).push(row); });
    data._byKey = byKey;
    return byKey;
  }

  function cmpStr(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function catalogMatch(text, data) {
    var byKey = catalogIndex(data), out = [];
    candidateLines(text, data).forEach(function (span) {
      var line = text.slice(span[0], span[1]);
      if (!line.trim()) return;
      var lineNo = lineOf(text, span[0]);
      words(line).filter(function (w) { return Object.prototype.hasOwnProperty.call(byKey, w); }).sort(cmpStr).forEach(function (w) {
        byKey[w].forEach(function (row) {
          var m = rx(row.pattern).exec(line);
          if (m) out.push({ line: lineNo, start: span[0] + m.index, end: span[0] + m.index + m[0].length, excerpt: m[0].slice(0, 160), row: row });
        });
      });
    });
    out.sort(function (a, b) {
      return (a.line - b.line) || (b.row.literal - a.row.literal) || (a.start - b.start) || cmpStr(a.row.pattern, b.row.pattern);
    });
    var kept = [];
    out.forEach(function (o) {
      var inside = kept.some(function (k) {
        return k.line === o.line && k.start <= o.start && o.end <= k.end && k.row.literal > o.row.literal;
      });
      if (!inside) kept.push(o);
    });
    return kept;
  }

  function facts(text, data) {
    text = normalize(text, data);
    var frames = [], re = new RegExp(data.frame_pattern, "gm"), m;
    while ((m = re.exec(text)) !== null) {
      frames.push({ path: m[1], base: m[1].split(/[\/\\]/).pop(), fn: m[2], source: (m[3] || "").trim(), pos: m.index });
      if (m[0].length === 0) re.lastIndex += 1;
    }
    // a notebook's frames (IPython 7 and 8 print no source line under the frame's line), in the order shown
    var nb = new RegExp(data.notebook_frame, "g");
    while ((m = nb.exec(text)) !== null) frames.push({ path: m[1], base: m[1].split(/[\/\\]/).pop(), fn: m[2], source: "", pos: m.index + m[0].indexOf(m[1]) });
    frames.sort(function (a, b) { return a.pos - b.pos; });
    var signs = data.torch_xla_signs.filter(function (s) { return new RegExp(s[1], s[2]).test(text); })
      .map(function (s) { return s[0]; });
    var origins = catalogMatch(text, data);
    if (origins.some(function (o) { return o.row.sign; })) signs.push("a message only torch_xla prints");
    function version(name) {
      var pats = data.version_patterns[name];
      for (var i = 0; i < pats.length; i++) {
        var v = new RegExp(pats[i][1], pats[i][2]).exec(text);
        if (v) return [v[1], pats[i][0]];
      }
      return [null, null];
    }
    var xla = version("torch_xla");
    var others = data.generic.other_backends.filter(function (b) { return rx(b.pattern).test(text); })
      .map(function (b) { return b.name; });
    // which of torch_xla's layers printed lines of it (triage.py layers_of)
    var found = {};
    if (signs.length) found.torch_xla = true;
    origins.forEach(function (o) { o.row.origins.forEach(function (x) { found[x] = true; }); });
    data.layer_signs.forEach(function (l) { if (new RegExp(l[2], l[3]).test(text)) found[l[0]] = true; });
    var layers = data.layers.filter(function (x) { return found[x]; });
    // a printed stack and no error line: the message was left out (triage.py shows_stack_only)
    var stackOnly = false;
    if (data.upstream && data.upstream.rules && (frames.length > 0 || new RegExp(data.stack_line, "m").test(text))) {
      // the error is what a log prints last: its last lines are read, as for bare messages
      var tail = lastLines(text, reportedRules(data.upstream)).join("\n");
      stackOnly = !new RegExp(data.bare_exception, "m").test(tail) && !reportedLines(tail, data.upstream).length;
    }
    return { text: text, frames: frames, signs: signs, torch_xla: xla[0], where: xla[1], torch: version("torch")[0],
             origins: origins, others: others, layers: layers, stackOnly: stackOnly };
  }

  function describe(sig) {
    if (sig.kind === "frame") return "frame " + sig.file + (sig.function ? " in " + sig.function : "");
    if (sig.kind === "env") return "env " + sig.name + (sig.pattern ? "=" + sig.pattern : "");
    return sig.kind + " " + sig.pattern;
  }

  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\\/-]/g, "\\$&"); }

  /* A frame signature's file names the frame's file: its whole name, or, for a pattern with a "/", the path's last
     components (triage.py in_file). */
  function inFile(fileRe, fr) {
    if (fileRe.test(fr.base)) return true;
    if (fileRe.source.indexOf("/") === -1) return false;
    var parts = fr.path.split(/[\/\\]/);
    for (var i = parts.length - 2; i >= 0; i--) if (fileRe.test(parts.slice(i).join("/"))) return true;
    return false;
  }

  /* A frame signature names this frame: its file (inFile) and, when it gives one, its function (triage.py _at). */
  function atFrame(sig, fr) {
    return inFile(full(sig.file), fr) && (!sig.function || full(sig.function).test(fr.fn));
  }

  function hit(sig, f) {
    var text = f.text, m, i;
    if (sig.kind === "message" || sig.kind === "check") {
      m = rx(sig.pattern, "m").exec(text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index), start: m.index, end: m.index + m[0].length } : null;
    }
    if (sig.kind === "frame") {
      for (i = 0; i < f.frames.length; i++) {
        var fr = f.frames[i];
        if (atFrame(sig, fr)) {
          return { sig: sig, excerpt: fr.base + " in " + fr.fn, line: lineOf(text, fr.pos), start: fr.pos, end: fr.pos + 1 };
        }
      }
      return null;
    }
    if (sig.kind === "call") {
      for (i = 0; i < f.frames.length; i++) {
        var src = f.frames[i].source;
        if (src && rx(sig.pattern).test(src)) {
          var pos = Math.max(text.indexOf(src, f.frames[i].pos), 0);
          return { sig: sig, excerpt: src.slice(0, 160), line: lineOf(text, pos), start: pos, end: pos + src.length };
        }
      }
      m = rx(sig.pattern, "m").exec(text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index), start: m.index, end: m.index + m[0].length } : null;
    }
    if (sig.kind === "env") {
      if (text.indexOf(sig.name) === -1) return null;
      var value = sig.pattern || "\\S*";
      m = new RegExp("\\b" + escapeRe(sig.name) + "\\b\\s*[=:]\\s*['\"]?(" + value + ")").exec(text);
      if (!m && !sig.pattern) m = new RegExp("\\b" + escapeRe(sig.name) + "\\b").exec(text);
      return m ? { sig: sig, excerpt: m[0].slice(0, 160), line: lineOf(text, m.index), start: m.index, end: m.index + m[0].length } : null;
    }
    return null;
  }

  function genericFrame(base, fn, generic) {
    for (var i = 0; i < generic.frames.length; i++) {
      var g = generic.frames[i];
      if (full(g.file).test(base) && (!g.function || full(g.function).test(fn))) return g.why;
    }
    return "";
  }

  function textGeneric(excerpt, generic) {
    var core = excerpt.replace(/^\s*(?:[\w.]+(?:Error|Exception)\s*:\s*)/, "").trim();
    for (var i = 0; i < generic.messages.length; i++) {
      var g = generic.messages[i];
      if (full(g.pattern).test(core) || full(g.pattern).test(excerpt.trim())) return g.why;
    }
    return "";
  }

  function catalogGeneric(h, f, data) {
    for (var i = 0; i < f.origins.length; i++) {
      var o = f.origins[i];
      if (o.start < h.end && h.start < o.end && o.row.generic) return "printed by a helper: " + o.row.generic;
    }
    if (h.sig.kind === "check" && h.excerpt.indexOf("::") !== -1) {
      var helpers = data.helpers || [];
      for (var k = 0; k < helpers.length; k++) {
        if (rx("(?<![\\w])(?:\\w+::)*" + escapeRe(helpers[k][0]) + "(?![\\w])").test(h.excerpt)) return "a frame of a helper: " + helpers[k][1];
      }
    }
    return "";
  }

  function isError(kind, data) { return data.message_kinds.indexOf(kind) !== -1; }

  function judgeHits(record, f, data) {
    var out = [];
    record.signatures.forEach(function (sig) {
      var h = hit(sig, f);
      if (!h) return;
      var why = sig.generic || "";
      if (!why && isError(sig.kind, data)) why = textGeneric(h.excerpt, data.generic) || catalogGeneric(h, f, data);
      if (!why && sig.kind === "frame") {
        var fr = null;
        for (var i = 0; i < f.frames.length; i++) if (f.frames[i].pos === h.start) { fr = f.frames[i]; break; }
        why = fr ? genericFrame(fr.base, fr.fn, data.generic) : "";
        why = why ? "an entry frame (" + why + ")" : "";
      }
      h.generic = why;
      h.anchor = -1;
      out.push(h);
    });
    return out;
  }

  function innermostFrame(f, pos, generic) {
    var best = null;
    for (var i = 0; i < f.frames.length; i++) {
      var fr = f.frames[i];
      if (fr.pos >= pos) break;
      if (!genericFrame(fr.base, fr.fn, generic)) best = fr;
    }
    return best;
  }

  function anchor(hits, f, data) {
    var own = hits.filter(function (h) { return h.sig.kind === "frame" && !h.generic; });
    if (!own.length) return hits;
    return hits.map(function (h) {
      if (h.generic && h.sig.kind === "message") {
        var fr = innermostFrame(f, h.start, data.generic);
        var a = fr ? own.filter(function (o) { return o.start === fr.pos; })[0] : null;
        if (a) return copy(h, { generic: "", anchor: a.start });
      }
      return h;
    });
  }

  function copy(h, changes) {
    var out = {};
    Object.keys(h).forEach(function (k) { out[k] = h[k]; });
    Object.keys(changes).forEach(function (k) { out[k] = changes[k]; });
    return out;
  }

  function strength(hits, data) {
    var errors = hits.filter(function (h) { return isError(h.sig.kind, data); });
    if (!errors.length) return "";
    var anchors = hits.filter(function (h) { return h.anchor >= 0; }).map(function (h) { return h.anchor; });
    var specificError = errors.some(function (h) { return !h.generic; });
    var trigger = hits.some(function (h) {
      return !h.generic && data.trigger_kinds.indexOf(h.sig.kind) !== -1 && !(h.sig.kind === "frame" && anchors.indexOf(h.start) !== -1);
    });
    if (specificError && trigger) return "strong";
    if (specificError || trigger) return "possible";
    return "related";
  }

  function score(hits, data) {
    return hits.reduce(function (n, h) { return n + (h.generic ? 1 : data.weights[h.sig.kind]); }, 0);
  }

  function overlaps(a, b) { return a.start < b.end && b.start < a.end; }

  function order(a, b) {
    return (a.line - b.line) || (KINDS.indexOf(a.sig.kind) - KINDS.indexOf(b.sig.kind)) || (a.start - b.start);
  }

  function advice(record, version) {
    var fixed = record.fixed_in || null;
    var lim = record.kind === "limitation";  // answered as what it is: not a bug, lifted in fixed_in
    if (!version) return { code: lim ? "limitation" : "no-version", fixed_in: fixed };
    var v = version.split("+")[0];
    var measured = Object.prototype.hasOwnProperty.call(record.measured, v) ? record.measured[v] : null;
    if (measured === "reproduced") return { code: lim ? "limitation-here" : "known-bug", version: v, fixed_in: fixed };
    if (measured === "not-reproduced") return { code: lim ? "limitation-lifted" : "measured-fixed", version: v, fixed_in: fixed };
    return { code: lim ? "limitation" : "not-measured", version: v, fixed_in: fixed, verdict: measured };
  }

  function encode(s) {
    return encodeURIComponent(s).replace(/[!'()*]/g, function (c) { return "%" + c.charCodeAt(0).toString(16).toUpperCase(); });
  }

  function headline(f) {
    // the phrases GitHub can match word for word (triage.py headline)
    var text;
    if (f.origins.length) {
      text = f.origins[f.origins.length - 1].row.text;
    } else {
      var re = /^\s*(?:[\w.]+(?:Error|Exception|Interrupt|Exit)\b:?.*|.*Check failed:.*|.*INTERNAL ASSERT FAILED.*)$/gm, m, last = null;
      while ((m = re.exec(f.text)) !== null) { last = m[0]; if (m[0].length === 0) re.lastIndex += 1; }
      if (last === null) return [];
      text = last.trim().replace(/^[\w.]*\.(?=\w+(?:Error|Exception))/, "");
      text = text.replace(/\S*[\/\\]\S*|0x[0-9a-fA-F]+|\b\d[\d.,:_]*\b|\[[^\]]*\]|'[^']*'|"[^"]*"|<[^>]*>/g, "\u2026");
    }
    return text.split("\u2026").map(function (p) {
      return p.replace(/\s+/g, " ").replace(/^[ :,.\-]+|[ :,.\-]+$/g, "");
    }).filter(function (p) { return /[A-Za-z]{3}/.test(p); }).slice(0, 4).map(function (p) { return p.slice(0, 120); });
  }

  /* An upstream cluster matched by an error a generic helper prints (triage_report.generic_hit). */
  function genericHit(line, origins) {
    return origins.some(function (o) {
      var pieces = o.row.text.split("\u2026").map(function (p) { return p.trim(); }).filter(Boolean);
      return !!o.row.generic && pieces.length > 0 && pieces.every(function (p) { return line.indexOf(p) !== -1; });
    });
  }

  /* The innermost frame of torch_xla's own Python code, an entry frame and a comprehension's aside (triage.py own_frame). */
  function ownFrame(f, data) {
    var re = rx(data.torch_xla_path);
    for (var i = f.frames.length - 1; i >= 0; i--) {
      var fr = f.frames[i];
      if (full(data.comprehension).test(fr.fn)) continue;  // the function it is written in stands for it
      if (re.test(fr.path.replace(/\\/g, "/")) && !genericFrame(fr.base, fr.fn, data.generic)) return fr;
    }
    return null;
  }

  /* A stack-only paste: the records with a specific frame signature where its stack leaves torch_xla (triage.py stacked). */
  function stackedMatches(every, f, data) {
    var own = f.stackOnly ? ownFrame(f, data) : null;
    if (!own) return [];
    var line = lineOf(f.text, own.pos);
    var out = [];
    every.forEach(function (p) {
      var r = p[0];
      var hits = p[1].filter(function (h) { return (h.sig.kind === "frame" || h.sig.kind === "call") && !h.generic; });
      var atOwn = hits.filter(function (h) { return h.sig.kind === "frame" && atFrame(h.sig, own); });
      if (!atOwn.length) return;
      hits = hits.map(function (h) {
        return atOwn.indexOf(h) !== -1 ? copy(h, { excerpt: own.base + " in " + own.fn, line: line, start: own.pos, end: own.pos + 1 }) : h;
      });
      out.push({ record: r, strength: "stack", score: score(hits, data), hits: hits.sort(order), group: [], advice: {} });
    });
    out.sort(function (a, b) { return (b.score - a.score) || cmpStr(a.record.id, b.record.id); });
    return out;
  }

  function hitJson(h) {
    return { kind: h.sig.kind, signature: describe(h.sig), excerpt: h.excerpt, line: h.line, generic: h.generic };
  }

  /* The result as `xlakb triage --json` prints it. */
  function triage(text, data, torchXla) {
    var f = facts(text, data);
    var version = torchXla || f.torch_xla;
    var every = data.records.map(function (r) { return [r, judgeHits(r, f, data)]; });
    var judged = every.filter(function (p) { return p[1].some(function (h) { return isError(h.sig.kind, data); }); });
    var shared = judged.map(function () { return {}; });
    judged.forEach(function (pi, i) {
      var group = (pi[0].lookalikes || []).concat([pi[0].id]);
      judged.forEach(function (pj, j) {
        if (j === i || group.indexOf(pj[0].id) !== -1) return;
        pi[1].forEach(function (ha, a) {
          if (!isError(ha.sig.kind, data) || ha.generic) return;
          if (pj[1].some(function (hb) { return isError(hb.sig.kind, data) && ha.line === hb.line && overlaps(ha, hb); })) {
            shared[i][a] = "also evidence of " + pj[0].id + " in this paste";
          }
        });
      });
    });
    var matches = [], related = [];
    judged.forEach(function (p, i) {
      var r = p[0];
      var hits = p[1].map(function (h, a) {
        return Object.prototype.hasOwnProperty.call(shared[i], a) ? copy(h, { generic: shared[i][a] }) : h;
      });
      hits = anchor(hits, f, data);
      var s = strength(hits, data);
      if (!s) return;
      if (s !== "related" && !f.signs.length && f.others.length) s = "related";
      var m = { record: r, strength: s, score: score(hits, data), hits: hits.slice().sort(order), group: [], advice: advice(r, version) };
      (s === "related" ? related : matches).push(m);
    });
    var strong = matches.filter(function (m) { return m.strength === "strong"; });
    var groups = [];
    strong.forEach(function (m) {
      var g = (m.record.lookalikes || []).concat([m.record.id]);
      for (var k = 0; k < groups.length; k++) {
        if (g.some(function (x) { return groups[k].indexOf(x) !== -1; })) {
          g.forEach(function (x) { if (groups[k].indexOf(x) === -1) groups[k].push(x); });
          return;
        }
      }
      groups.push(g.slice());
    });
    var ambiguous = groups.length > 1;
    if (ambiguous) {
      strong.forEach(function (m) { m.strength = "possible"; });
    } else {
      var ids = strong.map(function (m) { return m.record.id; });
      strong.forEach(function (m) {
        m.group = ids.filter(function (x) { return x === m.record.id || (m.record.lookalikes || []).indexOf(x) !== -1; }).sort(cmpStr);
      });
    }
    matches.sort(function (a, b) {
      return ((a.strength !== "strong") - (b.strength !== "strong")) || (b.score - a.score) || cmpStr(a.record.id, b.record.id);
    });
    related.sort(function (a, b) { return (b.score - a.score) || cmpStr(a.record.id, b.record.id); });
    var stacked = matches.length || (f.others.length && !f.signs.length) ? [] : stackedMatches(every, f, data);
    function matchJson(m) {
      return { id: m.record.id, strength: m.strength, score: m.score, group: m.group, matched: m.hits.map(hitJson), advice: m.advice };
    }
    var phrases = headline(f);
    var v = version ? version.split("+")[0] : null;
    return {
      // a paste of another accelerator stack with no sign of torch_xla: no upstream report either (triage.py reported_hits)
      upstream: (f.others.length && !f.signs.length ? [] : reported(f.text, data, f.origins)).filter(function (h) {
        // a match on part of a message needs a sign of torch_xla or its layers (triage.py reported_hits)
        return f.signs.length || f.layers.length || ["cut", "cause", "sentence", "title-cut", "template", "import"].indexOf(h.how || "") === -1;
      }).map(function (h) {
        return { cluster: h.cluster, line: h.line, frames: h.frames, exact: h.exact, how: h.how || "",
                 generic: h.line !== null && genericHit(h.line, f.origins) };
      }),
      torch_xla: version || null, torch: f.torch || null, version_source: torchXla ? "given" : (f.where || null),
      torch_xla_signs: f.signs, other_backends: f.others, layers: f.layers, stack_only: f.stackOnly, ambiguous: ambiguous,
      matches: matches.map(matchJson), related: related.map(matchJson), stacked: stacked.map(matchJson),
      origins: f.origins.map(function (o) {
        var note = (!v || !o.row.releases) ? "" : (o.row.release_list.indexOf(v) !== -1 ? "" : "not-in-release");
        return { line: o.line, excerpt: o.excerpt, text: o.row.text, origins: o.row.origins, places: o.row.places,
                 releases: o.row.releases, generic: o.row.generic, sign: o.row.sign, note: note };
      }),
      search: phrases.length ? data.issue_search + encode("is:issue " + phrases.map(function (p) { return '"' + p + '"'; }).join(" ")) : ""
    };
  }

  /* The reported tier: the same rules as xlakb.upstream.signature (exported as data.upstream.rules). */
  function reportedRules(U) {
    if (U._compiled) return U._compiled;
    var r = U.rules;
    U._compiled = {
      kinds: r.kinds.map(function (k) { return [k[0], new RegExp(k[1])]; }),
      prefix: new RegExp(r.log_prefix), fatal: new RegExp(r.fatal_log), frame: new RegExp(r.cpp_frame, "g"), source: new RegExp(r.source),
      pyFrame: new RegExp(r.py_frame, "g"), notebookFrame: new RegExp(r.notebook_frame, "g"),
      helperSource: new RegExp(r.helper_source),
      helperFrame: new RegExp(r.helper_frame), entryFrame: new RegExp(r.entry_frame),
      identifier: new RegExp(r.identifier), span: new RegExp(r.code_span, "g"),
      consequence: new RegExp(r.consequence), testVerdict: new RegExp(r.test_verdict), exceptionType: new RegExp(r.exception_type), minMessage: r.min_message,
      jobWrapper: new RegExp(r.job_wrapper), continuedSkip: new RegExp(r.continued_skip), continuedMark: new RegExp(r.continued_mark),
      continuedLines: r.continued_lines,
      bareSkip: new RegExp(r.bare_skip), minBare: r.min_bare, bareLines: r.bare_lines, minCut: r.min_cut,
      minTail: r.min_tail, maxCutLines: r.max_cut_lines, titleSeparators: r.title_separators,
      pyCode: new RegExp(r.py_code, "g"), ipythonCode: new RegExp(r.ipython_code, "gm"),
      importStatement: new RegExp(r.import_statement), importError: new RegExp(r.import_error),
      stackCpp: new RegExp(r.frames.cpp, "g"), pyPath: new RegExp(r.frames.py_path),
      frameSkip: r.frames.skip.map(function (p) { return new RegExp(p); }),
      cppKept: r.frames.cpp_kept, pyKept: r.frames.py_kept, specific: r.frames.specific,
      // a Python back reference (\1) is JavaScript's $1
      placeholders: r.placeholders.map(function (p) { return [new RegExp(p[0], "g"), p[1].replace(/\\(\d)/g, "$$$1")]; }),
      max: r.max_signature
    };
    return U._compiled;
  }

  function reportedNormalise(message, C) {
    var text = message.trim();
    C.placeholders.forEach(function (p) {
      if (p[1] === "keep-identifier") {
        text = text.replace(p[0], function (m) { return C.identifier.test(m) ? m : "<name>"; });
      } else {
        text = text.replace(p[0], p[1]);
      }
    });
    return Array.from(text.replace(/^[ :;,.]+|[ :;,.]+$/g, "")).slice(0, C.max).join("");
  }

  function allGroups(rx, text, group) {
    var out = [], m;
    rx.lastIndex = 0;
    while ((m = rx.exec(text)) !== null) out.push(m[group]);
    return out;
  }

  /* [guilty location, helper], as signature.py _location: past helpers every caller goes through. */
  function reportedLocation(segment, lines, i, C) {
    var src = C.source.exec(segment), source = src ? src[1] : "";
    if (source && !C.helperSource.test(source)) return [source, ""];
    if (!source) {
      var first = allGroups(C.frame, lines.slice(i, i + 12).join("\n"), 1)[0];
      if (first === undefined) return ["", ""];
      if (!C.helperFrame.test(first)) return [first, ""];
    }
    var frames = allGroups(C.frame, lines.slice(i, i + 40).join("\n"), 1);
    var helper = source || frames[0];
    var caller = frames.filter(function (f) { return !C.helperFrame.test(f); })[0] || "";
    if (!caller) {
      var entries = allGroups(C.pyFrame, lines.slice(Math.max(0, i - 40), i).join("\n"), 2);
      caller = entries.reverse().filter(function (fn) { return !C.entryFrame.test(fn); })[0] || "";
    }
    return [caller || helper, helper];
  }

  /* The message a status names its worker before: the first line after it that says something (signature.py continued). */
  function continuedMessage(lines, i, C) {
    var rest = lines.slice(i + 1, i + 1 + C.continuedLines);
    for (var j = 0; j < rest.length; j++) {
      var line = cleanLine(rest[j], C);
      if (!line || C.continuedSkip.test(line)) continue;
      return line.replace(C.continuedMark, "");
    }
    return "";
  }

  /* A pasted line without its log prefix, indentation and backticks (signature.py _clean). */
  function cleanLine(raw, C) { return raw.replace(C.prefix, "").trim().replace(/^`+|`+$/g, "").trim(); }

  function reportedLines(text, U) {
    var C = reportedRules(U);
    var lines = text.split(/\r\n|\r|\n/), out = [], seen = {};
    lines.forEach(function (raw, i) {
      var line = cleanLine(raw, C);
      if (!line || line.length > 2000) return;
      // an error quoted inline in prose is that code span (signature.py error_lines)
      var spans = [], sm;
      C.span.lastIndex = 0;
      while ((sm = C.span.exec(line)) !== null) {
        var sp = sm[1];
        if (C.kinds.some(function (kd) { return kd[1].test(sp); })) spans.push(sp);
      }
      (spans.length ? spans : [line]).forEach(function (segment) {
        var k;
        for (k = 0; k < C.kinds.length; k++) {
          var m = C.kinds[k][1].exec(segment);
          if (!m) continue;
          var found = m[0].trim();
          if (C.jobWrapper.test(found)) {
            // XRT named the worker first and put the message on a later line (signature.py continued)
            var message = continuedMessage(lines, i, C);
            if (!message) break;
            found = found + " " + message;
          }
          var inner = found;
          for (var w = 0; w < 3; w++) {
            var mw = C.kinds[w][1].exec(found);
            if (mw && mw.index > 0) { inner = mw[0]; break; }
          }
          var sig = reportedNormalise(inner, C);
          if (sig.length < 8) break;
          var place = reportedLocation(segment, lines, i, C), location = place[0];
          var key = sig + (location ? " @ " + location : "");
          if (!seen[key]) {
            seen[key] = true;
            out.push({ kind: C.kinds[k][0], line: found, signature: sig, location: location,
                       helper: place[1], key: key });
          }
          break;
        }
        var fatal = k === C.kinds.length && !spans.length ? C.fatal.exec(raw) : null;
        if (fatal) {
          // a fatal log line no kind knows: the error that ended the process, in the file that logged it
          var fsig = reportedNormalise(line, C), place = C.helperSource.test(fatal[1]) ? "" : fatal[1];
          var fkey = fsig + (place ? " @ " + place : "");
          if (fsig.length >= 8 && !seen[fkey]) {
            seen[fkey] = true;
            out.push({ kind: "fatal", line: line, signature: fsig, location: place, helper: "", key: fkey });
          }
        }
      });
    });
    return out;
  }

  /* The guilty frames of a paste, innermost first (as signature.py guilty_frames). */
  function guiltyFrames(text, C) {
    var cpp = [], py = [], m;
    C.stackCpp.lastIndex = 0;
    while ((m = C.stackCpp.exec(text)) !== null && cpp.length < C.cppKept) {
      var name = m[1];
      if (C.frameSkip.some(function (rx) { return rx.test(name); }) || cpp.indexOf("cpp:" + name) !== -1) continue;
      cpp.push("cpp:" + name);
    }
    var frames = [];
    [C.pyFrame, C.notebookFrame].forEach(function (rx) {  // a script's traceback and a notebook's, in order
      rx.lastIndex = 0;
      while ((m = rx.exec(text)) !== null) frames.push([m[1], m[2], m.index]);
    });
    frames.sort(function (a, b) { return a[2] - b[2]; });
    for (var i = frames.length - 1; i >= 0 && py.length < C.pyKept; i--) {
      var pm = C.pyPath.exec(frames[i][0].replace(/\\/g, "/"));
      if (!pm || C.entryFrame.test(frames[i][1])) continue;
      var f = "py:" + pm[1] + ":" + frames[i][1];
      if (py.indexOf(f) === -1) py.push(f);
    }
    return cpp.concat(py);
  }

  /* The clusters whose reports show the same guilty frames (as index.py match_frames). */
  function matchFrames(frames, clusters, innermost, C) {
    clusters = clusters.filter(function (c) { return (c.frames || []).length && !c.generic; });
    if (!frames.length || !clusters.length) return [];
    var df = {};
    clusters.forEach(function (c) { c.frames.forEach(function (f) { df[f] = (df[f] || 0) + 1; }); });
    var scored = [];
    clusters.forEach(function (c) {
      var shared = frames.filter(function (f) { return c.frames.indexOf(f) !== -1; });
      if (!shared.some(function (f) { return df[f] <= C.specific; }) || (innermost && shared.indexOf(frames[0]) === -1)) return;
      var score = 0;
      shared.forEach(function (f) { score += 1 / df[f]; });
      scored.push([score, c, shared]);
    });
    scored.sort(function (a, b) {
      return (b[0] - a[0]) || (b[1].issues.length - a[1].issues.length) || (a[1].key < b[1].key ? -1 : a[1].key > b[1].key ? 1 : 0);
    });
    return scored.map(function (t) { return { cluster: t[1], line: null, exact: false, frames: t[2] }; });
  }

  /* A signature without its exception type, or "" when the rest says too little (signature.py message_of). */
  function messageOf(signature, C) {
    var message = signature.replace(C.exceptionType, "");
    return literalLength(message) >= C.minMessage ? message : "";
  }

  /* Both name a guilty place and they differ (index.py _elsewhere). */
  function elsewhere(e, c) {
    var specific = e.location && e.location !== e.helper;
    return !!(specific && c.location && c.location !== (c.helper || "") && e.location !== c.location);
  }

  function literalLength(signature) { return Array.from(signature.replace(/<\w+>|\s/g, "")).length; }

  /* The last lines of a paste that say something: the error is what a log prints last (signature.py last_lines). */
  function lastLines(text, C) {
    var lines = text.split(/\r\n|\r|\n/).filter(function (l) { return l.trim(); });
    return lines.slice(Math.max(0, lines.length - C.bareLines));
  }

  /* Lines that may be a message pasted alone (signature.py bare_lines). */
  function bareLines(text, C) {
    var out = [], seen = {};
    lastLines(text, C).forEach(function (raw) {
      var line = cleanLine(raw, C);
      if (!line || line.length > 500 || C.bareSkip.test(line) || C.kinds.some(function (kd) { return kd[1].test(line); })) return;
      var sig = reportedNormalise(line, C);
      if (literalLength(sig) < C.minBare || seen[sig]) return;
      seen[sig] = true;
      out.push({ kind: "message", line: line, signature: sig, location: "", helper: "", key: sig });
    });
    return out;
  }

  /* A message and its tails after each separator, ": " unless told, in order (index.py _tails). */
  function tails(message, separators) {
    var starts = {};
    (separators || [": "]).forEach(function (sep) {
      var at = message.indexOf(sep);
      while (at !== -1) { starts[at + sep.length] = true; at = message.indexOf(sep, at + sep.length); }
    });
    return [message].concat(Object.keys(starts).map(Number).sort(function (a, b) { return a - b; })
      .map(function (at) { return message.slice(at); }));
  }

  /* A message's first sentence when more follow, else "" (index.py _sentence). */
  function sentence(message) { var at = message.indexOf(". "); return at > 0 ? message.slice(0, at) : ""; }

  /* The last lines of a paste, each with the tails of its message in lower case (index.py _line_tails). */
  function lineTails(lines, C) {
    return lines.slice(Math.max(0, lines.length - C.maxCutLines)).map(function (e) {
      return [e, tails((messageOf(e.signature, C) || e.signature).toLowerCase())];
    });
  }

  /* Clusters whose message agrees with a pasted line's but for a cut (index.py match_cut). */
  function matchCut(lines, clusters, C) {
    var found = {}, chainedKinds = ["status", "check"];
    var mine = lineTails(lines, C);
    clusters.forEach(function (c) {
      if (c.generic || c.kind === "stack" || c.kind === "title") return;
      var theirs = (messageOf(c.signature, C) || c.signature).toLowerCase(), theirTails = tails(theirs);
      mine.forEach(function (pair) {
        var e = pair[0];
        if (elsewhere(e, c)) return;
        var chained = chainedKinds.indexOf(e.kind) !== -1 || chainedKinds.indexOf(c.kind) !== -1;
        pair[1].forEach(function (a, i) {
          for (var j = 0; j < theirTails.length; j++) {
            var b = theirTails[j], tail = i > 0 || j > 0;
            if (tail && !chained) break;
            var short = a.length <= b.length ? a : b, long = a.length <= b.length ? b : a;
            var weak, shared, first, how;
            if (long.indexOf(short) === 0 && (tail || short !== long)) {
              if (e.kind === "message" && short !== a) continue;  // a bare line is no error by itself: only it is cut
              weak = tail;
              shared = literalLength(short);
              how = tail ? "cause" : "cut";
            } else if (!tail && (first = sentence(a)) && first === sentence(b)) {
              weak = true;  // the same first sentence, then other explanations
              shared = literalLength(first);
              how = "sentence";
            } else {
              continue;
            }
            if (shared < (weak ? C.minTail : C.minCut)) continue;
            var best = found[c.key];
            if (!best || (best[0] === weak ? best[1] < shared : best[0] && !weak)) {
              found[c.key] = [weak, shared, theirs, { cluster: c, line: e.line, exact: false, frames: [], how: how }];
            }
          }
        });
      });
    });
    var all = Object.keys(found).map(function (k) { return found[k]; }), support = {};
    all.forEach(function (t) {
      support[t[3].cluster.key] = all.reduce(function (n, o) {
        return n + ((o[2].indexOf(t[2]) === 0 || t[2].indexOf(o[2]) === 0) ? o[3].cluster.issues.length : 0);
      }, 0);
    });
    all.sort(function (a, b) {
      return ((a[0] ? 1 : 0) - (b[0] ? 1 : 0)) || (b[1] - a[1]) || (support[b[3].cluster.key] - support[a[3].cluster.key]) ||
             (b[3].cluster.issues.length - a[3].cluster.issues.length) ||
             (a[3].cluster.key < b[3].cluster.key ? -1 : a[3].cluster.key > b[3].cluster.key ? 1 : 0);
    });
    var out = [], shown = {};
    all.forEach(function (t) {  // a report whose stored lines were cut at two places is in two clusters: named once
      var numbers = t[3].cluster.issues.map(function (r) { return r.number; });
      if (numbers.every(function (n) { return shown[n]; })) return;
      numbers.forEach(function (n) { shown[n] = true; });
      out.push(t[3]);
    });
    return out;
  }

  /* Its reports are all pull requests (index.py Cluster.pulls_only). */
  function pullsOnly(c) { return c.issues.length > 0 && c.issues.every(function (r) { return !!r.pull_request; }); }

  /* A hit names an issue: neither a bare fatal signal's nor only pull requests' (index.py _answered). */
  function answered(hits) { return hits.some(function (h) { return !h.cluster.generic && !pullsOnly(h.cluster); }); }

  /* Hits found as {key: [shared, hit]}, best first; their clusters are added to seen (index.py _ranked). */
  function ranked(found, seen) {
    var all = Object.keys(found).map(function (k) { return found[k]; });
    all.sort(function (a, b) {
      return (b[0] - a[0]) || (b[1].cluster.issues.length - a[1].cluster.issues.length) || cmpStr(a[1].cluster.key, b[1].cluster.key);
    });
    all.forEach(function (t) { seen[t[1].cluster.key] = true; });
    return all.map(function (t) { return t[1]; });
  }

  /* The title clusters whose title states a pasted line's error (index.py match_titles); adds them to seen. */
  function matchTitles(lines, clusters, seen, cut, C) {
    var found = {};
    var mine = lineTails(lines, C);
    clusters.forEach(function (c) {
      if (c.kind !== "title" || seen[c.key]) return;
      var theirs = tails(c.signature.toLowerCase(), C.titleSeparators);
      mine.forEach(function (pair) {
        if (cut && pair[0].kind === "message") return;  // a bare line is no error by itself
        pair[1].forEach(function (a, i) {
          theirs.forEach(function (b, j) {
            var least = i || j ? C.minTail : (cut ? C.minCut : C.minBare), said = literalLength(b);
            if (said < least) return;
            var hit = !cut ? a === b : a.length > b.length && a.indexOf(b) === 0 && !/[\p{L}\p{N}_]/u.test(a.charAt(b.length));
            if (hit && (!found[c.key] || found[c.key][0] < said)) {
              found[c.key] = [said, { cluster: c, line: pair[0].line, exact: false, frames: [], how: cut ? "title-cut" : "title" }];
            }
          });
        });
      });
    });
    return ranked(found, seen);
  }

  /* A catalog row's text when its lines are one message whatever values it was given (index.py template_text). */
  function templateText(row, C) {
    var kinds = row.kinds || [];
    if (row.text.indexOf("\u2026") === -1 || row.literal < C.minTail) return "";
    if (kinds.length && kinds.every(function (k) { return k === "warn"; })) return "";
    return row.text;
  }

  /* The clusters whose error instantiates a catalog template a pasted line does (index.py match_templates). */
  function matchTemplates(templates, clusters, seen) {
    var found = {};
    templates.forEach(function (t) {
      clusters.forEach(function (c) {
        if (seen[c.key] || c.generic || (c.templates || []).indexOf(t[0]) === -1) return;
        var said = literalLength(t[0].split("\u2026").join(""));
        if (!found[c.key] || found[c.key][0] < said) {
          found[c.key] = [said, { cluster: c, line: t[1], exact: false, frames: [], how: "template" }];
        }
      });
    });
    return ranked(found, seen);
  }

  /* The import statement a traceback stops at and the names it imports, or null (signature.py import_stop). */
  function importStop(text, C) {
    var best = null;
    [C.pyCode, C.ipythonCode].forEach(function (rx) {
      rx.lastIndex = 0;
      var m;
      while ((m = rx.exec(text)) !== null) {
        if (!best || m.index + m[0].length > best[0]) best = [m.index + m[0].length, m[1]];
        if (m[0].length === 0) rx.lastIndex++;
      }
    });
    if (!best) return null;
    var code = best[1].trim(), m = C.importStatement.exec(code);
    if (!m) return null;
    var parts = m[1] ? [m[1]].concat((m[2] || "").split(",")) : (m[3] || "").split(",");
    var names = [];
    parts.forEach(function (part) {
      var name = part.split(" as ")[0].trim();
      if (name && name.charAt(0) !== "." && name.length >= Math.floor(C.minMessage / 2) && names.indexOf(name) === -1) names.push(name);
    });
    return names.length ? [code, names] : null;
  }

  /* The clusters of an import error naming what a stack alone stops importing (index.py match_imports). */
  function matchImports(stop, clusters, seen, C) {
    if (!stop) return [];
    var wanted = stop[1].map(function (n) { return new RegExp("(?<![\\w.])" + escapeRe(n) + "(?:\\.so)?(?![\\w.])"); });
    var found = clusters.filter(function (c) {
      return !seen[c.key] && !c.generic && C.importError.test(c.signature) && wanted.some(function (rx) { return rx.test(c.signature); });
    });
    found.sort(function (a, b) { return (b.issues.length - a.issues.length) || cmpStr(a.key, b.key); });
    found.forEach(function (c) { seen[c.key] = true; });
    return found.map(function (c) { return { cluster: c, line: stop[0], exact: false, frames: [], how: "import" }; });
  }

  /* The upstream clusters a paste matches, best first (as xlakb.upstream.index.match); origins: the catalog's
     lines of the paste. */
  function reported(text, data, origins) {
    var U = data.upstream;
    if (!U || !U.clusters.length) return [];
    var bySig = {}, byMessage = {}, C = reportedRules(U);
    U.clusters.forEach(function (c) {
      if (c.kind === "title") return;  // a title is matched only by matchTitles
      (bySig[c.signature] = bySig[c.signature] || []).push(c);
      var m = messageOf(c.signature, C);
      if (m) (byMessage[m.toLowerCase()] = byMessage[m.toLowerCase()] || []).push(c);  // other letter case
    });
    var out = [], seen = {};
    // a fatal signal or a test's verdict with no guilty place is a consequence: the error it came of is the title
    var lines = reportedLines(text, U);
    var consequence = function (e) { return !e.location && (C.consequence.test(e.signature) || C.testVerdict.test(e.signature)); };
    if (lines.some(function (e) { return !consequence(e); })) lines = lines.filter(function (e) { return !consequence(e); });
    lines.forEach(function (e) {
      var same = bySig[e.signature] || [], message = messageOf(e.signature, C);
      var other = message ? (byMessage[message.toLowerCase()] || []).filter(function (c) { return same.indexOf(c) === -1; }) : [];
      same.concat(other).forEach(function (c) {
        if (elsewhere(e, c)) return;
        if (seen[c.key]) return;
        seen[c.key] = true;
        out.push({ cluster: c, line: e.line, exact: e.location === c.location && c.signature === e.signature, frames: [] });
      });
    });
    var kinds = ["check", "assert", "status", "lowering", "exception", "crash"];
    function rank(k) { var i = kinds.indexOf(k); return i === -1 ? 9 : i; }
    out.sort(function (a, b) {
      return ((!!a.cluster.generic) - (!!b.cluster.generic)) || (rank(a.cluster.kind) - rank(b.cluster.kind)) || ((!a.exact) - (!b.exact)) ||
             (b.cluster.issues.length - a.cluster.issues.length);
    });
    if (!answered(out)) {
      // a message pasted alone, without its type or a log's prefix, is known by its words (inexactly)
      var bare = bareLines(text, C), alone = [];
      bare.forEach(function (e) {
        (byMessage[e.signature.toLowerCase()] || []).forEach(function (c) {
          if (seen[c.key]) return;
          seen[c.key] = true;
          alone.push({ cluster: c, line: e.line, exact: false, frames: [], how: "alone" });
        });
      });
      // a report titled by the error, which its thread does not show as an error line
      var mine = lines.filter(function (e) { return !consequence(e); }).concat(bare);
      out = alone.concat(matchTitles(mine, U.clusters, seen, false, C), out);
      // a line cut short is the start of the stored one, or the stored one of it (index.py match_cut)
      if (!answered(out)) {
        var cut = matchCut(mine, U.clusters, C).filter(function (h) { return !seen[h.cluster.key]; });  // a pull request's is there
        out = cut.concat(matchTitles(mine, U.clusters, seen, true, C), out);
      }
      // the same catalog message with other values inserted (index.py match_templates)
      if (!answered(out)) {
        var templates = [];
        var all = text.split("\n");  // the whole line (the origin is only the template's part of it)
        (origins || []).forEach(function (o) { var t = templateText(o.row, C); if (t) templates.push([t, all[o.line - 1].trim()]); });
        out = matchTemplates(templates, U.clusters, seen).concat(out);
      }
    }
    if (!answered(out)) {
      // a paste showing its own error must share its innermost frame; a stack alone, any specific one
      var shown = lines.some(function (e) { return !consequence(e); });
      var imported = shown ? [] : matchImports(importStop(text, C), U.clusters, seen, C);
      var framed = matchFrames(guiltyFrames(text, C), U.clusters, shown, C).filter(function (h) { return !seen[h.cluster.key]; });
      out = imported.concat(framed, out);
    }
    // issues first, then pull requests, then a bare fatal signal's reports (a stable sort)
    return out.sort(function (a, b) {
      return ((!!a.cluster.generic) - (!!b.cluster.generic)) || (pullsOnly(a.cluster) - pullsOnly(b.cluster));
    });
  }

  function adviceText(a, id, words) {
    var fix = a.fixed_in ? words.fixed.replace("{fixed_in}", a.fixed_in) : words.unfixed;
    var code = a.code === "no-version" ? "no-version-site" : a.code;
    return words[code].replace(/\{version\}/g, a.version || "").replace(/\{id\}/g, id).replace("{fix}", fix)
      .replace(/\{fixed_in\}/g, a.fixed_in || "");
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  /* Inline Markdown of a record's text: `code` and **bold**, a link's words, everything else escaped. */
  function md(s) {
    return esc(s).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/\[([^\]]+)\]\([^)\s]+\)/g, "$1");
  }

  /* Python's re.escape (3.7+): each character it escapes, with a backslash before it. */
  function pyEscape(s) { return s.replace(/[()[\]{}?*+\-|^$\\.&~# \t\n\r\v\f]/g, "\\$&"); }

  /* catalog.template_pattern of a catalog row's text (… where a value goes); `check`: a check's condition ends there. */
  function templatePattern(text, check) {
    var pattern = text.split("\u2026").map(function (part) {
      return pyEscape(part.replace(/\s+/g, " ")).replace(/\\ /g, "\\s+");
    }).join("[^\\n]*?").trim();
    pattern = pattern.replace(/^(?:\\s\+)+|(?:\\s\+)+$/g, "");
    return check ? pattern + "(?=\\s|$|[,;'\\\"\\]])" : pattern;
  }

  /* The catalog as the site packs it (xlakb.sitegen.data.pack_triage) made into the rows `xlakb triage` reads. */
  function unpack(d) {
    var c = d.catalog;
    if (!c || !c.packed) return d;
    var places = c.places.map(function (p) { return { file: p[0], function: p[1], releases: p[2], callers: p[3] }; });
    d.catalog = c.rows.map(function (r) {
      var rel = c.releases[r[6]];
      return { pattern: typeof r[0] === "string" ? r[0] : templatePattern(r[2], r[0] === 1), key: r[1], text: r[2],
               literal: r[3], origins: c.origins[r[4]], places: r[5].map(function (i) { return places[i]; }),
               releases: rel[0], release_list: rel[1], kinds: c.kinds[r[7]], sign: !!r[8], generic: r[9] };
    });
    return d;
  }

  var loads = {};

  /* The data at `src` (assets/triage.json), unpacked: its gzipped copy where the browser can unzip (a fifth of the
   * bytes), else the JSON itself. One load per page. */
  function load(src) {
    if (loads[src]) return loads[src];
    function plain() {
      return fetch(src).then(function (r) { if (!r.ok) throw new Error(src + ": " + r.status); return r.json(); });
    }
    var got = typeof DecompressionStream === "undefined" ? plain() : fetch(src + ".gz").then(function (r) {
      if (!r.ok) throw new Error(src + ".gz: " + r.status);
      return r.arrayBuffer();
    }).then(function (buf) {
      var head = new Uint8Array(buf, 0, 2);
      if (head[0] !== 0x1f || head[1] !== 0x8b) return JSON.parse(new TextDecoder().decode(buf));  // unzipped on the way
      return new Response(new Blob([buf]).stream().pipeThrough(new DecompressionStream("gzip"))).json();
    }).catch(plain);
    loads[src] = got.then(unpack);
    loads[src].catch(function () { delete loads[src]; });
    return loads[src];
  }

  /* The paste box: <form class="xlakb-triage" data-src="...triage.json" data-lang="en" data-records="../records/">.
   * The answer is put below it, scrolled into view, announced (aria-live) and its heading focused; a click before the
   * data has arrived says it is loading and is answered when it arrives. */
  function setup() {
    var form = document.querySelector("form.xlakb-triage");
    if (!form) return;
    var lang = form.dataset.lang || "en";
    var out = form.parentNode.querySelector(".xlakb-triage-result");
    var t = JSON.parse(form.querySelector("script.xlakb-triage-words").textContent);
    var data = null, failed = false, waiting = false;

    function present(html, busy) {
      out.innerHTML = '<h2 class="xlakb-triage-head" tabindex="-1">' + esc(t.answer) + "</h2>\n" + html;
      out.setAttribute("aria-busy", busy ? "true" : "false");
      out.hidden = false;
      var head = out.querySelector(".xlakb-triage-head");
      head.focus({ preventScroll: true });
      head.scrollIntoView({ block: "start" });
    }

    function answer() {
      waiting = false;
      var text = form.querySelector("textarea").value;
      var version = form.querySelector("input[name=torch_xla]").value.trim();
      if (!text.trim()) { present('<p class="xlakb-triage-none">' + esc(t.empty) + "</p>"); return; }
      if (failed) { present('<p class="xlakb-triage-failed">' + esc(t.failed) + "</p>"); return; }
      if (!data) {
        waiting = true;
        present('<p class="xlakb-triage-loading">' + esc(t.loading) + "</p>", true);
        return;
      }
      var res = triage(text, data, version || null);
      global.xlakbLastTriage = res;
      present(render(res, data, t, lang, form.dataset.records));
    }

    load(form.dataset.src).then(function (d) {
      data = d;
      form.dataset.ready = "1";
      if (waiting) answer();
    }, function () {
      failed = true;
      form.dataset.failed = "1";
      if (waiting) answer();
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      answer();
    });
  }

  /* Why evidence is generic, in the page's language (the result itself keeps the engine's words). */
  function reason(text, t) {
    (t.reasons || []).forEach(function (r) { text = text.replace(new RegExp(r[0], "g"), r[1]); });
    return text;
  }

  function hitLine(h, t) {
    var what = h.signature.slice(h.kind.length + 1);
    return "<li>" + esc(t.matched) + " " + esc(t.kinds[h.kind] || h.kind) + " <code>" + esc(what) + "</code> " +
      esc(t.at_line.replace("{n}", h.line)) + "<code>" + esc(h.excerpt) + "</code>" +
      (h.generic ? ' <span class="xlakb-generic">[' + esc(t.generic) + ": " + esc(reason(h.generic, t)) + "]</span>" : "") + "</li>";
  }

  /* The error the paste shows, in its own words: the first error line the record was matched by. */
  function errorLine(m, t) {
    var h = m.matched.filter(function (x) { return x.kind === "message" || x.kind === "check"; })[0];
    return h ? '<p class="xlakb-triage-error"><strong>' + esc(t.your_error) + "</strong>" + t.gap + "<code>" + esc(h.excerpt) + "</code> " +
      esc(t.line.replace("{n}", h.line)) + "</p>" : "";
  }

  /* The evidence with the record's patterns, folded: the answer leads with words, not regular expressions. */
  function howMatched(m, t) {
    return '<details class="xlakb-triage-how"><summary>' + esc(t.how_matched) + "</summary><ul>" +
      m.matched.map(function (h) { return hitLine(h, t); }).join("") + "</ul></details>";
  }

  function render(res, data, t, lang, recordsHref) {
    var byId = {};
    data.records.forEach(function (r) { byId[r.id] = r; });
    var html = [];
    if (!res.torch_xla_signs.length && !res.matches.length) {
      // torch_xla's layers printed a line; else nothing known of torch_xla, but its users reported the same error
      html.push('<p class="xlakb-triage-none">' + esc(res.layers.length && !res.other_backends.length ? t.layer_sign.replace("{layers}",
        res.layers.map(function (x) { return t.layer_names[x]; }).join(t.layer_sep)) :
        (res.upstream && res.upstream.length && !res.other_backends.length ? t.reported_sign : t.no_xla)) + "</p>");
    }
    if (res.other_backends.length && !res.torch_xla_signs.length) {
      html.push('<p class="xlakb-triage-none">' + esc(t.other_backend.replace("{names}", res.other_backends.join(", "))) + "</p>");
    }
    if (!res.matches.length) html.push('<p class="xlakb-triage-none">' + esc(t.no_match) + "</p>");
    if (!res.matches.length && res.stack_only && !(res.upstream && res.upstream.length)) {
      html.push('<p class="xlakb-triage-stack-only">' + esc(t.stack_only) + "</p>");
    }
    html.push('<p class="xlakb-triage-version">' + esc(res.torch_xla ? t.version_found.replace("{v}", res.torch_xla) : t.no_version) + "</p>");
    if (res.ambiguous) html.push('<p class="xlakb-triage-ambiguous">' + esc(t.ambiguous) + "</p>");
    var strong = res.matches.filter(function (m) { return m.strength === "strong"; });
    if (strong.length > 1) {
      html.push('<div class="xlakb-triage-group"><p>' + esc(t.group) + "</p><ul>" + strong.map(function (m) {
        var tells = (byId[m.id].tells_apart || {})[lang];
        return tells ? "<li><strong>" + esc(m.id) + "</strong>: " + md(tells) + "</li>" : "";
      }).join("") + "</ul></div>");
    }
    var possibleShown = false;
    res.matches.forEach(function (m, i) {
      var rec = byId[m.id];
      if (m.strength === "possible" && !possibleShown) {
        possibleShown = true;
        html.push('<h3 class="xlakb-triage-possible">' + esc(t.possible) + "</h3>");
      }
      html.push('<div class="xlakb-triage-match" data-id="' + esc(m.id) + '" data-strength="' + m.strength + '">' +
        "<h3>" + (i + 1) + '. <a href="' + esc(recordsHref + m.id + "/") + '">' + md(rec.title[lang]) + "</a> " +
        '<span class="xlakb-badge xlakb-strength-' + esc(m.strength) + '">' + esc(t.strength[m.strength]) + "</span>" +
        (rec.kind === "limitation" ? ' <span class="xlakb-badge xlakb-limitation">' +
          esc(t.limitation.replace("{fixed_in}", rec.fixed_in || "")) + "</span>" : "") + "</h3>" +
        errorLine(m, t) +
        (rec.summary ? '<p class="xlakb-triage-summary"><strong>' + esc(t.what_it_is) + "</strong>" + t.gap + md(rec.summary[lang]) + "</p>" : "") +
        '<p class="xlakb-triage-advice">' + md(adviceText(m.advice, m.id, data.advice[lang])) + "</p>" +
        '<p class="xlakb-triage-workaround"><strong>' + esc(t.workaround) + "</strong>" + t.gap + md(rec.workaround[lang]) + "</p>" +
        howMatched(m, t) + "</div>");
    });
    if (res.stacked && res.stacked.length) {
      // a stack-only paste whose stack leaves torch_xla where records' bugs fail: names none (triage.py stacked)
      html.push('<h3 class="xlakb-triage-stacked">' + esc(t.stacked) + "</h3><ul>" + res.stacked.map(function (m) {
        return '<li data-id="' + esc(m.id) + '"><a href="' + esc(recordsHref + m.id + "/") + '">' + md(byId[m.id].title[lang]) + "</a>" +
          howMatched(m, t) + "</li>";
      }).join("") + "</ul>");
    }
    if (res.related.length) {
      html.push('<h3 class="xlakb-triage-related">' + esc(t.related) + "</h3><ul>" + res.related.map(function (m) {
        return '<li data-id="' + esc(m.id) + '"><a href="' + esc(recordsHref + m.id + "/") + '">' + md(byId[m.id].title[lang]) + "</a>" +
          howMatched(m, t) + "</li>";
      }).join("") + "</ul>");
    }
    if (res.origins.length) {
      html.push('<h3 class="xlakb-triage-origins">' + esc(t.origins) + "</h3><ul>" + res.origins.map(function (o) {
        var places = o.places.slice(0, 4).map(function (p) {
          return "<li>" + esc(t.printed.replace("{who}", (p.file + " " + p.function).trim()).replace("{releases}", p.releases)) + "</li>";
        }).join("");
        if (o.origins.length === 1 && o.origins[0] === "xla") places = "<li>" + esc(t.xla_only) + " " + esc(o.releases) + "</li>";
        return "<li>" + esc(t.line.replace("{n}", o.line)) + ": <code>" + esc(o.excerpt) + "</code><ul>" + places +
          (o.generic ? "<li>" + esc(t.helper.replace("{why}", reason(o.generic, t))) + "</li>" : "") +
          (o.note ? "<li>" + esc(t.not_in_release.replace("{v}", res.torch_xla)) + "</li>" : "") + "</ul></li>";
      }).join("") + "</ul>");
    }
    if (res.upstream && res.upstream.length) {
      html.push('<h3 class="xlakb-triage-reported">' + esc(t.reported) + '</h3><ul class="xlakb-triage-reported">' +
        res.upstream.slice(0, 5).map(function (h) {
          var c = h.cluster;
          var open = c.issues.filter(function (r) { return r.state === "open"; });
          var lead = (open.length ? open : c.issues).slice().sort(function (a, b) {
            return cmpStr(b.created_at || "", a.created_at || "") || (b.number - a.number);
          })[0];
          var dates = c.issues.map(function (r) { return r.created_at; }).filter(Boolean).sort();
          var bits = [t.reported_state[lead.state]];
          if (c.issues.length > 1) bits.push(t.reported_more.replace("{n}", c.issues.length));
          if (dates.length) bits.push(t.reported_since.replace("{date}", dates[0].slice(0, 7)));
          var others = c.issues.filter(function (r) { return r.number !== lead.number; }).slice(0, 8).map(function (r) {
            return '<a href="' + esc(r.url) + '" rel="noopener">#' + r.number + "</a>";
          });
          var fixes = c.fixed_by || [];  // the data leaves empty lists out (index.py Cluster.to_json)
          var fix = fixes.length ? t.reported_fix.replace("{prs}", fixes.map(function (n) { return "#" + n; }).join(", ")) +
            (c.first_fixed ? " " + t.reported_first.replace("{release}", c.first_fixed) : "") : "";
          var recs = (c.records || []).map(function (id) { return '<a href="' + esc(recordsHref + id + "/") + '">' + esc(id) + "</a>"; });
          return '<li data-issue="' + lead.number + '"><a href="' + esc(lead.url) + '" rel="noopener">#' + lead.number + "</a> " +
            esc(lead.title) + (lang === "zh" ? "（" + esc(bits.join(t.sep)) + "）" : " (" + esc(bits.join(t.sep)) + ")") +
            (c.causes || []).slice(0, 2).map(function (x) {
              return '<br><span class="xlakb-triage-cause">' + esc(t.reported_cause.replace("{by}", x.by).replace("{issue}", x.issue)
                .replace("{cause}", lang === "zh" ? x.zh : x.en)) + "</span>";
            }).join("") +
            (h.how ? "<br>" + esc(t.reported_how[h.how]) : "") +
            (h.line === null && (h.frames || []).length ? "<br>" + esc(t.reported_frames.replace("{frames}",
              h.frames.map(function (f) { return f.slice(f.indexOf(":") + 1); }).join(", "))) : "") +
            (others.length ? "<br>" + esc(t.reported_also) + " " + others.join(", ") : "") +
            (fix ? "<br>" + esc(fix) : "") +
            (pullsOnly(c) ? "<br>" + esc(t.reported_pull) : "") +
            ((c.stale || []).length ? "<br>" + esc(t.reported_stale.replace("{issues}", c.stale.map(function (n) { return "#" + n; }).join(", "))) : "") +
            (recs.length ? "<br>" + esc(t.reported_record) + " " + recs.join(", ") : "") +
            (c.generic ? '<br><span class="xlakb-triage-generic">' + esc(c.test ? t.reported_test : t.reported_crash) + "</span>" :
             h.generic ? '<br><span class="xlakb-triage-generic">' + esc(t.reported_generic) + "</span>" : "") + "</li>";
        }).join("") + "</ul>");
    }
    if (!strong.length && res.search) {
      html.push('<p class="xlakb-triage-search">' + esc(t.search) + ' <a href="' + esc(res.search) + '" rel="noopener">' + esc(t.search_link) + "</a></p>");
    }
    return html.join("\n");
  }

  global.xlakbTriage = { triage: triage, facts: facts, normalize: normalize, reportedLines: reportedLines, load: load };
  if (typeof document !== "undefined") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
    else setup();
  }
})(this);
