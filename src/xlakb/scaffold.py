"""`xlakb new <id>`: a record and a reproducer that pass `xlakb validate` as they are (from the template, a\nlog's signatures, or a finished script bisection: ``--from-bisect``)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from .errors import XlakbError

ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

RECORD = """\
# yaml-language-server: $schema=../src/xlakb/data/record.schema.json
id: {id}
title:
  en: "TODO: one line naming the bug as a user meets it"
  zh: "待补充：用一句话说明用户遇到的问题"
summary:
  en: "TODO: two or three sentences: what breaks, when, and what to do."
  zh: "待补充：两三句话说明出了什么问题、何时出现、如何应对。"
symptoms:
  en:
    - "TODO: the error message or wrong behaviour a user sees"
  zh:
    - "待补充：用户看到的报错或异常行为"
root_cause:
  en: "TODO: why it happens, with the function or file at fault."
  zh: "待补充：问题的根本原因，指出出错的函数或文件。"
workaround:
  en: "TODO: what to do until a fixed release is installed."
  zh: "待补充：在升级到修复版本之前的规避方法。"
status: {status}
component: {component}
tags: [{component}]
# What `xlakb triage` looks for in a user's log. A message alone is no evidence: add context
# (kinds: message, check, frame, call, env; see the schema).
signatures:
  - message: "TODO-replace-with-a-regex-of-the-error-users-see"
  - frame: {{file: 'TODO_torch_xla_file_in_the_traceback\\.py', function: 'TODO_function'}}
upstream:
  repo: pytorch/xla
  issues: []
  fixed_by: {fixed_by}
environment:
  hardware: cpu
  devices: 4
  env: {env}
  packages: {packages}
reproducer:
  path: reproducers/{id}.py
  fidelity: exact
  timeout: {timeout}
  signatures:
    - {repro_signature}
versions:
{versions}"""

REPRODUCER = '''\
"""Reproducer for issues/{id}.yaml.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python {path}
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main() -> int:
    try:
        import torch
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {{err}}")
        return UNTESTABLE

    device = xm.xla_device()
    x = torch.ones(2, 2, device=device)
    # TODO: trigger the bug here, and catch ONLY its own exception:
    # try:
    #     ...
    # except TypeError as err:
    #     if "the bug's message" in str(err):
    #         print(f"XLAKB-REPRODUCED: {{err}}")
    #         return REPRODUCED
    #     raise
    print(f"not reproduced: {{(x + x).cpu().sum().item()}}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
'''


def _signatures_block(signatures: list[dict]) -> str:
    """The record's ``signatures:`` block for signatures taken from a log (``xlakb new --from-log``)."""
    import yaml

    body = yaml.safe_dump(signatures, allow_unicode=True, sort_keys=False, width=1000, default_flow_style=None)
    return (
        "# Taken from the log by `xlakb new --from-log`: keep what only this bug shows, make the rest\n"
        "# general (paths, numbers, names), and add the call or frame that triggers it.\nsignatures:\n"
        + "".join(f"  {line}\n" for line in body.splitlines())
    )


@dataclass(frozen=True)
class Draft:
    """What a new record starts from besides its id and component; by default the template's own values
    (``xlakb new``), or what a script bisection measured (:func:`draft_from_bisect`)."""

    signatures: list[dict] | None = None  # triage signatures taken from a log
    reproducer: bytes | None = None  # the reproducer's text (default: the template's)
    repro_signature: str = "XLAKB-REPRODUCED"
    env: dict[str, str] = field(default_factory=dict)
    packages: tuple[str, ...] = ("numpy",)
    timeout: int = 300
    affected: str = ">=2.1"
    fixed_in: str | None = None
    fixed_by: tuple[int, ...] = ()
    note: list[str] = field(default_factory=list)  # comment lines put under the schema line

    def record_text(self, record_id: str, component: str) -> str:
        versions = f"  affected: {json.dumps(self.affected)}\n" + (
            f"  fixed_in: {json.dumps(self.fixed_in)}\n" if self.fixed_in else ""
        )
        text = RECORD.format(
            id=record_id,
            component=component,
            status="fixed" if self.fixed_in else "open",
            fixed_by=json.dumps(list(self.fixed_by)),
            env=json.dumps(self.env, ensure_ascii=False) if self.env else "{}",
            packages="[" + ", ".join(p if _BARE.match(p) else json.dumps(p) for p in self.packages) + "]",
            timeout=self.timeout,
            repro_signature=json.dumps(self.repro_signature, ensure_ascii=False),
            versions=versions,
        )
        if self.signatures:
            start = text.index("# What `xlakb triage` looks for")
            end = text.index("upstream:")
            text = text[:start] + _signatures_block(self.signatures) + text[end:]
        if self.note:
            first, rest = text.split("\n", 1)
            text = first + "\n" + "".join(f"# {line}\n" for line in self.note) + rest
        return text


_BARE = re.compile(r"^[A-Za-z0-9_.-]+$")


def scaffold(
    root: Path, record_id: str, component: str = "misc", signatures: list[dict] | None = None, *, draft: Draft | None = None
) -> tuple[Path, Path]:
    draft = draft or Draft(signatures=signatures)
    if not ID_RE.match(record_id) or len(record_id) > 80:
        raise XlakbError(f"bad id {record_id!r}: use lower-case words joined by '-', e.g. spmd-scalar-param-crash")
    if not ID_RE.match(component):
        raise XlakbError(f"bad component {component!r}: use lower-case words joined by '-'")
    record = root / "issues" / f"{record_id}.yaml"
    repro = root / "reproducers" / f"{record_id}.py"
    for path in (record, repro):
        if path.exists():
            raise XlakbError(f"{path.relative_to(root)} already exists; nothing was written")
    record.parent.mkdir(parents=True, exist_ok=True)
    repro.parent.mkdir(parents=True, exist_ok=True)
    if draft.reproducer is None:
        repro.write_text(REPRODUCER.format(id=record_id, path=f"reproducers/{record_id}.py"), "utf-8")
    else:
        repro.write_bytes(draft.reproducer)
    record.write_text(draft.record_text(record_id, component), "utf-8")
    return record, repro


def draft_from_bisect(data: dict, where: str, signatures: list[dict] | None = None) -> Draft:
    """A record's draft from a script bisection's JSON report (``xlakb bisect --script F --report R.json``):
    the script as its reproducer, its packages, settings and timeout, its signature (``--match``, else the
    error line of the failing probe's log, as ``signatures`` took it), and the versions its release verdicts
    show. ``where`` names the report in errors."""
    if not isinstance(data, dict) or data.get("kind") != "script-bisect":
        raise XlakbError(
            f"{where}: not a script bisection report",
            hint="pass the JSON that `xlakb bisect --script FILE --report R.json` wrote",
        )
    script = data["script"]
    if script.get("kind") != "python":
        raise XlakbError(
            f"{where}: the script {script.get('name')} is not a Python file; a record's reproducer is one",
            hint="write reproducers/<id>.py doing what the script does, then xlakb new <id>",
        )
    text = script.get("text", "").encode("utf-8")
    if hashlib.sha256(text).hexdigest() != script.get("sha256"):
        raise XlakbError(f"{where}: the script's text does not match its sha256 (the report was edited)")
    stages = data.get("stages") or []
    affected, fixed_in = _versions([s for s in stages if s.get("source") == "releases"])
    fixed_by = tuple(
        s["answer"]["pr"]
        for s in stages
        if s.get("source") == "commits" and s.get("direction") == "fixed" and s["answer"].get("pr")
    )
    messages = [sig["message"] for sig in signatures or [] if "message" in sig]
    lines = [ln.strip() for ln in (data.get("failing_log") or {}).get("excerpt", "").splitlines() if ln.strip()]
    signature = script.get("match") or (messages[-1] if messages else re.escape(lines[-1][:120]) if lines else "XLAKB-REPRODUCED")
    note = [f"Drafted by `xlakb new --from-bisect` from {Path(where).name}: {data.get('command', '')}"]
    if script.get("args"):
        note.append(f"The script ran with arguments {' '.join(script['args'])}: a reproducer takes none, make them its defaults.")
    if script.get("regress") != "error":
        note.append(
            f"The script was judged by --regress {script.get('regress')}: make the reproducer exit 1 and print its "
            "signature when the bug shows, 0 when it does not."
        )
    if not affected:
        note.append("No release stage in the bisection: set versions.affected from what was measured.")
    return Draft(
        signatures=signatures or None,
        reproducer=text,
        repro_signature=signature,
        env=dict(s.partition("=")[::2] for s in script.get("settings", [])),
        packages=tuple(script.get("with", [])),
        timeout=int(script.get("timeout") or 300),
        affected=affected or ">=2.1",
        fixed_in=fixed_in,
        fixed_by=fixed_by,
        note=note,
    )


def _versions(stages: list[dict]) -> tuple[str | None, str | None]:
    """(affected, fixed_in) from release stages' answers: bad from the first bad release (or the oldest one
    probed bad), up to the first good one after it."""
    lo = hi = None
    for s in stages:
        answer = s["answer"]
        if "first_bad" in answer:
            lo = answer["first_bad"]
        else:
            hi = answer["first_good"]
            bad = [p["candidate"] for p in s.get("probes", []) if p.get("verdict") == "bad"]
            older = min(bad, key=Version) if bad else s["range"]["first"]
            lo = lo if lo and Version(lo) <= Version(older) else older
    if lo is None:
        return None, None
    return (f">={lo},<{hi}" if hi else f">={lo}"), hi
