"""What `xlakb triage` says, as lines of text in English or Chinese (the CLI prints them).

Library code: returns strings, prints nothing. The words of the site's paste box are in ``data/ui.yaml``;
these are the command line's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import cjk
from .errors import XlakbError
from .triage import Result, advice_text, base_version, releases_note
from .words import ui

WORDS = {
    "en": {
        "no_sign": "nothing in {source} is known to come from torch_xla or a layer under it (no torch_xla frame, import "
        "or version; no line of torch's lazy core, XLA, PJRT or the TPU runtime; the message catalog covers torch_xla "
        "2.1 on): the paste alone cannot tell whether this is a torch_xla problem; paste the whole log, from the "
        "command to the last line",
        "reported_sign": "nothing in {source} is known to come from torch_xla or a layer under it (no torch_xla frame, "
        "import or version; no line of torch's lazy core, XLA, PJRT or the TPU runtime; the message catalog covers "
        "torch_xla 2.1 on), but the same error was reported to pytorch/xla (below): compare those reports with your "
        "run; to be sure, paste the whole log, from the command to the last line",
        "other_backend": "the paste shows {names} and nothing of torch_xla: records of torch_xla are not matched",
        "layer_sign": "{source} shows no torch_xla frame, import or version, but lines of {layers}: it may well be a "
        "torch_xla problem (the lines below say where each comes from)",
        "version": "torch_xla {v} ({where})",
        "no_version": "torch_xla version: not in the log (pass --torch-xla X.Y.Z)",
        "given": "--torch-xla",
        "from_log": "from the log: {how}",
        "no_match": "no known record matches {source}",
        "stack_only": "{source} shows a stack but no error line xlakb knows (an exception, a check failure, a fatal log "
        "line): the message is what says which bug it is; if it was left out, paste it too (the last line of a Python traceback, the `Check "
        "failed` or `F…` line above a C++ stack)",
        "ambiguous": "The paste shows the errors of several unrelated records: none is named strongly.",
        "group": "These records are look-alikes: the paste cannot tell them apart. What tells them apart:",
        "possible": "Possible matches (an error without what triggered it, or a generic error with a trigger of the record):",
        "related": "Related records (the paste shows only evidence they share with other bugs: not a match):",
        "stacked": "The stack leaves torch_xla where these records' bugs fail (no message confirms it, so it names none "
        "of them; the message tells):",
        "strength": {"strong": "strong", "possible": "possible", "related": "related"},
        "score": "score",
        "matched": "matched",
        "line": "line",
        "generic": "generic",
        "workaround": "workaround",
        "more": "more",
        "origins": "Where the error lines come from (message catalog):",
        "printed": "printed by {who} in {releases}",
        "at": "at",
        "helper": "a generic helper, seen in many bugs: {why}",
        "not_in_release": "your release {v} does not print this text: the paste may come from another release",
        "xla_only": "XLA's own text (in torch_xla's compiled extension; JAX prints it too)",
        "history": "Commits that touched this message since {since} (git log -S, newest first):",
        "history_none": "No commit touched this message since {since}.",
        "search": "Search upstream issues for this error:",
        "reported": "Reported upstream (not proven here; the same error after normalising paths, numbers and names):",
        "reported_line": "#{number} ({state}{more}{since}{labels})",
        "reported_more": ", {n} reports",
        "reported_since": ", since {date}",
        "reported_labels": ", label {labels}",
        "reported_also": "also",
        "reported_fix": "fixed by {prs}, first in {release}: upgrade",
        "reported_fix_pr": "fixed by {prs}",
        "reported_record": "proven record: {ids}",
        "reported_seeded": "(from the stored search corpus; a harvest with a token refreshes states and fixes)",
        "reported_generic": "a helper many bugs reach prints this error: these reports may be other bugs; compare their tracebacks with yours",
        "reported_crash": "every fatal crash prints this line and these reports show nothing more of theirs: they may be other crashes; compare the error printed before it",
        "reported_test": "every failing test prints this line and these reports show nothing more of theirs: they may be other bugs; compare the test and the values it compared with yours",
        "state": {"open": "open", "closed": "closed"},
        "new": "Not known yet? Scaffold a record from this log: xlakb new <id> --from-log {source}",
        "stdin": "standard input",
    },
    "zh": {
        "no_sign": "{source} 中没有已知来自 torch_xla 或它下面各层的内容（没有 torch_xla 的调用栈、导入或版本，也没有 torch "
        "惰性张量核心、XLA、PJRT 或 TPU 运行时的日志行；消息目录覆盖 torch_xla 2.1 及以后的版本）：仅凭这段粘贴无法判断是否为 "
        "torch_xla 的问题；请粘贴从所运行的命令到最后一行的完整日志",
        "reported_sign": "{source} 中没有已知来自 torch_xla 或它下面各层的内容（没有 torch_xla 的调用栈、导入或版本，也没有 "
        "torch 惰性张量核心、XLA、PJRT 或 TPU 运行时的日志行；消息目录覆盖 torch_xla 2.1 及以后的版本），但同样的报错已经有人"
        "报告给 pytorch/xla（见下方）：请把这些报告与你的运行对照；要确定的话，请粘贴从所运行的命令到最后一行的完整日志",
        "other_backend": "粘贴的内容来自 {names}，且没有任何 torch_xla 的迹象：不与 torch_xla 的记录匹配",
        "layer_sign": "{source} 中没有 torch_xla 的调用栈、导入或版本，但有来自 {layers} 的内容：这很可能是 torch_xla 的问题"
        "（下方说明了每一行的来源）",
        "version": "torch_xla {v}（{where}）",
        "no_version": "日志中没有 torch_xla 版本（可加 --torch-xla X.Y.Z）",
        "given": "--torch-xla",
        "from_log": "来自日志：{how}",
        "no_match": "在 {source} 中没有匹配到已知问题",
        "stack_only": "{source} 中只有调用栈，没有 xlakb 认得的报错行（异常、检查失败或致命日志行）：说明是哪个问题的是报错信息，"
        "如果漏贴了，请把它也贴上（Python traceback 的最后一行，C++ 调用栈上方的 `Check failed` 或 `F…` 行）",
        "ambiguous": "粘贴的内容同时出现了几个互不相关记录的报错：不给出强匹配。",
        "group": "这些记录彼此相似：仅凭粘贴的内容无法区分。区分方法：",
        "possible": "可能的匹配（只有报错而没有触发它的代码，或只有通用报错加上该记录的触发条件）：",
        "related": "相关记录（粘贴的内容只有与其他问题共有的证据，不算匹配）：",
        "stacked": "调用栈离开 torch_xla 的位置，正是下列记录中的问题出错的地方（没有报错信息确认，所以不能断定是其中哪一个；报错信息能说明）：",
        "strength": {"strong": "强匹配", "possible": "可能", "related": "相关"},
        "score": "得分",
        "matched": "匹配",
        "line": "第",
        "generic": "通用",
        "workaround": "规避方法",
        "more": "详情",
        "origins": "报错行的来源（消息目录）：",
        "printed": "由 {who} 打印，见于 {releases}",
        "at": "位于",
        "helper": "通用的辅助函数，许多问题都会经过这里：{why}",
        "not_in_release": "你的版本 {v} 不会打印这段文字：粘贴的内容可能来自其他版本",
        "xla_only": "XLA 自身的文字（在 torch_xla 的编译扩展中；JAX 也会打印）",
        "history": "自 {since} 以来修改过这条信息的提交（git log -S，从新到旧）：",
        "history_none": "自 {since} 以来没有提交修改过这条信息。",
        "search": "在上游 issue 中搜索这条报错：",
        "reported": "上游已有报告（此处未经验证；路径、数字和名称归一化后是同一条报错）：",
        "reported_line": "#{number}（{state}{more}{since}{labels}）",
        "reported_more": "，共 {n} 个报告",
        "reported_since": "，最早 {date}",
        "reported_labels": "，标签 {labels}",
        "reported_also": "另见",
        "reported_fix": "已由 {prs} 修复，首个包含修复的版本为 {release}：请升级",
        "reported_fix_pr": "已由 {prs} 修复",
        "reported_record": "已验证的记录：{ids}",
        "reported_seeded": "（来自已存储的搜索语料；用令牌抓取后会刷新状态与修复信息）",
        "reported_generic": "这条报错由许多问题都会经过的通用函数打印：这些报告可能是别的问题，请对照它们的调用栈与你的是否一致",
        "reported_crash": "任何致命崩溃都会打印这一行，而这些报告没有更多信息：它们可能是别的崩溃，请对照它之前打印的报错",
        "reported_test": "任何失败的测试都会打印这一行，而这些报告没有更多信息：它们可能是别的问题，请对照失败的测试及其比较的数值与你的是否一致",
        "state": {"open": "未关闭", "closed": "已关闭"},
        "new": "还没有记录？可以用这份日志生成记录草稿：xlakb new <id> --from-log {source}",
        "stdin": "标准输入",
    },
}


@dataclass(frozen=True)
class Change:
    """A commit that touched a message (from :func:`xlakb.gitrepo.commits_touching`)."""

    sha: str
    date: str
    subject: str


def _ui_triage(lang: str) -> dict:
    return ui()[lang]["triage"]


_UI = {lang: _ui_triage(lang) for lang in WORDS}


def _status_names(lang: str) -> dict:
    return ui()[lang]["status"]


# English keeps the status as the CLI spells it (`xlakb list --status fixed`); Chinese names it
_STATUS = {"en": {}, "zh": _status_names("zh")}


def reason(text: str, lang: str) -> str:
    """Why evidence is generic, in ``lang`` (the same table the site's paste box uses, data/ui.yaml)."""
    for pattern, repl in _UI[lang].get("reasons") or ():
        text = re.sub(pattern, re.sub(r"\$(\d)", r"\\\1", repl), text)
    return text


def _hit(h, lang: str) -> str:
    w = WORDS[lang]
    what = h.signature.describe()[len(h.signature.kind) + 1 :]
    return (
        f"{w['matched']} {_UI[lang]['kinds'][h.signature.kind]} {what} {_paren(_line_word(h.line, lang), lang)}: {h.excerpt}"
        + (f"  [{w['generic']}: {reason(h.generic, lang)}]" if h.generic else "")
    )


def _line_word(n: int, lang: str) -> str:
    return f"第 {n} 行" if lang == "zh" else f"line {n}"


def _paren(text: str, lang: str) -> str:
    return f"（{text}）" if lang == "zh" else f"({text})"


def report(
    result: Result,
    *,
    source: str,
    lang: str = "en",
    history: dict[str, tuple[str, list[Change]]] | None = None,
    reported: list | None = None,
) -> list[str]:
    """The text of a triage result. ``history``: for an origin's text, (since, commits) read with --repo;
    ``reported``: the upstream clusters the paste matches (:func:`xlakb.upstream.index.match`), shown after
    the records (never as a match)."""
    w = WORDS[lang]
    shown = w["stdin"] if source == "standard input" else source
    out: list[str] = []
    if not result.torch_xla_signs and not result.matches:
        if (
            result.layers and not result.other_backends
        ):  # torch_xla's layers printed it, though the paste shows nothing of torch_xla itself
            names = _UI[lang]["layer_sep"].join(_UI[lang]["layer_names"][x] for x in result.layers)
            out.append(cjk.join(w["layer_sign"].format(source=shown, layers=names)))
        elif reported and not result.other_backends:  # nothing known of torch_xla, but its users reported the error
            out.append(cjk.join(w["reported_sign"].format(source=shown)))
        else:
            out.append(cjk.join(w["no_sign"].format(source=shown)))
    if result.other_backends and not result.torch_xla_signs:
        out.append(w["other_backend"].format(names=", ".join(result.other_backends)))
    v = result.torch_xla_version
    if v:
        where = w["given"] if result.version_source == "given" else w["from_log"].format(how=result.version_source)
        out.append(w["version"].format(v=v, where=where))
    else:
        out.append(w["no_version"])
    if not result.matches:
        out.append(cjk.join(w["no_match"].format(source=shown)))
        if result.stack_only and not reported:
            out.append(cjk.join(w["stack_only"].format(source=shown)))
    if result.ambiguous:
        out.append(w["ambiguous"])
    strong = result.strong
    if len(strong) > 1:
        out.append("")
        out.append(w["group"])
        for m in strong:
            tells = m.record.get("tells_apart", {}).get(lang)
            if tells:
                out.append(f"  - {m.id}: {' '.join(tells.split()) if lang == 'en' else tells.strip()}")
    shown_possible = False
    for n, m in enumerate(result.matches, 1):
        if m.strength == "possible" and not shown_possible:
            shown_possible = True
            out.append("")
            out.append(w["possible"])
        out.extend(_match_lines(n, m, lang))
    for key, listed in (("stacked", result.stacked), ("related", result.related)):
        if listed:  # records the paste points at without naming one: a stack alone, shared evidence
            out.append("")
            out.append(w[key])
            for m in listed:
                out.append(f"  - {m.id} [{_status(m.record, lang)}] — {m.record['title'][lang]}")
                out.extend(f"      {_hit(h, lang)}" for h in m.hits)
    if result.origins:
        out.append("")
        out.append(w["origins"])
        seen = set()
        for o in result.origins:
            if (o.line, o.row["pattern"]) in seen:
                continue
            seen.add((o.line, o.row["pattern"]))
            out.append(f"  {_line_word(o.line, lang)}: {o.excerpt}")
            if o.row["origins"] == ["xla"]:
                out.append(f"      {w['xla_only']}, {o.row['releases']}")
            for p in o.row["places"][:4]:
                out.append("      " + w["printed"].format(who=f"{p['file']} {p['function']}".strip(), releases=p["releases"]))
            if len(o.row["places"]) > 4:
                out.append(f"      (+{len(o.row['places']) - 4})")
            if o.row["generic"]:
                out.append("      " + w["helper"].format(why=reason(o.row["generic"], lang)))
            if releases_note(o, result.torch_xla_version):
                out.append("      " + w["not_in_release"].format(v=result.torch_xla_version))
            if history and o.row["text"] in history:
                since, changes = history[o.row["text"]]
                if changes:
                    out.append("      " + w["history"].format(since=since))
                    out.extend(f"        {c.sha[:10]} {c.date} {c.subject}" for c in changes[:10])
                else:
                    out.append("      " + w["history_none"].format(since=since))
    if reported:
        out.append("")
        out.append(w["reported"])
        out.extend(reported_lines(reported, lang, generic=[generic_hit(h, result) for h in reported]))
    if not result.strong and result.search:
        out.append("")
        out.append(w["search"])
        out.append(f"  {result.search}")
    if not result.matches:
        out.append(w["new"].format(source=source if source not in ("standard input",) else "crash.log"))
    return out


def generic_hit(hit, result) -> bool:
    """Whether the error line an upstream cluster was matched by is one the message catalog says a generic
    helper prints (``Check failed: HasValue()`` in an accessor): reports with it can be different bugs."""
    for o in result.origins:
        pieces = [p.strip() for p in o.row["text"].split("\u2026") if p.strip()]
        if o.row["generic"] and pieces and hit.line is not None and all(p in hit.line.line for p in pieces):
            return True
    return False


def reported_lines(reported: list, lang: str = "en", limit: int = 5, generic: list | None = None) -> list[str]:
    """One entry per upstream cluster a paste matches: its first open report (else its newest), how many,
    since when, labels, the others, and a fix or a proven record when known; ``generic[i]`` says the i-th
    was matched by an error a generic helper prints."""
    w = WORDS[lang]
    out = []
    seeded = False
    for i, hit in enumerate(reported[:limit]):
        c = hit.cluster
        newest = sorted(c.open or c.issues, key=lambda r: (r.created_at or "", r.number), reverse=True)
        lead = newest[0]  # the newest open report, else the newest one
        more = w["reported_more"].format(n=len(c.issues)) if len(c.issues) > 1 else ""
        since = w["reported_since"].format(date=c.since[:7]) if c.since else ""
        labels = w["reported_labels"].format(labels=", ".join(c.labels[:3])) if c.labels else ""
        out.append(
            "  - "
            + w["reported_line"].format(number=lead.number, state=w["state"][lead.state], more=more, since=since, labels=labels)
            + f" {lead.title[:90]}"
        )
        out.append(f"      {lead.url}")
        for said in c.causes[:2]:
            out.append("      " + _UI[lang]["reported_cause"].format(issue=said["issue"], by=said["by"], cause=said[lang]))
        if hit.how:
            out.append("      " + _UI[lang]["reported_how"][hit.how])
        if hit.line is None and getattr(hit, "frames", ()):
            out.append("      " + _UI[lang]["reported_frames"].format(frames=", ".join(f.split(":", 1)[1] for f in hit.frames)))
        others = [r for r in c.issues if r.number != lead.number]
        if others:
            out.append(
                f"      {w['reported_also']} "
                + ", ".join(f"#{r.number}" for r in others[:8])
                + (f" (+{len(others) - 8})" if len(others) > 8 else "")
            )
        prs = ", ".join(f"#{p}" for p in c.fixed_by)
        if c.fixed_by and c.first_fixed:
            out.append("      " + w["reported_fix"].format(prs=prs, release=c.first_fixed))
        elif c.fixed_by:
            out.append("      " + w["reported_fix_pr"].format(prs=prs))
        if c.pulls_only:
            out.append("      " + _UI[lang]["reported_pull"])
        if getattr(c, "stale", None):
            out.append("      " + _UI[lang]["reported_stale"].format(issues=", ".join(f"#{n}" for n in c.stale)))
        if c.records:
            out.append("      " + w["reported_record"].format(ids=", ".join(c.records)))
        if c.generic:
            out.append("      " + w["reported_test" if c.test else "reported_crash"])
        elif generic and generic[i]:
            out.append("      " + w["reported_generic"])
        seeded = seeded or any(r.seeded for r in c.issues)
    if seeded:
        out.append("  " + w["reported_seeded"])
    return out


def _status(rec: dict, lang: str) -> str:
    """A record's status in words; a limitation says what it is, never a bug's status."""
    if rec.get("kind") == "limitation":
        return _UI[lang]["limitation"].format(fixed_in=rec.get("fixed_in"))
    return _STATUS[lang].get(rec["status"], rec["status"])


def _match_lines(n: int, m, lang: str) -> list[str]:
    w = WORDS[lang]
    rec = m.record
    status = _status(rec, lang)
    out = [
        "",
        f"{n}. {rec['id']} [{status}] — {rec['title'][lang]}  {_paren(w['strength'][m.strength] + ', ' + w['score'] + ' ' + str(m.score), lang)}",
    ]
    for h in m.hits:
        out.append(f"   {_hit(h, lang)}")
    out.append(f"   {advice_text(m, lang)}")
    workaround = rec["workaround"][lang]
    out.append(f"   {w['workaround']}: {' '.join(workaround.split()) if lang == 'en' else workaround.strip()}")
    out.append(f"   {w['more']}: xlakb show {rec['id']}{' --lang zh' if lang == 'zh' else ''}")
    return out


def message_history(repo: str, result: Result) -> dict:
    """For each error line the catalog knows: the commits since the user's release that touched its text."""
    from .gitrepo import commits_touching  # GitPython loads only when asked (--repo)

    since = f"v{base_version(result.torch_xla_version)}" if result.torch_xla_version else None
    out = {}
    for o in result.origins:
        text = o.row["text"]
        if text in out:
            continue
        cond = text[len("Check failed: ") :] if text.startswith("Check failed: ") else ""
        needle = f"CHECK({cond.split('…')[0].strip()})" if cond else max(text.split("…"), key=len).strip()
        try:
            rows = commits_touching(repo, needle, since=since)
        except XlakbError:
            rows = commits_touching(repo, needle)  # the release has no tag in this clone: the whole history
            since = None
        out[text] = (since or "the start", [Change(*r) for r in rows])
    return out
