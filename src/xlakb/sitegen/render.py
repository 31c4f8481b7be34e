"""Markdown for the generated pages, one language at a time.  Pure functions: data in, text out.

Record texts are Markdown written by contributors and are passed through; anything
else that lands in raw HTML (measured details, commit subjects, regexes) is escaped.
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from html import escape

from ..errors import XlakbError
from ..published import md_code as _md_code
from ..records import claim
from ..results import candidate_order
from ..words import ui
from .data import SiteRecord

LANGS = ("en", "zh")


UI = ui()  # interface strings by language: data/ui.yaml

# Parts of a record page that are no text to search for are put in place of these markers
# after Material's search has indexed the page: less to parse twice per page and language.
SOURCE_MARKER = "<!-- xlakb:reproducer-source -->"
MATRIX_MARKER = "<!-- xlakb:matrix-table -->"
REPORTED_MARKER = "<!-- xlakb:reported -->"

LABEL_WORDS = {"en": UI["en"]["verdict"], "zh": UI["zh"]["verdict"]}


def _fence(text: str, lang: str = "", title: str | None = None) -> str:
    """A fenced code block that survives backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    head = fence + lang
    if title:
        head += f' title="{title}"'
    return f"{head}\n{text.rstrip()}\n{fence}"


def source_block(rec: SiteRecord) -> str:
    """The reproducer's source as a fenced block (Markdown), titled with its path."""
    return _fence(rec.source, "python", title=rec.data["reproducer"]["path"])


def _code(text: str) -> str:
    """Inline code in raw HTML."""
    return f"<code>{escape(text)}</code>"


def _date(stamp: str | None) -> str:
    return (stamp or "")[:10]


def _paren(text: str, lang: str) -> str:
    """A parenthesis after a word: full-width beside Chinese, with no space before it."""
    return f"（{text}）" if lang == "zh" else f" ({text})"


def _a(url: str, text: str) -> str:
    return f'<a href="{escape(url)}">{escape(text)}</a>'


def _gh(repo: str, kind: str, number: int) -> str:
    return f"https://github.com/{repo}/{kind}/{number}"


def status_badge(status: str, lang: str) -> str:
    label = UI[lang]["status"].get(status, status)
    return f'<span class="xlakb-badge xlakb-status-{escape(status)}" data-status="{escape(status)}">{escape(label)}</span>'


def verdict_cell(verdict: str, lang: str, extra: str = "") -> str:
    label = UI[lang]["verdict"].get(verdict, verdict)
    return (
        f'<td class="xlakb-verdict xlakb-verdict-{escape(verdict)}" data-verdict="{escape(verdict)}"{extra}>{escape(label)}</td>'
    )


def trigger_url(trigger: dict) -> str:
    """A mined record's upstream test, at its commit, on GitHub."""
    line = f"#L{trigger['line']}" if trigger.get("line") else ""
    return f"https://github.com/{trigger['repo']}/blob/{trigger['commit']}/{trigger['path']}{line}"


def mined_note(rec: SiteRecord, lang: str) -> str:
    """For a mined record: where it came from, that its verdicts are measured and its text a draft."""
    d = rec.data
    if d.get("source") != "mined":
        return ""
    t = UI[lang]
    m = d.get("mined", {})
    trigger = d["reproducer"]["trigger"]
    fix = f"[PR #{m['pr']}]({_gh(d['upstream']['repo'], 'pull', m['pr'])})" if m.get("pr") else _md_code(m["commit"][:10])
    fixed_in = d["versions"].get("fixed_in") or "?"
    before = ""
    releases = _known_releases()
    if fixed_in in releases and releases.index(fixed_in) > 0:
        before = releases[releases.index(fixed_in) - 1]
    text = t["mined_note"].format(fix=fix, test=_md_code(trigger["test"]), before=before or "?", fixed_in=fixed_in)
    return f'!!! info "{t["record_source"]["mined"]}"\n\n    ' + text.strip()


def run_command(rec: SiteRecord) -> str:
    env = rec.data["environment"]
    parts = ["PJRT_DEVICE=CPU", f"CPU_NUM_DEVICES={env['devices']}"]
    parts += [f"{k}={shlex.quote(v)}" for k, v in sorted(env.get("env", {}).items())]
    return " ".join(parts) + f" python {rec.data['reproducer']['path']}"


@lru_cache(maxsize=1)
def _known_releases() -> tuple[str, ...]:
    try:
        from ..candidates.releases import all_releases

        return tuple(sorted(all_releases(), key=candidate_order))
    except (ImportError, OSError, XlakbError):  # optional here: the page shows <release> instead
        return ()


def example_release(rec: SiteRecord, verdict: str) -> str | None:
    """A release for the how-to-run commands: the newest one measured with ``verdict``,
    else the newest one the record claims affected (or the first claimed fixed)."""
    matrix = rec.measured.matrix
    if matrix:
        found = [r["candidate"] for r in matrix["results"] if r["verdict"] == verdict and r.get("kind", "release") == "release"]
        if found:
            return found[-1]
    want = verdict == "reproduced"
    claimed = [v for v in _known_releases() if claim(rec.data, v) is want]
    if not claimed:
        return None
    return claimed[-1] if want else claimed[0]


def front_matter(meta: dict) -> str:
    # JSON is YAML: every string is quoted, whatever it holds.
    lines = ["---"] + [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items()] + ["---", ""]
    return "\n".join(lines)


# a Markdown code span: a run of backticks, the code, the same run (``a `b` c`` holds a backtick)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def _span_text(code: str) -> str:
    """A code span's text: one space each side is padding when both are there (`` `x` ``)."""
    return code[1:-1] if len(code) > 2 and code.startswith(" ") and code.endswith(" ") else code


def plain(text: str) -> str:
    """Markdown text as plain text for <title> and descriptions: code ticks and emphasis stars go."""
    text = _CODE_SPAN.sub(lambda m: _span_text(m.group(2)), text)
    return re.sub(r"\s+", " ", re.sub(r"\*\*?", "", text)).strip()


def _quoted(text: str, lang: str) -> str:
    """Text quoted from upstream (an issue title, a commit subject, a label) in raw HTML: on a Chinese page it is
    English the reader searches for word for word, shown as code; on an English page it reads as text."""
    return _code(text) if lang == "zh" else escape(text)


def record_page(rec: SiteRecord, lang: str, contributing_href: str) -> str:
    """The Markdown of one record page in ``lang``."""
    t = UI[lang]
    d = rec.data
    rid = rec.id
    repo = d["upstream"]["repo"]
    out: list[str] = []
    out.append(
        front_matter(
            {
                "title": plain(d["title"][lang]),
                # the theme puts it in an attribute as it is: a quote in the summary (backend="openxla") ended it
                "description": escape(plain(d["summary"][lang])[:300], quote=True),
                "tags": list(d["tags"]),
            }
        )
    )
    out.append(f"# {d['title'][lang]}\n")
    limitation = d.get("kind") == "limitation"
    badge = (
        f'<span class="xlakb-badge xlakb-limitation" data-status="limitation">'
        f"{escape(t['limitation_badge'].format(fixed_in=d['versions'].get('fixed_in', '?')))}</span>"
        if limitation
        else status_badge(d["status"], lang)
    )
    out.append(
        f'<p class="xlakb-meta" data-record="{escape(rid)}">{badge}'
        f'<span class="xlakb-component">{escape(t["component"])}{t["colon"]}<a href="../../components/{escape(d["component"])}/">{_code(d["component"])}</a></span>'
        f'<span class="xlakb-id">{escape(t["record_id"])}{t["colon"]}{_code(rid)}</span></p>\n'
    )
    if limitation:
        out.append(
            f'!!! note "{t["limitation_badge"].format(fixed_in=d["versions"].get("fixed_in", "?"))}"\n\n    '
            + t["limitation_note"].format(fixed_in=d["versions"].get("fixed_in", "?")).strip()
            + "\n"
        )
    out.append(d["summary"][lang].strip() + "\n")
    mined = mined_note(rec, lang)
    if mined:
        out.append(mined + "\n")

    out.append(f"## {t['symptoms']} {{ #symptoms }}\n")
    out.extend(f"- {s.strip()}" for s in d["symptoms"][lang])
    out.append("")

    out.append(f"## {t['root_cause']} {{ #root-cause }}\n")
    out.append(d["root_cause"][lang].strip() + "\n")
    out.append(f"## {t['versions']} {{ #versions }}\n")
    v = d["versions"]
    out.append(f"- {t['claimed_affected']}{t['colon']}{_md_code(v['affected'])}")
    floor = range_text(rec, lang)
    if floor:
        out.append(f"- {floor}")
    if v.get("fixed_in"):
        out.append(f"- {t['fixed_in']}{t['colon']}{_md_code(v['fixed_in'])}")
    if v.get("nightly_fixed"):
        out.append(f"- {t['nightly_fixed']}{t['colon']}{_md_code(str(v['nightly_fixed']))}")
    out.append("")
    if v.get("notes"):
        out.append(v["notes"][lang].strip() + "\n")

    out.append(f"## {t['workaround']} {{ #workaround }}\n")
    out.append(d["workaround"][lang].strip() + "\n")
    verified = workaround_html(rec, lang)
    if verified:
        out.append(verified + "\n")

    out.append(f"## {t['matrix']} {{ #matrix }}\n")
    out.append(matrix_intro(rec, lang) + "\n")
    if rec.measured.matrix and rec.measured.matrix["results"]:
        # The table is data, not prose: the hooks put it in after indexing (see SOURCE_MARKER).
        out.append(MATRIX_MARKER + "\n")

    from ..signatures import signatures_of

    # what the paste box and the reproducer match are patterns (regular expressions), not words for people:
    # folded under "How it was matched", after what the bug is, which release fixes it and how to work around it
    out.append(f"## {t['signatures']} {{ #signatures }}\n")
    out.append(f'<details class="xlakb-matched" markdown="1">\n<summary>{escape(t["triage"]["how_matched"])}</summary>\n')
    evidence = signatures_of(d)
    if evidence:
        out.append(t["evidence_intro"] + "\n")
        for sig in evidence:
            what = (
                f"{sig.file}" + (f" :: {sig.function}" if sig.function else "")
                if sig.kind == "frame"
                else sig.name + (f"={sig.pattern}" if sig.pattern else "")
                if sig.kind == "env"
                else sig.pattern
            )
            out.append(f"- {t['kind_names'][sig.kind]}{t['colon']}{_md_code(what)}")
        out.append("")
    out.append(t["signatures_intro"] + "\n")
    out.extend(f"- {_md_code(p)}" for p in dict.fromkeys(d["reproducer"]["signatures"]))
    out.append("\n</details>\n")

    env = d["environment"]
    out.append(f"## {t['environment']} {{ #environment }}\n")
    rows = [
        (t["hardware"], t["hardware_names"].get(env["hardware"], env["hardware"])),
        (t["devices"], str(env["devices"])),
        (t["env"], ", ".join(_md_code(f"{k}={v}") for k, v in sorted(env.get("env", {}).items())) or t["none"]),
        (t["packages"], ", ".join(_md_code(p) for p in env.get("packages", [])) or t["none"]),
    ]
    if env.get("python"):
        rows.append((t["python"], env["python"]))
    out.append(f"| {t['env_th'][0]} | {t['env_th'][1]} |\n|---|---|")
    out.extend(f"| {k} | {v.replace('|', '&#124;')} |" for k, v in rows)
    out.append("")

    repro = d["reproducer"]
    out.append(f"## {t['reproducer']} {{ #reproducer }}\n")
    out.append(f"- {t['fidelity']}{t['colon']}{t['fidelity_names'].get(repro['fidelity'], repro['fidelity'])}")
    out.append(f"- {t['timeout']}{t['colon']}{repro['timeout']} s")
    out.append("")
    if repro.get("proxy_checks"):
        out.append(f'!!! note "{t["proxy_checks"]}"\n')
        out.extend("    " + line for line in repro["proxy_checks"][lang].strip().splitlines())
        out.append("")
    trigger = repro.get("trigger")
    if trigger:
        out.append(
            f"- {t['upstream_test']}{t['colon']}[{_md_code(trigger['test'])}]({trigger_url(trigger)}) "
            f"({_md_code(trigger['path'])})\n"
        )
        out.append(t["trigger_note"].format(commit=_md_code(trigger["commit"][:10])) + "\n")
    affected_example = example_release(rec, "reproduced") or "<release>"
    fixed_example = example_release(rec, "not-reproduced")
    cmds = [f"xlakb repro {rid} --torch-xla {affected_example}"]
    if fixed_example:
        cmds.append(f"xlakb repro {rid} --torch-xla {fixed_example}")
    out.append(t["run_xlakb"] + "\n")
    out.append(_fence("\n".join(cmds), "bash") + "\n")
    if not trigger:
        out.append(t["run_direct"] + "\n")
        out.append(_fence(run_command(rec), "bash") + "\n")
        out.append(t["exit_codes"] + "\n")
        # The source is long and not prose: it stays out of the search index. The hooks put
        # it in place of SOURCE_MARKER after indexing (highlighted once for both languages).
        out.append(f"### {t['source']} {{ #source data-search-exclude }}\n")
        out.append(SOURCE_MARKER + "\n")

    out.append(f"## {t['bisect']} {{ #bisect }}\n")
    if rec.measured.bisects:
        for report in rec.measured.bisects:
            out.append(bisect_html(report, repo, lang) + "\n")
    else:
        out.append(t["not_bisected"].format(id=rid) + "\n")

    up = d["upstream"]
    out.append(f"## {t['upstream']} {{ #upstream }}\n")
    for key, kind in (("issues", "issues"), ("fixed_by", "pull"), ("introduced_by", "pull"), ("related", "issues")):
        numbers = up.get(key) or []
        if numbers:
            links = ", ".join(f"[{repo}#{n}]({_gh(repo, kind, n)})" for n in numbers)
            out.append(f"- {t[key]}{t['colon']}{links}")
    for link in up.get("links", []):
        out.append(f"- {t['links']}{t['colon']}<{link}>")
    out.append("")

    terms = record_terms(d)
    if terms:
        pairs = [f"{escape(z)}（{escape(e)}）" if lang == "zh" else f"{escape(e)} ({escape(z)})" for z, e in terms]
        gap = "" if lang == "zh" else " "  # a Chinese colon needs no space after it
        out.append(f'<p class="xlakb-terms">{escape(t["terms"])}{gap}{" · ".join(pairs)}</p>\n')

    out.append(f"## {t['contribute']} {{ #contribute }}\n")
    out.append(t["contribute_text"].format(href=contributing_href) + "\n")
    return "\n".join(out)


def range_text(rec: SiteRecord, lang: str) -> str:
    """ "Affected from X" where that is a fact, "affected at least from X" where older releases could not
    say (:func:`xlakb.results.affected_range_text`); '' when nothing reproduced it."""
    from ..results import affected_range_text

    return affected_range_text(rec.data, (rec.measured.matrix or {}).get("results", []), list(_known_releases()), lang)


LIMITATIONS_MARKER = "<!-- xlakb:limitations -->"
MEASUREMENTS_MARKER = "<!-- xlakb:measurements -->"


def measurements_page(results: list[dict], lang: str) -> str:
    """What the benchmarks wrote (``benchmarks/results/*.json``): per benchmark, its command, date and machine,
    then each figure in ``lang``. Nothing here is typed by hand."""
    t = UI[lang]["measurements"]
    if not results:
        return t["none"] + "\n"
    out = []
    for r in sorted(results, key=lambda r: r["benchmark"]):
        host = r.get("host", {})
        out.append(f"## {r['title'][lang]}\n")
        out.append(t["how"].format(command=_md_code(r["command"]), date=r["date"], cpus=host.get("cpus", "?")) + "\n")
        out.append(f"| {t['figure']} | {t['value']} | {t['note']} |\n|---|---:|---|")
        for f in r["figures"]:
            value = f"{f['value']} {f.get('unit', '')}".strip()
            note = (f.get("note") or {}).get(lang, "")
            out.append(f"| {_inline_md(f['what'][lang])} | {escape(value)} | {_inline_md(note)} |")
        out.append("")
    return "\n".join(out)


def _inline_md(text: str) -> str:
    """Text for a table cell: Markdown code spans kept, the rest escaped, pipes never breaking the row."""
    return escape(text).replace("|", "&#124;")


def limitations_page(limitations: list[SiteRecord], lang: str, href) -> str:
    """The limitations releases lifted, newest release first: what was not supported, the refusal older
    releases print, the change that lifted it, each linked to its page with the measured matrix."""
    t = UI[lang]
    if not limitations:
        return t["limitations_empty"] + "\n"
    by_release: dict[str, list[SiteRecord]] = {}
    for rec in limitations:
        by_release.setdefault(rec.data["versions"].get("fixed_in") or "?", []).append(rec)
    out = []
    order = {r: i for i, r in enumerate(_known_releases())}
    for release in sorted(by_release, key=lambda r: order.get(r, -1), reverse=True):
        out.append(f"## {t['limitations_lifted'].format(release=release)}\n")
        for rec in sorted(by_release[release], key=lambda r: r.data["title"][lang]):
            d = rec.data
            fixes = ", ".join(f"[PR #{n}]({_gh(d['upstream']['repo'], 'pull', n)})" for n in d["upstream"].get("fixed_by", []))
            refusal = d["symptoms"][lang][0].strip() if d["symptoms"][lang] else ""
            out.append(f"- [{d['title'][lang]}]({href(rec.id)}){t['colon']}{refusal}" + (_paren(fixes, lang) if fixes else ""))
        out.append("")
    return "\n".join(out)


def workaround_html(rec: SiteRecord, lang: str) -> str:
    """What was measured of the workaround: the releases where its variant of the reproducer did not show the
    bug (measured reproduced there), and where it did; "" when the record declares no variant."""
    from ..results import workaround_holds

    t = UI[lang]
    variant = rec.data["reproducer"].get("workaround")
    if not variant:
        return ""
    how = " ".join([*variant.get("args", []), *(f"{k}={v}" for k, v in variant.get("env", {}).items())])
    rows = (rec.measured.workaround or {}).get("results", [])
    if not rows:
        return f'<p class="xlakb-workaround-check">{escape(t["workaround_unmeasured"].format(how=how))}</p>'
    holds = workaround_holds(rec.measured.matrix, rec.measured.workaround)
    bug = {r["candidate"] for r in (rec.measured.matrix or {}).get("results", []) if r["verdict"] == "reproduced"}
    fails = [r["candidate"] for r in rows if r["candidate"] in bug and r["verdict"] == "reproduced"]
    parts = []
    if holds:
        parts.append(t["workaround_holds"].format(releases=_release_runs(holds), how=how))
    if fails:
        parts.append(t["workaround_fails"].format(releases=_release_runs(fails)))
    if not parts:
        parts.append(t["workaround_none"].format(how=how))
    return f'<p class="xlakb-workaround-check">{_inline_md_code(escape(" ".join(parts)))}</p>'


def _release_runs(releases: list[str]) -> str:
    """``2.4.0–2.5.1, 2.7.0``: runs of consecutive known releases."""
    known = list(_known_releases()) or sorted(releases, key=candidate_order)
    index = {v: i for i, v in enumerate(known)}
    runs: list[list[str]] = []
    for v in sorted(releases, key=candidate_order):
        if runs and v in index and runs[-1][-1] in index and index[v] == index[runs[-1][-1]] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def record_terms(d: dict) -> list[tuple[str, str]]:
    """(Chinese, English) of the glossary terms a record uses in either language: shown on both pages, so a
    search in either language finds the record."""
    from ..glossary import used

    text = " ".join(
        [
            d["title"]["en"],
            d["summary"]["en"],
            *d["symptoms"]["en"],
            d["root_cause"]["en"],
            d["title"]["zh"],
            d["summary"]["zh"],
            *d["symptoms"]["zh"],
            d["root_cause"]["zh"],
        ]
    )
    return [(term.zh, term.english) for term in used(text)]


def matrix_intro(rec: SiteRecord, lang: str) -> str:
    t = UI[lang]
    matrix = rec.measured.matrix
    if not matrix or not matrix["results"]:
        return f'<p class="xlakb-not-measured">{_inline_md_code(t["not_measured"].format(id=escape(rec.id)))}</p>'
    return f"<p>{escape(t['matrix_intro'].format(runner=str(matrix.get('runner', '?'))))}</p>"


def matrix_table(rec: SiteRecord, lang: str) -> str:
    """The affected-versions table as measured: one row per candidate, one verdict cell each."""
    t = UI[lang]
    matrix = rec.measured.matrix
    if not matrix or not matrix["results"]:
        return ""
    rows = []
    for r in matrix["results"]:
        c = claim(rec.data, r.get("torch_xla") or r["candidate"]) if r.get("kind", "release") == "release" else None
        claim_text = {True: t["claim_affected"], False: t["claim_fixed"], None: t["claim_none"]}[c]
        disagree = (c is True and r["verdict"] == "not-reproduced") or (c is False and r["verdict"] == "reproduced")
        mark = f' <span class="xlakb-disagree" title="{escape(t["disagrees"])}">⚠</span>' if disagree else ""
        detail_text, detail_html = _detail(r.get("detail", ""), lang)
        title = f' title="{escape(detail_text)}"' if detail_text else ""
        # Lean markup: every record page in every language carries one.
        rows.append(
            f'<tr data-candidate="{escape(r["candidate"])}">\n'
            f"<td>{escape(r['candidate'])}</td>\n"
            f"<td>{escape(str(r.get('torch', '')))}</td>\n"
            + verdict_cell(r["verdict"], lang, title)
            + f"\n<td>{escape(claim_text)}{mark}</td>\n"
            f"<td>{escape(_date(r.get('measured_at')))}</td>\n"
            f'<td class="xlakb-detail">{detail_html}</td>\n'
            "</tr>"
        )
    legend = " · ".join(
        f'<span class="xlakb-verdict xlakb-verdict-{v}">{escape(t["symbol"][v])} {escape(t["verdict"][v])}</span>'
        for v in t["verdict"]
    )
    return (
        f'<div class="xlakb-scroll"><table class="xlakb-matrix" data-record="{escape(rec.id)}" data-search-exclude>\n'
        f"<thead><tr><th>{t['th_release']}</th><th>{t['th_torch']}</th><th>{t['th_verdict']}</th>"
        f"<th>{escape(t['th_claim'])}</th><th>{escape(t['th_date'])}</th><th>{escape(t['th_detail'])}</th></tr></thead>"
        f"<tbody>\n{chr(10).join(rows)}\n</tbody></table></div>\n"
        f'<p class="xlakb-legend">{escape(t["legend"])}{t["colon"]}{legend}</p>'
    )


_DETAIL = re.compile(r"^exit (-?\d+)(?:(, signature matched: )|(: ))?(.*)$", re.S)


def _detail(detail: str, lang: str) -> tuple[str, str]:
    """A probe's detail (``exit 1, signature matched: <output>``) in the page's language: the runner's words
    translated, the program's own output quoted as code. (plain text for a tooltip, HTML)"""
    m = _DETAIL.match(detail or "")
    if not m:
        return detail or "", escape(detail or "")
    t = UI[lang]
    head = t["detail_exit"].format(code=m.group(1))
    if m.group(2):
        head += t["detail_matched"]
    elif m.group(3):
        head += t["detail_said"]
    rest = m.group(4)
    return head + rest, escape(head) + (_code(rest) if rest else "")


def _inline_md_code(text: str) -> str:
    """Turn `x` spans (and ``x `y` z`` ones) of an already escaped text into <code>."""
    return _CODE_SPAN.sub(lambda m: f"<code>{_span_text(m.group(2))}</code>", text)


def confidence_reason(reason: str, t: dict) -> str:
    """A reason the engine gave for a report's confidence, in the page's language: the engine writes the fixed
    English forms of ``confidence_reasons`` (ui.yaml), which a Chinese page says in Chinese."""
    for form in t.get("confidence_reasons", ()):
        m = re.match(form["pattern"], reason)
        if m:
            groups = {k: v or "" for k, v in m.groupdict().items()}
            if "more" in groups:
                groups["more"] = form["more"].format(more=groups["more"]) if groups["more"] else ""
            return form["text"].format(**groups)
    return reason


def _reason_html(reason: str, t: dict, lang: str) -> str:
    """A confidence reason in the page's language; one the engine wrote in a form ui.yaml does not know yet stays
    in the engine's words, quoted as code on a Chinese page (the report's literal, not a sentence of the page)."""
    said = confidence_reason(reason, t)
    return _code(said) if lang == "zh" and said == reason else escape(said)


def _confidence_item(report: dict, t: dict, lang: str = "en") -> str:
    conf = report.get("confidence")
    if not conf:
        return ""
    sep = "；" if lang == "zh" else "; "
    reasons = sep.join(_reason_html(str(x), t, lang) for x in report.get("confidence_reasons", []))
    return (
        f"<li>{escape(t['confidence'])}{t['colon']}<strong>{escape(t['confidence_names'].get(conf, conf))}</strong>"
        + (_paren(reasons, lang) if reasons else "")
        + "</li>"
    )


def _verdict_words(verdict: object, lang: str) -> tuple[str, str]:
    """(symbol, name) of a verdict in ``lang``: a cell says what it means without its colour."""
    t = UI[lang]
    v = str(verdict) if verdict else "none"
    return t["symbol"].get(v, "?"), t["verdict"].get(v, t["not_measured_cell"])


def _strip_item(head: str, cells: list[tuple[object, object]], lang: str) -> str:
    """A list item with one cell per (verdict, text): a symbol and the text, named for screen readers and
    in a tooltip in the page's language, and coloured (colour repeats what the symbol says)."""
    t = UI[lang]
    spans = []
    for v, text in cells:
        symbol, name = _verdict_words(v, lang)
        label = f"{text}{t['colon']}{name}"
        spans.append(
            f'<span class="xlakb-cell xlakb-verdict-{escape(str(v))}" role="img" tabindex="0" '
            f'aria-label="{escape(label)}" title="{escape(label)}">{escape(symbol)} {escape(str(text))}</span>'
        )
    return f'<li>{escape(head)}{t["colon"]}<span class="xlakb-strip" data-search-exclude>{chr(10).join(spans)}</span></li>'


def _probe_items(report: dict, probes: list[dict], t: dict, lang: str) -> str:
    """The probes of a bisection, those inside the range it states apart from those outside it (the walk
    back to a testable start); a nightly is named as one, not by a bare date."""
    source = report.get("source")
    rng = report.get("range") or {}

    def name(c: str) -> str:
        return t["nightly_label"].format(date=c) if source == "nightlies" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", c) else c

    inside, outside = list(probes), []
    if source in ("releases", "nightlies") and rng.get("first") and rng.get("last"):
        lo, hi = candidate_order(str(rng["first"])), candidate_order(str(rng["last"]))
        inside = [p for p in probes if lo <= candidate_order(str(p.get("candidate"))) <= hi]
        outside = [p for p in probes if p not in inside]
    out = _strip_item(
        f"{t['probes']}{_paren(str(len(inside)), lang)}",
        [(p.get("verdict"), name(str(p.get("candidate")))) for p in inside],
        lang,
    )
    if outside:
        out += "\n" + _strip_item(
            t["probes_outside"].format(n=len(outside)), [(p.get("verdict"), name(str(p.get("candidate")))) for p in outside], lang
        )
    return out


def _when_and_how(report: dict, t: dict) -> list[str]:
    out = []
    if report.get("measured_at"):
        out.append(f"<li>{escape(t['measured_at'])}{t['colon']}{escape(_date(report['measured_at']))}</li>")
    if report.get("command"):
        out.append(f"<li>{escape(t['command'])}{t['colon']}{_code(report['command'])}</li>")
    return out


def settings_html(report: dict, lang: str) -> str:
    """A settings bisection: the settings the bug needs on one release, and every configuration tried."""
    t = UI[lang]
    minimal, everything = report["minimal"], report.get("settings") or []
    n = len(everything)
    items = [f"<li>{escape(t['settings_all'])}{t['colon']}{' '.join(_code(str(s)) for s in everything)}</li>"]
    if minimal:
        items.append(
            f"<li>{escape(t['settings_needed'].format(k=len(minimal), n=n))}{t['colon']}"
            f"<strong>{' '.join(_code(str(s)) for s in minimal)}</strong></li>"
        )
    else:
        items.append(f"<li><strong>{escape(t['settings_none'].format(n=n))}</strong></li>")
    items.append(_confidence_item(report, t, lang))
    tests = report.get("tests") or []
    if tests:
        head = t["settings_probes"].format(n=len(tests), bound=report.get("probe_bound", "?"), k=n)
        items.append(_strip_item(head, [(x.get("verdict"), " ".join(x.get("settings") or []) or "∅") for x in tests], lang))
    items += _when_and_how(report, t)
    head = t["settings_head"].format(release=report.get("release", "?"))
    return "\n".join(
        [
            '<div class="xlakb-bisect" data-source="settings">',
            f"<h3>{escape(head)}</h3>",
            "<ul>\n" + "\n".join(i for i in items if i) + "\n</ul>",
            "</div>",
        ]
    )


def _end_html(end: dict | None, repo: str, lang: str, which: str, label: str) -> str:
    t = UI[lang]
    if not end:
        return ""
    meta = end.get("meta") or {}
    bits = [_code(str(end.get("label", "?")))]
    sha = meta.get("sha")
    if sha:
        bits.append(_a(meta.get("url") or f"https://github.com/{repo}/commit/{sha}", sha[:12]))
    if meta.get("pr"):
        bits.append(_a(meta.get("pr_url") or _gh(repo, "pull", meta["pr"]), f"#{meta['pr']}"))
    if meta.get("date"):
        bits.append(escape(str(meta["date"])[:10]))
    word = LABEL_WORDS[lang].get(label, label)
    head = t[which].format(label=word)
    return f"<li>{escape(head)}{t['colon']}{' '.join(bits)}</li>"


def bisect_html(report: dict, repo: str, lang: str) -> str:
    t = UI[lang]
    if isinstance(report.get("minimal"), list):
        return settings_html(report, lang)
    source = report.get("source", "?")
    direction = report.get("direction", "?")
    head = t["bisect_head"].format(
        source=t["source_names"].get(source, source), direction=t["direction"].get(direction, direction)
    )
    items = []
    rng = report.get("range") or {}
    if rng:
        items.append(
            f"<li>{escape(t['range'])}{t['colon']}{_code(str(rng.get('first', '?')))} … {_code(str(rng.get('last', '?')))}"
            f"{_paren(escape(t['candidates'].format(n=rng.get('count', '?'))), lang)}</li>"
        )
    items.append(_end_html(report.get("last_old"), repo, lang, "last_old", report.get("old_label", "not-reproduced")))
    items.append(_end_html(report.get("first_new"), repo, lang, "first_new", report.get("new_label", "reproduced")))
    items.append(_confidence_item(report, t, lang))
    probes = report.get("probes") or []
    if probes:
        items.append(_probe_items(report, probes, t, lang))
    items += _when_and_how(report, t)
    between = report.get("between") or []
    parts = [
        f'<div class="xlakb-bisect" data-source="{escape(source)}">',
        f"<h3>{escape(head)}</h3>",
        "<ul>\n" + "\n".join(i for i in items if i) + "\n</ul>",
    ]
    if report.get("exact"):
        parts.append(f"<p>{escape(t['exact'])}</p>")
    elif between:
        parts.append(f"<p>{escape(t['inexact'].format(n=len(between)))}</p>")
    if between:
        rows = []
        for c in between:
            sha = str(c.get("sha", ""))
            link = _a(c.get("url") or f"https://github.com/{repo}/commit/{sha}", sha[:12]) if sha else ""
            pr = _a(c.get("pr_url") or _gh(repo, "pull", c["pr"]), f"#{c['pr']}") if c.get("pr") else ""
            py = "✓" if c.get("python_only") else ""
            rows.append(
                f"<tr>\n<td>{link}</td>\n<td>{pr}</td>\n<td>{_quoted(str(c.get('subject', '')), lang)}</td>\n<td>{py}</td>\n</tr>"
            )
        parts.append(
            f'<div class="xlakb-scroll"><table class="xlakb-between"><caption>{escape(t["between"])}</caption>'
            f"<thead><tr><th>commit</th><th>PR</th><th></th><th>{escape(t['python_only'])}</th></tr></thead>"
            f"<tbody>\n{chr(10).join(rows)}\n</tbody></table></div>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def filter_form(lang: str, shown: int, selects: list[tuple[str, str, list[tuple[str, str]]]]) -> str:
    """The filters above a records table (site/assets/javascripts/xlakb.js): one select per
    (name, label, [(value, text)]), and the count of records shown."""
    t = UI[lang]
    parts = []
    for name, label, options in selects:
        opts = f'<option value="">{escape(t["home_all"])}</option>' + "".join(
            f'<option value="{escape(v)}">{escape(text)}</option>' for v, text in options
        )
        parts.append(
            f'<label>{escape(label)} <select class="xlakb-filter" data-filter="{name}" name="{name}">{opts}</select></label>'
        )
    return (
        '<form class="xlakb-filters" onsubmit="return false">'
        + "".join(parts)
        + f' <span class="xlakb-count" data-one="{escape(t["home_shown_one"])}" data-many="{escape(t["home_shown"])}">'
        f'<span class="xlakb-count-n">{shown}</span> <span class="xlakb-count-word">'
        f"{escape(t['home_shown_one'] if shown == 1 else t['home_shown'])}</span></span>" + "</form>"
    )


def records_table(records: list[SiteRecord], lang: str, href) -> str:
    """The home page table, filterable by status, component and tag (site/assets/javascripts/xlakb.js)."""
    t = UI[lang]
    if not records:
        return f"<p>{escape(t['home_empty'])}</p>"
    statuses = [s for s in t["status"] if any(r.data["status"] == s for r in records)]
    components = sorted({r.data["component"] for r in records})
    tags = sorted({tag for r in records for tag in r.data["tags"]})
    sources = [s for s in t["record_source"] if any(r.data.get("source", "hand") == s for r in records)]
    filters = filter_form(
        lang,
        len(records),
        [
            ("status", t["home_filter_status"], [(s, t["status"][s]) for s in statuses]),
            ("component", t["home_filter_component"], [(c, c) for c in components]),
            ("tag", t["home_filter_tag"], [(g, g) for g in tags]),
        ]
        + ([("source", t["home_filter_source"], [(s, t["record_source"][s]) for s in sources])] if len(sources) > 1 else []),
    )
    rows = []
    releases = releases_shown(records)
    # on a phone the table is a card per record (xlakb.css): each value says what it is
    label = {
        k: f' data-label="{escape(t[k] + t["colon"])}"'
        for k in ("home_th_component", "home_th_tags", "home_th_affected", "home_th_fixed", "home_th_measured")
    }
    for r in records:
        d = r.data
        m = r.measured.matrix
        if m and m["results"]:
            dates = sorted(x.get("measured_at", "") for x in m["results"])
            sep = "，" if lang == "zh" else ", "
            measured = escape(t["home_measured"].format(n=len(m["results"])) + (f"{sep}{_date(dates[-1])}" if dates[-1] else ""))
        else:
            measured = escape(t["home_not_measured"])
        tag_html = " ".join(f'<span class="xlakb-tag">{escape(g)}</span>' for g in d["tags"])
        rows.append(
            f'<tr data-id="{escape(r.id)}" data-status="{escape(d["status"])}" data-source="{escape(d.get("source", "hand"))}" '
            f'data-component="{escape(d["component"])}" data-tags=" {escape(" ".join(d["tags"]))} ">'
            f'<td><a href="{escape(href(r.id))}">{_inline_md_code(escape(d["title"][lang]))}</a><br>{_code(r.id)}</td>'
            f"<td>{status_badge(d['status'], lang)}</td>"
            f"<td{label['home_th_component']}>{_code(d['component'])}</td>"
            f"<td{label['home_th_tags']}>{tag_html}</td>"
            f"<td{label['home_th_affected']}>{_code(d['versions']['affected'])}</td>"
            f"<td{label['home_th_fixed']}>{escape(d['versions'].get('fixed_in') or '—')}</td>"
            f"<td{label['home_th_measured']}>{measured}<br>{release_strip(r, lang, releases)}</td></tr>"
        )
    head = "".join(
        f"<th>{escape(t[k])}</th>"
        for k in (
            "home_th_record",
            "home_th_status",
            "home_th_component",
            "home_th_tags",
            "home_th_affected",
            "home_th_fixed",
            "home_th_measured",
        )
    )
    return (
        filters
        + "\n"
        + f'<div class="xlakb-scroll"><table class="xlakb-records xlakb-home"><thead><tr>{head}</tr></thead>'
        + f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


# -- coverage: every record on every release, as measured --------------------------------------
def releases_shown(records: list[SiteRecord]) -> tuple[str, ...]:
    """The known releases, plus any other release a matrix measured, oldest first."""
    seen = set(_known_releases())
    for r in records:
        for row in (r.measured.matrix or {}).get("results", []):
            if row.get("kind", "release") == "release":
                seen.add(row["candidate"])
    return tuple(sorted(seen, key=candidate_order))


def _measured_by_release(rec: SiteRecord) -> dict[str, dict]:
    return {
        row["candidate"]: row for row in (rec.measured.matrix or {}).get("results", []) if row.get("kind", "release") == "release"
    }


def _heat_cell(rec: SiteRecord, release: str, row: dict | None, lang: str, tag: str = "td") -> str:
    """One release of one record: its symbol (and, in the heat map, its short word), named in the page's
    language for screen readers and in a tooltip; the colour only repeats the symbol."""
    t = UI[lang]
    verdict = row["verdict"] if row else "none"
    symbol, label = _verdict_words(verdict, lang)
    title = f"{release}{t['colon']}{label}"
    text = symbol if tag == "span" else f"{symbol} {t['short'].get(verdict, '')}".strip()
    focus = ' role="img"' if tag == "span" else ""  # one tab stop per table, not per cell: xlakb.js (roving)
    return (
        f'<{tag} class="xlakb-heat xlakb-verdict-{escape(verdict)}" data-release="{escape(release)}" '
        f'data-verdict="{escape(verdict)}" title="{escape(title)}" aria-label="{escape(title)}"{focus}>{escape(text)}</{tag}>'
    )


def release_strip(rec: SiteRecord, lang: str, releases: tuple[str, ...]) -> str:
    """One cell per release (the home table's strip), between the first and the last release's names."""
    t = UI[lang]
    measured = _measured_by_release(rec)
    cells = "".join(_heat_cell(rec, v, measured.get(v), lang, tag="span") for v in releases)
    ends = (
        (
            f'<span class="xlakb-strip-end">{escape(releases[0])}</span>',
            f'<span class="xlakb-strip-end">{escape(releases[-1])}</span>',
        )
        if releases
        else ("", "")
    )
    return (
        f'<span class="xlakb-strip xlakb-heatstrip" data-record="{escape(rec.id)}" role="group" '
        f'aria-label="{escape(t["strip_label"])}">{ends[0]}{cells}{ends[1]}</span>'
    )


def coverage_table(records: list[SiteRecord], lang: str, href, *, component_href=None, filters: bool = True) -> str:
    """The heat map: one row per record, one cell per release, grouped by component (a header row
    per component) and filterable by component (site/assets/javascripts/xlakb.js)."""
    t = UI[lang]
    if not records:
        return f"<p>{escape(t['home_empty'])}</p>"
    releases = releases_shown(records)
    components = sorted({r.data["component"] for r in records})
    sources = [s for s in t["record_source"] if any(r.data.get("source", "hand") == s for r in records)]
    form = (
        filter_form(
            lang,
            len(records),
            [("component", t["home_filter_component"], [(c, c) for c in components])]
            + ([("source", t["home_filter_source"], [(s, t["record_source"][s]) for s in sources])] if len(sources) > 1 else []),
        )
        + "\n"
        if filters
        else ""
    )
    head = f"<th>{escape(t['coverage_th_record'])}</th><th>{escape(t['home_th_status'])}</th>" + "".join(
        f"<th>{escape(v)}</th>" for v in releases
    )
    rows = []
    for comp in components:
        name = escape(comp)
        title = escape(t["coverage_component"].format(name=comp))
        if component_href is not None:
            title = f'<a href="{escape(component_href(comp))}">{title}</a>'
        rows.append(f'<tr class="xlakb-group" data-component="{name}"><th colspan="{len(releases) + 2}">{title}</th></tr>')
        for r in (r for r in records if r.data["component"] == comp):
            measured = _measured_by_release(r)
            rows.append(
                f'<tr data-id="{escape(r.id)}" data-status="{escape(r.data["status"])}" data-component="{name}" '
                f'data-source="{escape(r.data.get("source", "hand"))}" '
                f'data-tags=" {escape(" ".join(r.data["tags"]))} ">'
                f'<td><a href="{escape(href(r.id))}">{_code(r.id)}</a></td><td>{status_badge(r.data["status"], lang)}</td>'
                + "".join(_heat_cell(r, v, measured.get(v), lang) for v in releases)
                + "</tr>"
            )
    legend = " · ".join(
        f'<span class="xlakb-verdict xlakb-verdict-{v}">{escape(t["symbol"][v])} {escape(t["short"][v])}</span> = '
        f"{escape(t['verdict'][v])}"
        for v in t["verdict"]
    )
    return (
        form
        + f'<div class="xlakb-heatmap"><table class="xlakb-records xlakb-coverage" data-search-exclude><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>\n<p class="xlakb-legend">{escape(t["legend"])}{t["colon"]}{legend}</p>'
    )


def component_page(component: str, records: list[SiteRecord], lang: str) -> str:
    """A generated page per component: its records and their heat map (put in at the marker)."""
    t = UI[lang]
    mine = [r for r in records if r.data["component"] == component]
    title = t["component_title"].format(name=component)
    return (
        front_matter({"title": title})
        + f"# {title}\n\n"
        + t["component_intro"].format(n=len(mine), name=f"`{component}`")
        + "\n\n"
        + COMPONENT_MARKER
        + "\n"
    )


COMPONENT_MARKER = "<!-- xlakb:component -->"
COVERAGE_MARKER = "<!-- xlakb:coverage -->"


TRIAGE_MARKER = "<!-- xlakb:triage -->"


def triage_form(lang: str, data_src: str, records_href: str) -> str:
    """The paste box (site/assets/javascripts/triage.js runs the rules on ``data_src``)."""
    t = UI[lang]["triage"]
    words = json.dumps(t, ensure_ascii=False).replace("<", "\\u003c")
    return (
        f'<form class="xlakb-triage" data-lang="{lang}" data-src="{escape(data_src)}" data-records="{escape(records_href)}" '
        f"data-search-exclude>"
        f'<script type="application/json" class="xlakb-triage-words">{words}</script>'
        f'<p><label class="xlakb-triage-label">{escape(t["label"])}<br>'
        f'<textarea name="log" rows="10" placeholder="{escape(t["placeholder"])}"></textarea></label></p>'
        f'<p class="xlakb-triage-go"><label class="xlakb-triage-version">{escape(t["version"])} '
        f'<input name="torch_xla" size="12" placeholder="X.Y.Z" autocomplete="off" spellcheck="false"></label> '
        f'<button type="submit" class="md-button md-button--primary">{escape(t["button"])}</button></p>'
        f'<p class="xlakb-triage-private">{escape(t["private"])}</p></form>'
        # the answer: announced when it changes, its heading focused (site/assets/javascripts/triage.js)
        f'<div class="xlakb-triage-result" aria-live="polite" data-search-exclude></div>'
    )


def not_found_page(lang: str, base: str) -> str:
    """The 404 page's content in ``lang``: what happened, the paste box and a search of the records. Served at any
    depth, so every address is from the site's root ``base`` (``/`` or the path of ``site_url``)."""
    t = UI[lang]["not_found"]
    prefix = "" if lang == "en" else f"{lang}/"
    home = f"{base}{prefix}"
    search = (
        # Material opens its search with ?q= filled in (search.js adds the exact-text hits)
        f'<form class="xlakb-404-search" role="search" action="{escape(home)}" method="get">'
        f'<label>{escape(t["search"])} <input type="search" name="q" autocomplete="off"></label> '
        f'<button type="submit" class="md-button">{escape(t["search_button"])}</button></form>'
    )
    return (
        f"<h1>{escape(t['title'])}</h1>\n<p>{escape(t['text'])}</p>\n"
        + triage_form(lang, f"{base}assets/triage.json", f"{home}records/")
        + f"\n{search}\n"
        + f'<p><a href="{escape(home)}">{escape(t["home"])}</a></p>'
    )


def search_phrases(records: list, languages: list[str]) -> dict:
    """What the search box looks for as exact text before Material's word search (assets/phrases.json):
    per language, each record's title, symptoms and the literal text of its error signatures (an error
    string pasted into the box lands on the record that has it word for word), and the glossary (a query
    in the other language is offered that language's pages)."""
    from ..catalog import split_top_level
    from ..glossary import terms
    from ..signatures import signatures_of
    from ..triage import _needle

    out: dict = {"glossary": [{"zh": t.zh, "en": list(t.en)} for t in terms()], "records": {}}
    for lang in languages:
        prefix = "" if lang == "en" else f"{lang}/"
        rows = []
        for rec in records:
            d = rec.data
            errors = [
                _needle(alt)
                for s in signatures_of(d)
                if s.kind in ("message", "check")
                for alt in split_top_level(s.pattern, "|", escapes=True)
            ]
            rows.append(
                {
                    "id": rec.id,
                    "url": f"{prefix}records/{rec.id}/",
                    "title": plain(d["title"][lang]),
                    "errors": [e for e in errors if len(e) >= 6],
                    "texts": [plain(d["title"][lang]), *(plain(x) for x in d["symptoms"][lang])],
                }
            )
        out["records"][lang] = rows
    return out


# -- the reported tier: upstream's most reported errors without a proven record -----------------------
def reported_page(clusters: list, lang: str, href, limit: int = 100) -> str:
    """Markdown: the upstream clusters no record proves, most reported first (the contributors' to-do list),
    each with its error, its reports (state, date) and a fix when one is known; then how many clusters a
    proven record covers."""
    t = UI[lang]
    clusters = [c for c in clusters if c.listed]
    todo = [c for c in clusters if not c.records and not c.generic]
    proven = [c for c in clusters if c.records]
    crash_only = {r.number for c in clusters if c.generic and not c.test and not c.records for r in c.issues}
    test_only = {r.number for c in clusters if c.test and not c.records for r in c.issues} - crash_only
    if not clusters:
        return t["reported_empty"] + "\n"
    out = [
        t["reported_count"].format(
            n=len(todo), shown=min(limit, len(todo)), reports=len({r.number for c in clusters for r in c.issues})
        )
        + "\n"
    ]
    for c in todo[:limit]:
        states = t["reported_open"].format(n=len(c.open)) if c.open else t["reported_closed"]
        head = f"### {_md_code(c.signature or c.location)}"  # a stack cluster is known by its innermost frame
        out.append(head + "\n")
        meta = [t["reported_reports"].format(n=len(c.issues)), states]
        if c.since:
            meta.append(t["reported_since"].format(date=c.since[:7]))
        if c.location:
            meta.append(t["reported_where"] + t["colon"] + _md_code(c.location))
        if c.labels:
            labels = [_md_code(x) if lang == "zh" else x for x in c.labels[:4]]  # upstream's own words
            meta.append(t["reported_labels"] + t["colon"] + ("、" if lang == "zh" else ", ").join(labels))
        if c.fixed_by:
            prs = ", ".join(f"[#{p}]({_gh('pytorch/xla', 'pull', p)})" for p in c.fixed_by)
            meta.append(t["reported_fixed"].format(prs=prs) + (_paren(c.first_fixed, lang) if c.first_fixed else ""))
        out.append(t["list_sep"].join(meta) + "\n")
        for said in c.causes[:2]:  # what a developer said in the thread was the cause, in our words
            cause = t["triage"]["reported_cause"].format(by=said["by"], issue=said["issue"], cause=said[lang])
            out.append(escape(cause).replace(f"#{said['issue']}", f"[#{said['issue']}]({said['url']})", 1) + "\n")
        for r in sorted(c.issues, key=lambda r: r.number, reverse=True)[:10]:
            state = t["reported_state"][r.state]
            out.append(
                f"- [#{r.number}]({r.url}) {_md_code(r.title) if lang == 'zh' else escape(r.title)}"
                + _paren(f"{state}{t['list_sep'] + r.created_at if r.created_at else ''}", lang)
            )
        if len(c.issues) > 10:
            out.append(f"- … {len(c.issues) - 10}")
        out.append("")
    if crash_only:
        out.append(t["reported_crash_only"].format(n=len(crash_only)) + "\n")
    if test_only:
        out.append(t["reported_test_only"].format(n=len(test_only)) + "\n")
    if proven:
        out.append(f"## {t['reported_proven_head']}\n")
        for c in proven:
            links = ", ".join(f"[{rid}]({href(rid)})" for rid in c.records)
            out.append(
                f"- {_md_code(c.signature or c.location)}{t['colon']}{links}"
                + _paren(t["reported_reports"].format(n=len(c.issues)), lang)
            )
        out.append("")
    if any(r.seeded for c in clusters for r in c.issues):
        out.append(t["reported_seeded"] + "\n")
    return "\n".join(out)
