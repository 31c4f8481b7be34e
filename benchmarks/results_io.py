"""What a benchmark measured, kept as data: ``benchmarks/results/<name>.json``, each figure with its words in
both languages, the command that measured it, the date and the machine's size (never a path of it). The
site's measurements page is made from these files, not typed by hand."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def figure(en: str, zh: str, value, unit: str = "", note_en: str = "", note_zh: str = "") -> dict:
    """One figure: what it is (both languages), its value and unit, and a note when it needs one."""
    out = {"what": {"en": en, "zh": zh}, "value": value, "unit": unit}
    if note_en or note_zh:
        out["note"] = {"en": note_en, "zh": note_zh}
    return out


def write(name: str, title_en: str, title_zh: str, command: str, figures: list[dict]) -> Path:
    """Keep ``figures`` as ``results/<name>.json`` (written atomically)."""
    RESULTS.mkdir(exist_ok=True)
    data = {
        "benchmark": name,
        "title": {"en": title_en, "zh": title_zh},
        "command": command,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version()},
        "figures": figures,
    }
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    tmp.replace(path)
    return path
