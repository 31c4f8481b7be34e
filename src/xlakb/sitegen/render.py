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
from ..records import claim
from ..results import candidate_order
from .data import SiteRecord

LANGS = ("en", "zh")

UI = {
    "en": {
        "status": {"open": "Open", "fixed": "Fixed", "regressed": "Regressed",
                   "workaround-only": "Workaround only", "wontfix": "Won't fix"},
        "verdict": {"reproduced": "reproduced", "not-reproduced": "not reproduced",
                    "untestable": "not testable", "error": "error"},
        "component": "Component",
        "record_id": "Record",
        "symptoms": "Symptoms",
        "signatures": "Error messages",
        "signatures_intro": "The reproducer counts a run as the bug only when its output matches one of these patterns:",
        "evidence_intro": "What `xlakb triage` and the paste box look for in a log (a strong match needs an error message and context):",
        "kind_names": {"message": "error message", "check": "C++ check or source location", "frame": "stack frame",
                       "call": "API call", "env": "environment variable"},
        "root_cause": "Root cause",
        "workaround": "Workaround",
        "environment": "Environment needed",
        "env_th": ("Needs", "Value"),
        "hardware": "Hardware upstream",
        "hardware_names": {"cpu": "CPU", "tpu": "TPU", "gpu": "GPU", "tpu-multislice": "TPU multislice", "any": "any"},
        "devices": "Virtual CPU devices (`CPU_NUM_DEVICES`)",
        "env": "Environment variables",
        "packages": "Extra packages",
        "python": "Python",
        "none": "none",
        "reproducer": "Reproducer",
        "fidelity": "Fidelity",
        "fidelity_names": {"exact": "exact: runs the failing code path itself",
                           "proxy": "proxy: checks the cause on CPU, not the full failure"},
        "proxy_checks": "What the proxy checks",
        "timeout": "Timeout",
        "run_xlakb": "Run it with xlakb on an affected release and on a fixed one (xlakb builds a clean environment for each):",
        "run_direct": "Or run it in an environment that already has torch_xla:",
        "exit_codes": "Exit codes: `0` not reproduced, `1` reproduced (when the output matches an error message above), `125` cannot be tested there, anything else is an error.",
        "source": "Source",
        "versions": "Versions",
        "claimed_affected": "Claimed affected",
        "fixed_in": "Fixed in",
        "nightly_fixed": "Fixed in nightly",
        "notes": "Notes",
        "matrix": "Affected versions, as measured",
        "not_measured": "Not measured yet. Run `xlakb matrix {id}` to measure every release and commit `bisect/{id}/matrix.json`.",
        "matrix_intro": "Each torch_xla release was tested by running the reproducer in a fresh environment ({runner} runner).",
        "th_release": "torch_xla", "th_torch": "torch", "th_verdict": "Result", "th_claim": "Record claims",
        "th_date": "Measured", "th_detail": "Detail",
        "claim_affected": "affected", "claim_fixed": "fixed", "claim_none": "—",
        "disagrees": "measured result disagrees with the claim",
        "legend": "Legend",
        "bisect": "Bisect results",
        "not_bisected": "Not bisected yet. `xlakb bisect {id} --source releases` finds the first release that changed; `--source nightlies` and `--source commits` narrow it down.",
        "source_names": {"releases": "releases", "nightlies": "nightly builds", "commits": "commits"},
        "direction": {"introduced": "introduced", "fixed": "fixed"},
        "bisect_head": "Bisecting {source}: where the bug was {direction}",
        "last_old": "Last {label}", "first_new": "First {label}",
        "range": "Range searched",
        "candidates": "{n} candidates",
        "exact": "The change is pinned to a single step.",
        "inexact": "Not pinned to one step: {n} changes lie between the two ends.",
        "between": "Changes in between",
        "python_only": "Python only",
        "confidence": "Confidence",
        "confidence_names": {"high": "high", "medium": "medium", "low": "low"},
        "probes": "Probes",
        "command": "Re-run",
        "measured_at": "Measured",
        "upstream": "Upstream",
        "issues": "Issues",
        "fixed_by": "Fixed by",
        "introduced_by": "Introduced by",
        "related": "Related",
        "links": "Links",
        "contribute": "Add or correct a record",
        "contribute_text": "Found another PyTorch/XLA bug, or a mistake here? See [how to add a record]({href}).",
        "home_filter_status": "Status", "home_filter_component": "Component", "home_filter_tag": "Tag",
        "home_all": "all", "home_shown": "records shown",
        "home_th_record": "Record", "home_th_status": "Status", "home_th_component": "Component",
        "home_th_tags": "Tags", "home_th_affected": "Affected (claimed)", "home_th_fixed": "Fixed in",
        "home_th_measured": "Measured", "home_not_measured": "not yet",
        "home_measured": "{n} releases",
        "home_empty": "No records yet.",
        "home_th_strip": "Measured on each release",
        "short": {"reproduced": "bug", "not-reproduced": "ok", "untestable": "n/a", "error": "err", "none": ""},
        "not_measured_cell": "not measured",
        "coverage_th_record": "Record",
        "coverage_component": "Component {name}",
        "component_title": "Component: {name}",
        "component_intro": "{n} record(s) of the {name} component. Each cell is what the reproducer printed on that torch_xla release.",
        "component_all": "All components, on every release",
        "triage": {"label": "Paste your error, traceback or log", "version": "Your torch_xla version (optional)",
                   "button": "Find known bugs", "placeholder": "Traceback (most recent call last): ...",
                   "empty": "Paste a log first.", "no_xla": "No sign of torch_xla in this log (no torch_xla frame, import, version or XLA log line): nothing matched.",
                   "no_match": "No known record matches this log.", "version_found": "torch_xla {v}", "no_version":
                   "The log does not say which torch_xla it ran: give your version above for advice on your release.",
                   "possible": "Possible matches (an error message only, no context such as a frame, a check or the call)",
                   "strength": {"strong": "strong match", "possible": "possible"}, "matched": "matched", "line": "line",
                   "workaround": "Workaround:", "private": "Your log stays in this page: it is matched here, in your browser, and sent nowhere."},
    },
    "zh": {
        "status": {"open": "未修复", "fixed": "已修复", "regressed": "已回归",
                   "workaround-only": "仅有规避方法", "wontfix": "不予修复"},
        "verdict": {"reproduced": "复现", "not-reproduced": "未复现",
                    "untestable": "无法测试", "error": "出错"},
        "component": "组件",
        "record_id": "记录",
        "symptoms": "症状",
        "signatures": "错误信息",
        "signatures_intro": "复现脚本只有在输出匹配下列模式之一时，才算复现了这个问题：",
        "evidence_intro": "`xlakb triage` 和“粘贴报错”页面在日志中查找的特征（强匹配需要错误信息加上下文）：",
        "kind_names": {"message": "错误信息", "check": "C++ 检查或源码位置", "frame": "调用栈帧",
                       "call": "API 调用", "env": "环境变量"},
        "root_cause": "根本原因",
        "workaround": "规避方法",
        "environment": "所需环境",
        "env_th": ("需要", "取值"),
        "hardware": "上游出现问题的硬件",
        "hardware_names": {"cpu": "CPU", "tpu": "TPU", "gpu": "GPU", "tpu-multislice": "TPU 多切片", "any": "任意"},
        "devices": "虚拟 CPU 设备数（`CPU_NUM_DEVICES`）",
        "env": "环境变量",
        "packages": "额外的包",
        "python": "Python",
        "none": "无",
        "reproducer": "复现脚本",
        "fidelity": "保真度",
        "fidelity_names": {"exact": "精确：直接运行出错的代码路径",
                           "proxy": "代理：在 CPU 上检查成因，而不是完整的故障"},
        "proxy_checks": "代理检查的内容",
        "timeout": "超时",
        "run_xlakb": "用 xlakb 在一个受影响的版本和一个已修复的版本上运行（xlakb 会为每个版本构建干净的环境）：",
        "run_direct": "或者在已经装好 torch_xla 的环境里直接运行：",
        "exit_codes": "退出码：`0` 未复现，`1` 复现（输出须匹配上面的错误信息），`125` 在该环境中无法测试，其他值表示出错。",
        "source": "源代码",
        "versions": "版本",
        "claimed_affected": "声明受影响的版本",
        "fixed_in": "修复版本",
        "nightly_fixed": "修复的每日构建",
        "notes": "说明",
        "matrix": "受影响版本（实测）",
        "not_measured": "尚未实测。运行 `xlakb matrix {id}` 测量每个发布版本，并提交 `bisect/{id}/matrix.json`。",
        "matrix_intro": "每个 torch_xla 发布版本都在全新环境中运行了复现脚本（{runner} 运行器）。",
        "th_release": "torch_xla", "th_torch": "torch", "th_verdict": "结果", "th_claim": "记录声明",
        "th_date": "测量时间", "th_detail": "详情",
        "claim_affected": "受影响", "claim_fixed": "已修复", "claim_none": "—",
        "disagrees": "实测结果与声明不符",
        "legend": "图例",
        "bisect": "二分查找结果",
        "not_bisected": "尚未二分查找。`xlakb bisect {id} --source releases` 找出第一个发生变化的发布版本；`--source nightlies` 和 `--source commits` 可以进一步缩小范围。",
        "source_names": {"releases": "发布版本", "nightlies": "每日构建", "commits": "提交"},
        "direction": {"introduced": "引入", "fixed": "修复"},
        "bisect_head": "在{source}中二分查找：问题在哪里被{direction}",
        "last_old": "最后一个“{label}”", "first_new": "第一个“{label}”",
        "range": "查找范围",
        "candidates": "{n} 个候选",
        "exact": "变化已定位到单个步骤。",
        "inexact": "未能定位到单个步骤：两端之间还有 {n} 个变更。",
        "between": "两端之间的变更",
        "python_only": "仅 Python",
        "confidence": "可信度",
        "confidence_names": {"high": "高", "medium": "中", "low": "低"},
        "probes": "探测",
        "command": "重新运行",
        "measured_at": "测量时间",
        "upstream": "上游",
        "issues": "问题",
        "fixed_by": "修复于",
        "introduced_by": "引入于",
        "related": "相关",
        "links": "链接",
        "contribute": "添加或更正记录",
        "contribute_text": "发现了另一个 PyTorch/XLA 问题，或者这里有错误？请看[如何添加记录]({href})。",
        "home_filter_status": "状态", "home_filter_component": "组件", "home_filter_tag": "标签",
        "home_all": "全部", "home_shown": "条记录",
        "home_th_record": "记录", "home_th_status": "状态", "home_th_component": "组件",
        "home_th_tags": "标签", "home_th_affected": "受影响版本（声明）", "home_th_fixed": "修复版本",
        "home_th_measured": "实测", "home_not_measured": "尚未实测",
        "home_measured": "{n} 个版本",
        "home_empty": "还没有记录。",
        "home_th_strip": "各版本实测",
        "short": {"reproduced": "有", "not-reproduced": "无", "untestable": "不适用", "error": "错误", "none": ""},
        "not_measured_cell": "尚未实测",
        "coverage_th_record": "记录",
        "coverage_component": "组件 {name}",
        "component_title": "组件：{name}",
        "component_intro": "{name} 组件共有 {n} 条记录。每个格子是复现脚本在该 torch_xla 版本上实际运行的结果。",
        "component_all": "全部组件，所有版本",
        "triage": {"label": "粘贴你的报错、调用栈或日志", "version": "你的 torch_xla 版本（可选）",
                   "button": "查找已知问题", "placeholder": "Traceback (most recent call last): ...",
                   "empty": "请先粘贴日志。", "no_xla": "这段日志中没有 torch_xla 的迹象（没有 torch_xla 的调用栈、导入、版本或 XLA 日志行），因此不做匹配。",
                   "no_match": "没有已知记录与这段日志匹配。", "version_found": "torch_xla {v}", "no_version":
                   "日志中没有 torch_xla 版本：在上面填写你的版本，可以得到针对该版本的建议。",
                   "possible": "可能的匹配（只匹配到错误信息，没有调用栈、检查或调用等上下文）",
                   "strength": {"strong": "强匹配", "possible": "可能"}, "matched": "匹配", "line": "第",
                   "workaround": "临时解决办法：", "private": "你的日志只留在本页面：匹配在你的浏览器中完成，不会发送到任何地方。"},
    },
}

# Parts of a record page that are no text to search for are put in place of these markers
# after Material's search has indexed the page: less to parse twice per page and language.
SOURCE_MARKER = "<!-- xlakb:reproducer-source -->"
MATRIX_MARKER = "<!-- xlakb:matrix-table -->"

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


def _md_code(text: str) -> str:
    """Inline code in Markdown that survives backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _date(stamp: str | None) -> str:
    return (stamp or "")[:10]


def _a(url: str, text: str) -> str:
    return f'<a href="{escape(url)}">{escape(text)}</a>'


def _gh(repo: str, kind: str, number: int) -> str:
    return f"https://github.com/{repo}/{kind}/{number}"


def status_badge(status: str, lang: str) -> str:
    label = UI[lang]["status"].get(status, status)
    return f'<span class="xlakb-badge xlakb-status-{escape(status)}" data-status="{escape(status)}">{escape(label)}</span>'


def verdict_cell(verdict: str, lang: str, extra: str = "") -> str:
    label = UI[lang]["verdict"].get(verdict, verdict)
    return (f'<td class="xlakb-verdict xlakb-verdict-{escape(verdict)}" data-verdict="{escape(verdict)}"{extra}>'
            f"{escape(label)}</td>")


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
        found = [r["candidate"] for r in matrix["results"]
                 if r["verdict"] == verdict and r.get("kind", "release") == "release"]
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


def plain(text: str) -> str:
    """Markdown text as plain text for <title> and descriptions: code ticks and emphasis stars go."""
    return re.sub(r"\s+", " ", re.sub(r"`+|\*\*?", "", text)).strip()


def record_page(rec: SiteRecord, lang: str, contributing_href: str) -> str:
    """The Markdown of one record page in ``lang``."""
    t = UI[lang]
    d = rec.data
    rid = rec.id
    repo = d["upstream"]["repo"]
    out: list[str] = []
    out.append(front_matter({
        "title": plain(d["title"][lang]),
        "description": plain(d["summary"][lang])[:300],
        "tags": list(d["tags"]),
    }))
    out.append(f"# {d['title'][lang]}\n")
    out.append(
        f'<p class="xlakb-meta" data-record="{escape(rid)}">{status_badge(d["status"], lang)} '
        f'<span class="xlakb-component">{escape(t["component"])}: <a href="../../components/{escape(d["component"])}/">{_code(d["component"])}</a></span> '
        f'<span class="xlakb-id">{escape(t["record_id"])}: {_code(rid)}</span></p>\n'
    )
    out.append(d["summary"][lang].strip() + "\n")

    out.append(f"## {t['symptoms']} {{ #symptoms }}\n")
    out.extend(f"- {s.strip()}" for s in d["symptoms"][lang])
    out.append("")

    from ..triage import signatures_of

    out.append(f"## {t['signatures']} {{ #signatures }}\n")
    evidence = signatures_of(d)
    if evidence:
        out.append(t["evidence_intro"] + "\n")
        for sig in evidence:
            what = (f"{sig.file}" + (f" :: {sig.function}" if sig.function else "") if sig.kind == "frame"
                    else sig.name + (f"={sig.pattern}" if sig.pattern else "") if sig.kind == "env" else sig.pattern)
            out.append(f"- {t['kind_names'][sig.kind]}: {_md_code(what)}")
        out.append("")
    out.append(t["signatures_intro"] + "\n")
    out.extend(f"- {_md_code(p)}" for p in dict.fromkeys(d["reproducer"]["signatures"]))
    out.append("")

    out.append(f"## {t['root_cause']} {{ #root-cause }}\n")
    out.append(d["root_cause"][lang].strip() + "\n")
    out.append(f"## {t['workaround']} {{ #workaround }}\n")
    out.append(d["workaround"][lang].strip() + "\n")

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
    out.append(f"- {t['fidelity']}: {t['fidelity_names'].get(repro['fidelity'], repro['fidelity'])}")
    out.append(f"- {t['timeout']}: {repro['timeout']} s")
    out.append("")
    if repro.get("proxy_checks"):
        out.append(f'!!! note "{t["proxy_checks"]}"\n')
        out.extend("    " + line for line in repro["proxy_checks"][lang].strip().splitlines())
        out.append("")
    affected_example = example_release(rec, "reproduced") or "<release>"
    fixed_example = example_release(rec, "not-reproduced")
    cmds = [f"xlakb repro {rid} --torch-xla {affected_example}"]
    if fixed_example:
        cmds.append(f"xlakb repro {rid} --torch-xla {fixed_example}")
    out.append(t["run_xlakb"] + "\n")
    out.append(_fence("\n".join(cmds), "bash") + "\n")
    out.append(t["run_direct"] + "\n")
    out.append(_fence(run_command(rec), "bash") + "\n")
    out.append(t["exit_codes"] + "\n")
    # The source is long and not prose: it stays out of the search index. The hooks put
    # it in place of SOURCE_MARKER after indexing (highlighted once for both languages).
    out.append(f"### {t['source']} {{ #source data-search-exclude }}\n")
    out.append(SOURCE_MARKER + "\n")

    out.append(f"## {t['versions']} {{ #versions }}\n")
    v = d["versions"]
    out.append(f"- {t['claimed_affected']}: {_md_code(v['affected'])}")
    if v.get("fixed_in"):
        out.append(f"- {t['fixed_in']}: {_md_code(v['fixed_in'])}")
    if v.get("nightly_fixed"):
        out.append(f"- {t['nightly_fixed']}: {_md_code(str(v['nightly_fixed']))}")
    out.append("")
    if v.get("notes"):
        out.append(v["notes"][lang].strip() + "\n")

    out.append(f"## {t['matrix']} {{ #matrix }}\n")
    out.append(matrix_intro(rec, lang) + "\n")
    if rec.measured.matrix and rec.measured.matrix["results"]:
        # The table is data, not prose: the hooks put it in after indexing (see SOURCE_MARKER).
        out.append(MATRIX_MARKER + "\n")

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
            out.append(f"- {t[key]}: {links}")
    for link in up.get("links", []):
        out.append(f"- {t['links']}: <{link}>")
    out.append("")

    out.append(f"## {t['contribute']} {{ #contribute }}\n")
    out.append(t["contribute_text"].format(href=contributing_href) + "\n")
    return "\n".join(out)


def matrix_intro(rec: SiteRecord, lang: str) -> str:
    t = UI[lang]
    matrix = rec.measured.matrix
    if not matrix or not matrix["results"]:
        return f'<p class="xlakb-not-measured">{_inline_md_code(t["not_measured"].format(id=escape(rec.id)))}</p>'
    return f'<p>{escape(t["matrix_intro"].format(runner=str(matrix.get("runner", "?"))))}</p>'


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
        title = f' title="{escape(r.get("detail", ""))}"' if r.get("detail") else ""
        # Lean markup: every record page in every language carries one.
        rows.append(
            f'<tr data-candidate="{escape(r["candidate"])}">\n'
            f'<td>{escape(r["candidate"])}</td>\n'
            f'<td>{escape(str(r.get("torch", "")))}</td>\n'
            + verdict_cell(r["verdict"], lang, title)
            + f"\n<td>{escape(claim_text)}{mark}</td>\n"
            f'<td>{escape(_date(r.get("measured_at")))}</td>\n'
            f'<td class="xlakb-detail">{escape(r.get("detail", ""))}</td>\n'
            "</tr>"
        )
    legend = " ".join(
        f'<span class="xlakb-verdict xlakb-verdict-{v}">{escape(t["verdict"][v])}</span>' for v in t["verdict"]
    )
    return (
        f'<table class="xlakb-matrix" data-record="{escape(rec.id)}" data-search-exclude>\n'
        f'<thead><tr><th>{t["th_release"]}</th><th>{t["th_torch"]}</th><th>{t["th_verdict"]}</th>'
        f'<th>{escape(t["th_claim"])}</th><th>{escape(t["th_date"])}</th><th>{escape(t["th_detail"])}</th></tr></thead>'
        f'<tbody>\n{chr(10).join(rows)}\n</tbody></table>\n'
        f'<p class="xlakb-legend">{escape(t["legend"])}: {legend}</p>'
    )


def _inline_md_code(text: str) -> str:
    """Turn `x` spans of an already escaped UI string into <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


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
    return f"<li>{escape(head)}: {' '.join(bits)}</li>"


def bisect_html(report: dict, repo: str, lang: str) -> str:
    t = UI[lang]
    source = report.get("source", "?")
    direction = report.get("direction", "?")
    head = t["bisect_head"].format(source=t["source_names"].get(source, source),
                                   direction=t["direction"].get(direction, direction))
    items = []
    rng = report.get("range") or {}
    if rng:
        items.append(f"<li>{escape(t['range'])}: {_code(str(rng.get('first', '?')))} … {_code(str(rng.get('last', '?')))}"
                     f" ({escape(t['candidates'].format(n=rng.get('count', '?')))})</li>")
    items.append(_end_html(report.get("last_old"), repo, lang, "last_old", report.get("old_label", "not-reproduced")))
    items.append(_end_html(report.get("first_new"), repo, lang, "first_new", report.get("new_label", "reproduced")))
    conf = report.get("confidence")
    if conf:
        reasons = "; ".join(escape(str(x)) for x in report.get("confidence_reasons", []))
        items.append(f"<li>{escape(t['confidence'])}: <strong>{escape(t['confidence_names'].get(conf, conf))}</strong>"
                     + (f" ({reasons})" if reasons else "") + "</li>")
    probes = report.get("probes") or []
    if probes:
        cells = "\n".join(
            f'<span class="xlakb-cell xlakb-verdict-{escape(str(p.get("verdict")))}" '
            f'title="{escape(str(p.get("verdict")))}">{escape(str(p.get("candidate")))}</span>'
            for p in probes
        )
        items.append(f'<li>{escape(t["probes"])} ({len(probes)}): <span class="xlakb-strip" data-search-exclude>{cells}</span></li>')
    if report.get("measured_at"):
        items.append(f"<li>{escape(t['measured_at'])}: {escape(_date(report['measured_at']))}</li>")
    if report.get("command"):
        items.append(f"<li>{escape(t['command'])}: {_code(report['command'])}</li>")
    between = report.get("between") or []
    parts = [f'<div class="xlakb-bisect" data-source="{escape(source)}">',
             f"<h3>{escape(head)}</h3>", "<ul>\n" + "\n".join(i for i in items if i) + "\n</ul>"]
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
            rows.append(f"<tr>\n<td>{link}</td>\n<td>{pr}</td>\n<td>{escape(str(c.get('subject', '')))}</td>\n<td>{py}</td>\n</tr>")
        parts.append(
            f'<table class="xlakb-between"><caption>{escape(t["between"])}</caption>'
            f'<thead><tr><th>commit</th><th>PR</th><th></th><th>{escape(t["python_only"])}</th></tr></thead>'
            f'<tbody>\n{chr(10).join(rows)}\n</tbody></table>'
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
            f'<option value="{escape(v)}">{escape(text)}</option>' for v, text in options)
        parts.append(f'<label>{escape(label)} <select class="xlakb-filter" data-filter="{name}" '
                     f'name="{name}">{opts}</select></label>')
    return ('<form class="xlakb-filters" onsubmit="return false">' + "".join(parts)
            + f' <span class="xlakb-count"><span class="xlakb-count-n">{shown}</span> {escape(t["home_shown"])}</span>'
            + "</form>")


def records_table(records: list[SiteRecord], lang: str, href) -> str:
    """The home page table, filterable by status, component and tag (site/assets/javascripts/xlakb.js)."""
    t = UI[lang]
    if not records:
        return f"<p>{escape(t['home_empty'])}</p>"
    statuses = [s for s in t["status"] if any(r.data["status"] == s for r in records)]
    components = sorted({r.data["component"] for r in records})
    tags = sorted({tag for r in records for tag in r.data["tags"]})
    filters = filter_form(lang, len(records), [
        ("status", t["home_filter_status"], [(s, t["status"][s]) for s in statuses]),
        ("component", t["home_filter_component"], [(c, c) for c in components]),
        ("tag", t["home_filter_tag"], [(g, g) for g in tags]),
    ])
    rows = []
    releases = releases_shown(records)
    for r in records:
        d = r.data
        m = r.measured.matrix
        if m and m["results"]:
            dates = sorted(x.get("measured_at", "") for x in m["results"])
            measured = escape(t["home_measured"].format(n=len(m["results"])) + (f", {_date(dates[-1])}" if dates[-1] else ""))
        else:
            measured = escape(t["home_not_measured"])
        tag_html = " ".join(f'<span class="xlakb-tag">{escape(g)}</span>' for g in d["tags"])
        rows.append(
            f'<tr data-id="{escape(r.id)}" data-status="{escape(d["status"])}" '
            f'data-component="{escape(d["component"])}" data-tags=" {escape(" ".join(d["tags"]))} ">'
            f'<td><a href="{escape(href(r.id))}">{escape(d["title"][lang])}</a><br>{_code(r.id)}</td>'
            f"<td>{status_badge(d['status'], lang)}</td>"
            f"<td>{_code(d['component'])}</td>"
            f"<td>{tag_html}</td>"
            f"<td>{_code(d['versions']['affected'])}</td>"
            f"<td>{escape(d['versions'].get('fixed_in') or '—')}</td>"
            f"<td>{measured}<br>{release_strip(r, lang, releases)}</td></tr>"
        )
    head = "".join(f"<th>{escape(t[k])}</th>" for k in (
        "home_th_record", "home_th_status", "home_th_component", "home_th_tags",
        "home_th_affected", "home_th_fixed", "home_th_measured"))
    return (filters + "\n"
            + f'<table class="xlakb-records"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


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
    return {row["candidate"]: row for row in (rec.measured.matrix or {}).get("results", [])
            if row.get("kind", "release") == "release"}


def _heat_cell(rec: SiteRecord, release: str, row: dict | None, lang: str, tag: str = "td") -> str:
    t = UI[lang]
    verdict = row["verdict"] if row else "none"
    label = t["verdict"].get(verdict, t["not_measured_cell"])
    title = f"{release}: {label}" + (f" ({row.get('detail', '')})" if row and row.get("detail") else "")
    return (f'<{tag} class="xlakb-heat xlakb-verdict-{escape(verdict)}" data-release="{escape(release)}" '
            f'data-verdict="{escape(verdict)}" title="{escape(title)}">{escape(t["short"].get(verdict, ""))}</{tag}>')


def release_strip(rec: SiteRecord, lang: str, releases: tuple[str, ...]) -> str:
    """One small coloured cell per release (the home table's strip)."""
    measured = _measured_by_release(rec)
    cells = "".join(_heat_cell(rec, v, measured.get(v), lang, tag="span") for v in releases)
    return f'<span class="xlakb-strip xlakb-heatstrip" data-record="{escape(rec.id)}">{cells}</span>'


def coverage_table(records: list[SiteRecord], lang: str, href, *, component_href=None, filters: bool = True) -> str:
    """The heat map: one row per record, one cell per release, grouped by component (a header row
    per component) and filterable by component (site/assets/javascripts/xlakb.js)."""
    t = UI[lang]
    if not records:
        return f"<p>{escape(t['home_empty'])}</p>"
    releases = releases_shown(records)
    components = sorted({r.data["component"] for r in records})
    form = filter_form(lang, len(records), [("component", t["home_filter_component"], [(c, c) for c in components])]) + "\n" \
        if filters else ""
    head = (f"<th>{escape(t['coverage_th_record'])}</th><th>{escape(t['home_th_status'])}</th>"
            + "".join(f"<th>{escape(v)}</th>" for v in releases))
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
                f'data-tags=" {escape(" ".join(r.data["tags"]))} ">'
                f'<td><a href="{escape(href(r.id))}">{_code(r.id)}</a></td><td>{status_badge(r.data["status"], lang)}</td>'
                + "".join(_heat_cell(r, v, measured.get(v), lang) for v in releases) + "</tr>")
    legend = " ".join(f'<span class="xlakb-verdict xlakb-verdict-{v}">{escape(t["short"][v])} = {escape(t["verdict"][v])}</span>'
                      for v in t["verdict"])
    return (form + f'<table class="xlakb-records xlakb-coverage" data-search-exclude><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>\n<p class="xlakb-legend">{escape(t["legend"])}: {legend}</p>')


def component_page(component: str, records: list[SiteRecord], lang: str) -> str:
    """A generated page per component: its records and their heat map (put in at the marker)."""
    t = UI[lang]
    mine = [r for r in records if r.data["component"] == component]
    title = t["component_title"].format(name=component)
    return (front_matter({"title": title}) + f"# {title}\n\n"
            + t["component_intro"].format(n=len(mine), name=f"`{component}`") + "\n\n" + COMPONENT_MARKER + "\n")


COMPONENT_MARKER = "<!-- xlakb:component -->"
COVERAGE_MARKER = "<!-- xlakb:coverage -->"


TRIAGE_MARKER = "<!-- xlakb:triage -->"


def triage_form(lang: str, data_src: str, records_href: str) -> str:
    """The paste box (site/assets/javascripts/triage.js runs the rules on ``data_src``)."""
    t = UI[lang]["triage"]
    words = json.dumps(t, ensure_ascii=False).replace("<", "\\u003c")
    return (f'<form class="xlakb-triage" data-lang="{lang}" data-src="{escape(data_src)}" data-records="{escape(records_href)}" '
            f'data-search-exclude>'
            f'<script type="application/json" class="xlakb-triage-words">{words}</script>'
            f'<p><label>{escape(t["label"])}<br><textarea name="log" rows="14" placeholder="{escape(t["placeholder"])}"></textarea></label></p>'
            f'<p><label>{escape(t["version"])} <input name="torch_xla" size="12" placeholder="2.5.1"></label> '
            f'<button type="submit" class="md-button md-button--primary">{escape(t["button"])}</button></p>'
            f'<p class="xlakb-triage-private">{escape(t["private"])}</p></form>'
            f'<div class="xlakb-triage-result" data-search-exclude></div>')
