"""What a stored report's own thread says was the cause, where a pytorch/xla developer said it.

``upstream/causes.yaml`` in the repository: one entry a report, each with the developer's GitHub handle, how many
commits the pytorch/xla clone has by them (a developer is someone with commits; a reporter's own theory or a
guess does not count), the thread's URL, and the cause in one sentence of our own words in English and Chinese.
Triage shows it beside the report (CLI and paste box). Pure code: loading and checking; raises XlakbError naming
the file, the entry and the field; prints nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import XlakbError

CAUSES = Path("upstream") / "causes.yaml"
#: one sentence each: the answer shows it on one line
MAX_EN = 200
MAX_ZH = 100
_URL = re.compile(r"^https://github\.com/pytorch/xla/(?:issues|pull)/\d+(?:#[\w-]+)?$")
_HANDLE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
FIELDS = ("issue", "by", "commits", "url", "en", "zh")


@dataclass(frozen=True)
class Cause:
    issue: int
    by: str
    commits: int
    url: str
    en: str
    zh: str

    def to_json(self) -> dict:
        return asdict(self)


def _cause(item, where: str) -> Cause:
    if not isinstance(item, Mapping):
        raise XlakbError(f"{where}: must be a mapping with {', '.join(FIELDS)}")
    extra = sorted(set(item) - set(FIELDS))
    if extra:
        raise XlakbError(f"{where}: unknown field {extra[0]!r} (fields: {', '.join(FIELDS)})")
    for name in FIELDS:
        if name not in item:
            raise XlakbError(f"{where}: field {name!r} is missing")
    issue, by, commits, url, en, zh = (item[k] for k in FIELDS)
    if not isinstance(issue, int) or isinstance(issue, bool) or issue <= 0:
        raise XlakbError(f"{where}: 'issue' must be an issue number, not {issue!r}")
    where = f"{where} (#{issue})"
    if not isinstance(by, str) or not _HANDLE.match(by):
        raise XlakbError(f"{where}: 'by' must be a GitHub handle, not {by!r}")
    if not isinstance(commits, int) or isinstance(commits, bool) or commits <= 0:
        raise XlakbError(f"{where}: 'commits' must be a positive count (a developer has commits), not {commits!r}")
    if not isinstance(url, str) or not _URL.match(url):
        raise XlakbError(f"{where}: 'url' must be a https://github.com/pytorch/xla/issues/<n> link, not {url!r}")
    if not isinstance(en, str) or not en.strip() or len(en) > MAX_EN or "\n" in en.strip():
        raise XlakbError(f"{where}: 'en' must be one sentence of at most {MAX_EN} characters")
    if not isinstance(zh, str) or not _CJK.search(zh) or len(zh) > MAX_ZH or "\n" in zh.strip():
        raise XlakbError(f"{where}: 'zh' must be one Chinese sentence of at most {MAX_ZH} characters")
    return Cause(issue, by, commits, url, en.strip(), zh.strip())


def load(root: Path) -> dict[int, Cause]:
    """The causes by issue number (none when the file does not exist); XlakbError naming the file, the entry and
    the field on bad input, or an issue given twice."""
    from ..records import parse_file  # bounded and alias-free, as records are read

    path = root / CAUSES
    if not path.exists():
        return {}
    data, _node, found = parse_file(path)
    if found:
        raise XlakbError(f"{CAUSES}:{found[0].line or 1}: {found[0].message}")
    if not isinstance(data, Mapping) or not isinstance(data.get("causes"), list):
        raise XlakbError(f"{CAUSES}: must hold a list under 'causes'")
    out: dict[int, Cause] = {}
    for i, item in enumerate(data["causes"]):
        cause = _cause(item, f"{CAUSES}: causes[{i}]")
        if cause.issue in out:
            raise XlakbError(f"{CAUSES}: causes[{i}]: #{cause.issue} is given twice")
        out[cause.issue] = cause
    return out


def problems(causes: Mapping[int, Cause], reports: Mapping[int, object]) -> list[str]:
    """What the causes say that the store contradicts: a report it does not hold, a URL of another issue."""
    out = []
    for n, c in sorted(causes.items()):
        if n not in reports:
            out.append(f"{CAUSES}: #{n} is not a stored report (upstream/issues.jsonl)")
        elif not re.search(rf"/{n}(?:#|$)", c.url):
            out.append(f"{CAUSES}: #{n}: 'url' {c.url!r} is another thread's")
    return out
