"""Which commits of a pytorch/xla clone say they fix a stored report, and the first release that has each.

A commit names the issue it fixes in its subject or body (``Fixes #8522``, ``fix
https://github.com/pytorch/xla/issues/8522``, or ``#8522`` in the subject of a commit whose own PR is
another number). The first release with the fix is the oldest ``vX.Y.Z`` tag that contains the commit or a
cherry-pick of its PR onto a release branch (the same ``(#PR)`` in a commit's subject). Kept as
``upstream/fixes.json``, data the reported tier reads: a report gets "fixed by PR Y, first in release X",
and a report stored as open that a commit fixes is marked stale.

Reads a clone with git; writes nothing but what :func:`save` is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from packaging.version import Version

from ..gitrepo import open_repo

FIXES = Path("upstream") / "fixes.json"
#: a commit message that says it fixes an issue: the verb, then the issue by number or by its URL
FIXES_ISSUE = re.compile(
    r"(?i)\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|address(?:es|ed)?)\b[ \t:]*"
    r"(?:(?:https://github\.com/pytorch/xla/issues/)|(?:pytorch/xla)?#)(\d+)"
)
#: the PR number GitHub's squash merge puts at the end of a subject
OWN_PR = re.compile(r"\(#(\d+)\)\s*$")
_TAG = re.compile(r"^v(\d+\.\d+\.\d+)$")


def linked(subject: str, body: str, known: set[int]) -> list[int]:
    """The stored issues a commit says it fixes: a fixing verb before ``#N`` or the issue's URL anywhere in
    its message, or ``#N`` in its subject that is not its own PR number."""
    own = OWN_PR.search(subject)
    own_pr = int(own.group(1)) if own else None
    found = {int(n) for n in FIXES_ISSUE.findall(subject + "\n" + body)}
    found |= {int(n) for n in re.findall(r"#(\d+)", OWN_PR.sub("", subject))}
    return sorted(n for n in found if n in known and n != own_pr)


def find(repo, issues: Iterable[int], progress=None) -> dict[int, list[dict]]:
    """For each stored issue a commit of ``master`` says it fixes: the fixes (PR, commit, first release)."""
    r = open_repo(repo)
    known = set(issues)
    log = r.git.log("master", "--format=%H%x00%s%x00%b%x1e")
    fixes: dict[int, list[dict]] = {}
    for entry in log.split("\x1e"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) < 3:
            continue
        sha, subject, body = parts[0].strip(), parts[1], parts[2]
        for n in linked(subject, body, known):
            own = OWN_PR.search(subject)
            fixes.setdefault(n, []).append({"pr": int(own.group(1)) if own else None, "commit": sha[:12], "subject": subject})
    tags = _tags(r)
    shipped: dict[str, str | None] = {}
    todo = sorted({f["commit"] for fs in fixes.values() for f in fs})
    for i, sha in enumerate(todo):
        if progress is not None:
            progress.step(i, len(todo), f"first release of {sha}")
        shipped[sha] = _first_release(r, sha, tags)
    picked = _cherry_picks(r, tags, {f["pr"] for fs in fixes.values() for f in fs if f["pr"]})
    for fs in fixes.values():
        for f in fs:
            candidates = [v for v in (shipped.get(f["commit"]), picked.get(f["pr"])) if v]
            f["release"] = min(candidates, key=Version) if candidates else None
    return fixes


def _tags(r) -> dict[str, str]:
    out = {}
    for line in r.git.for_each_ref("--format=%(refname:short)", "refs/tags").splitlines():
        m = _TAG.match(line.strip())
        if m:
            out[line.strip()] = m.group(1)
    return out


def _first_release(r, sha: str, tags: dict[str, str]) -> str | None:
    found = [tags[t] for t in r.git.tag("--contains", sha).split() if t in tags]
    return min(found, key=Version) if found else None


def _cherry_picks(r, tags: dict[str, str], prs: set[int]) -> dict[int, str]:
    """The first release holding a commit of another branch whose subject names a PR of ``prs``."""
    out: dict[int, str] = {}
    for line in r.git.log("--all", "--format=%H%x00%s").splitlines():
        sha, _, subject = line.partition("\x00")
        for n in re.findall(r"#(\d+)\)", subject):
            pr = int(n)
            if pr in prs:
                release = _first_release(r, sha, tags)
                if release and (pr not in out or Version(release) < Version(out[pr])):
                    out[pr] = release
    return out


def load(root: Path) -> dict[int, list[dict]]:
    path = root / FIXES
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
        return {int(k): list(v) for k, v in data["fixes"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save(root: Path, fixes: dict[int, list[dict]], source: str) -> Path:
    path = root / FIXES
    body = {"source": source, "fixes": {str(k): v for k, v in sorted(fixes.items())}}
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return path
