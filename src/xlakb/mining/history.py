"""What a pytorch/xla clone says of its fixes: the commits that change a test, and the first release of each.

A fix reaches users in a release in one of two ways: the release branch (``r2.N``) was cut after the commit
(ancestry: the commit is an ancestor of the branch point, so every ``v2.N.x`` tag has it), or the commit was
cherry-picked onto a release branch (a new commit there, found by the PR number in its subject, by its patch
id, or by its subject once ``[CherryPick]`` prefixes and PR numbers are taken out). The first release is the
earliest of both.

Library code: reads git, raises XlakbError, prints nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..errors import XlakbError
from ..gitrepo import open_repo, repo_path, rev

_TAG = re.compile(r"^v(\d+\.\d+\.\d+)$")
_PR = re.compile(r"\(#(\d+)\)")
_PR_ANY = re.compile(r"#(\d{3,6})\b")
_CHERRY = re.compile(r"^\s*(\[?\s*cherry[- ]?pick(ed)?\s*\]?\s*:?\s*)+", re.IGNORECASE)
SEP = "\x1e"  # record separator between commits in git log output
FSEP = "\x1f"  # field separator


@dataclass(frozen=True)
class Commit:
    """One commit of the mined branch: its sha, subject, body, date, PR number (from ``(#N)`` at the end of the
    subject) and the files it changed."""

    sha: str
    subject: str
    body: str
    date: str
    files: tuple[str, ...] = ()

    @property
    def pr(self) -> int | None:
        found = _PR.findall(self.subject)
        return int(found[-1]) if found else None

    @property
    def test_files(self) -> tuple[str, ...]:
        return tuple(f for f in self.files if f.startswith("test/") and f.endswith(".py"))


@dataclass(frozen=True)
class Shipped:
    """The releases that have a commit (oldest first), and how the first of them got it."""

    releases: tuple[str, ...]
    how: str  # "ancestry" or "cherry-pick <sha> (<why it matched>)"

    @property
    def release(self) -> str:
        return self.releases[0]

    def first_of(self, published) -> str | None:
        """The first of ``published`` (versions a user can install) that has the commit."""
        have = set(self.releases)
        return next((v for v in sorted(published, key=Version) if v in have), None)


@dataclass
class History:
    """The releases of a clone and the commits changing tests between two of them, on one branch."""

    repo: str
    branch: str
    releases: list[tuple[str, str]]  # (version, tag sha), oldest first
    commits: list[Commit] = field(default_factory=list)


def release_tags(repo) -> list[tuple[str, str]]:
    """Every ``vX.Y.Z`` tag (no release candidates) with its commit, oldest release first."""
    r = open_repo(repo)
    out = []
    for line in r.git.for_each_ref("--format=%(refname:short) %(objectname) %(*objectname)", "refs/tags").splitlines():
        parts = line.split()
        m = _TAG.match(parts[0]) if parts else None
        if m:
            out.append((m.group(1), parts[2] if len(parts) > 2 else parts[1]))
    try:
        return sorted(out, key=lambda t: Version(t[0]))
    except InvalidVersion as err:  # pragma: no cover - the regex admits only versions
        raise XlakbError(str(err)) from None


def _log(r, *args: str) -> list[Commit]:
    out = r.git.log(f"--format={SEP}%H{FSEP}%cs{FSEP}%s{FSEP}%b{FSEP}", "--name-only", *args)
    commits = []
    for chunk in out.split(SEP)[1:]:
        sha, date, subject, body, files = (chunk.split(FSEP) + [""] * 5)[:5]
        commits.append(
            Commit(sha, subject.strip(), body.strip(), date, tuple(f for f in files.strip().splitlines() if f.strip()))
        )
    return commits


def test_commits(repo, start: str, end: str, branch: str = "master") -> History:
    """The commits of ``branch`` that change a Python test (``test/**.py``) after ``start``'s release branch
    was cut and up to ``end``'s (``end`` newer than every release: up to the branch head), oldest first."""
    r = open_repo(repo)
    tags = release_tags(r)
    known = dict(tags)
    if start not in known:
        raise XlakbError(f"no tag v{start} in {repo_path(r)}", hint="fetch the tags, or pick a release it has")
    head = rev(r, branch, "branch")
    base = r.git.merge_base(head, known[start]).strip()
    if end in known:
        stop = r.git.merge_base(head, known[end]).strip()
    else:
        stop = head
    commits = _log(r, "--first-parent", "--reverse", f"{base}..{stop}", "--", "test")
    return History(repo_path(r), branch, tags, [c for c in commits if c.test_files])


def _norm_subject(subject: str) -> str:
    s = _CHERRY.sub("", subject)
    s = _PR.sub("", s)
    s = re.sub(r"(?i)^cherry[- ]?pick\s+", "", s)
    return re.sub(r"\W+", " ", s).strip().lower()


def _patch_id(r, sha: str) -> str | None:
    import subprocess

    diff = subprocess.run(["git", f"--git-dir={r.git_dir}", "show", "--format=", sha], capture_output=True)
    if diff.returncode != 0 or not diff.stdout:
        return None
    pid = subprocess.run(["git", f"--git-dir={r.git_dir}", "patch-id", "--stable"], input=diff.stdout, capture_output=True)
    out = pid.stdout.decode().split()
    return out[0] if out else None


_REVERT = re.compile(r'^\s*revert\b\s*:?\s*"?(.*?)"?(?:\s*\(#\d+\))*\s*$', re.IGNORECASE)
_REVERTS_SHA = re.compile(r"\bThis reverts commit ([0-9a-f]{7,40})\b")
_REVERTS_PR = re.compile(r"^\s*revert\b\s*:?\s*#(\d+)|\bReverts [\w.-]+/[\w.-]+#(\d+)", re.IGNORECASE | re.MULTILINE)


def reverts(history: History) -> dict[str, Commit]:
    """The commits of ``history`` that a later one of it reverts, each with that revert: named by git's
    "This reverts commit <sha>", by the PR it names ("Revert: #6368", "Reverts pytorch/xla#6405"), or by the
    subject it quotes (``Revert "Fix some more core aten ops (#6342)" (#6377)``; the latest earlier commit
    with that subject, a quote GitHub cut short with an ellipsis matching its start)."""
    out: dict[str, Commit] = {}
    seen: list[Commit] = []
    for c in history.commits:
        m = _REVERT.match(c.subject)
        if m:
            target = None
            sha = _REVERTS_SHA.search(c.body)
            prs = [int(a or b) for a, b in _REVERTS_PR.findall(f"{c.subject}\n{c.body}")]
            quoted = _norm_subject(m.group(1))  # punctuation, PR numbers and a GitHub ellipsis left out
            cut = bool(re.search(r"(?:\u2026|\.\.\.)\s*\"?(?:\s*\(#\d+\))*\s*$", c.subject))
            for old in reversed(seen):
                if (
                    (sha and old.sha.startswith(sha.group(1)))
                    or (old.pr is not None and old.pr in prs)
                    or (
                        len(quoted) > 8
                        and (_norm_subject(old.subject) == quoted or (cut and _norm_subject(old.subject).startswith(quoted)))
                    )
                ):
                    target = old
                    break
            if target is not None and target.sha not in out:
                out[target.sha] = c
        seen.append(c)
    return out


def first_releases(repo, history: History) -> dict[str, Shipped]:
    """For each commit of ``history``: the releases that ship it, by ancestry (the release branch was cut
    after it) or by a cherry-pick onto a release branch (that tag and the later ones of its branch), and how
    the first one got it (commits no release has are left out)."""
    r = open_repo(repo)
    head = rev(r, history.branch, "branch")
    points = []  # (version, branch point on the mined branch, tag)
    for version, tag in history.releases:
        try:
            points.append((version, r.git.merge_base(head, tag).strip(), tag))
        except Exception:  # noqa: BLE001 - a tag with no common history
            continue
    order = _first_parent_index(r, head)
    series = lambda v: Version(v).release[:2]  # noqa: E731 - 2.6.0 and 2.6.1 are one release branch
    # cherry-picks: what each release tag has beyond its branch point
    by_pr: dict[int, list[tuple[str, str]]] = {}
    by_subject: dict[str, list[tuple[str, str]]] = {}
    picks: list[tuple[str, str]] = []
    for version, point, tag in points:
        for pick in _log(r, "--no-merges", f"{point}..{tag}"):
            entry = (version, pick.sha)
            picks.append(entry)
            for n in _PR_ANY.findall(pick.subject):
                by_pr.setdefault(int(n), []).append(entry)
            by_subject.setdefault(_norm_subject(pick.subject), []).append(entry)
    pick_ids: dict[str, list[tuple[str, str]]] = {}
    shipped: dict[str, Shipped] = {}
    for c in history.commits:
        have: dict[str, str] = {}
        i = order.get(c.sha)
        for version, point, _ in points:
            j = order.get(point)
            if i is not None and j is not None and j >= i:
                have[version] = "ancestry"
        found = []
        if c.pr is not None:
            found += [(e, f"PR #{c.pr} in its subject") for e in by_pr.get(c.pr, [])]
        norm = _norm_subject(c.subject)
        if len(norm) > 12:
            found += [(e, "the same subject") for e in by_subject.get(norm, [])]
        if not found and picks:
            if not pick_ids:
                for e in picks:
                    pid = _patch_id(r, e[1])
                    if pid:
                        pick_ids.setdefault(pid, []).append(e)
            pid = _patch_id(r, c.sha)
            found += [(e, "the same patch") for e in pick_ids.get(pid or "", [])]
        for (version, sha), why in sorted(found, key=lambda f: Version(f[0][0])):
            for later, _, _ in points:  # the later tags of that release branch have it too
                if series(later) == series(version) and Version(later) >= Version(version):
                    have.setdefault(later, f"cherry-pick {sha[:10]} ({why})")
        if have:
            releases = tuple(sorted(have, key=Version))
            shipped[c.sha] = Shipped(releases, have[releases[0]])
    return shipped


def _first_parent_index(r, head: str) -> dict[str, int]:
    shas = r.git.rev_list("--first-parent", "--reverse", head).split()
    return {s: i for i, s in enumerate(shas)}


def show_tree(repo, commit: str, path: str) -> list[str] | None:
    """The names in folder ``path`` at ``commit``, or None when it has no such folder."""
    import git

    r = open_repo(repo)
    try:
        return r.git.ls_tree("--name-only", f"{commit}:{path}").splitlines()
    except git.GitCommandError:
        return None


def show_file(repo, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit``, or None when it does not exist there."""
    import git

    r = open_repo(repo)
    try:
        return r.git.show(f"{commit}:{path}")
    except git.GitCommandError:
        return None


def renamed_from(repo, commit: str, path: str) -> str | None:
    """The path ``path`` had in ``commit``'s first parent when the commit moved it (``git mv``, with or
    without edits); None when it did not. A moved test file changes only the lines its diff shows: its
    unchanged tests are not the commit's."""
    r = open_repo(repo)
    out = r.git.show("--format=", "--name-status", "-M", "--first-parent", commit)
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].startswith("R") and parts[2] == path:
            return parts[1]
    return None


def changed_files(repo, commit: str) -> list[str]:
    """The paths ``commit`` changes (against its first parent)."""
    r = open_repo(repo)
    return [p for p in r.git.diff_tree("--no-commit-id", "--name-only", "-r", "--root", commit).splitlines() if p]


def changed_lines(repo, commit: str, path: str, old_path: str | None = None) -> tuple[list[int], list[int]]:
    """What ``commit`` did to ``path``: the line numbers as it left the file that it added or changed, and
    the line numbers in its first parent's copy (at the path it had there: see renamed_from) that it removed
    or changed (a removed ``@unittest.skip`` is a change of the test below it, which only the parent's copy
    shows). ``old_path``: that path when the caller has read it already."""
    r = open_repo(repo)
    old_path = old_path or renamed_from(repo, commit, path) or path
    diff = r.git.show("--format=", "-U0", "-M", "--first-parent", commit, "--", *dict.fromkeys((old_path, path)))
    added, removed = [], []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", diff, re.MULTILINE):
        old, old_count = int(m.group(1)), int(m.group(2) or 1)
        new, new_count = int(m.group(3)), int(m.group(4) or 1)
        removed.extend(range(old, old + old_count))
        added.extend(range(new, new + new_count))
    return added, removed


def export_tree(repo, commit: str, prefix: str, dest: Path, missing_ok: bool = False) -> Path:
    """Write the files under ``prefix`` at ``commit`` into ``dest`` (``git archive``), for a probe to run;
    ``missing_ok``: a commit without that folder writes nothing."""
    import io
    import subprocess
    import tarfile

    r = open_repo(repo)
    if missing_ok and show_tree(r, commit, prefix) is None:
        dest.mkdir(parents=True, exist_ok=True)
        return dest
    done = subprocess.run(["git", f"--git-dir={r.git_dir}", "archive", "--format=tar", commit, prefix], capture_output=True)
    if done.returncode != 0:
        raise XlakbError(
            f"cannot read {prefix} at {commit[:10]} from {repo_path(r)}: {done.stderr.decode('utf-8', 'replace').strip()[:200]}",
            hint="fetch the commit into the clone (git fetch origin <sha>)",
        )
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest
