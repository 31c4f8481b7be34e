"""`xlakb new <id>`: a record and a reproducer that pass `xlakb validate` as they are."""

from __future__ import annotations

import re
from pathlib import Path

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
status: open
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
  fixed_by: []
environment:
  hardware: cpu
  devices: 4
  env: {{}}
  packages: [numpy]
reproducer:
  path: reproducers/{id}.py
  fidelity: exact
  timeout: 300
  signatures:
    - "XLAKB-REPRODUCED"
versions:
  affected: ">=2.1"
"""

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


def scaffold(root: Path, record_id: str, component: str = "misc", signatures: list[dict] | None = None) -> tuple[Path, Path]:
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
    repro.write_text(REPRODUCER.format(id=record_id, path=f"reproducers/{record_id}.py"), "utf-8")
    text = RECORD.format(id=record_id, component=component)
    if signatures:
        start = text.index("# What `xlakb triage` looks for")
        end = text.index("upstream:")
        text = text[:start] + _signatures_block(signatures) + text[end:]
    record.write_text(text, "utf-8")
    return record, repro
