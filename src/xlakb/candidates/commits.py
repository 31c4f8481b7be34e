"""Commits of a local pytorch/xla clone as bisection candidates; the commits source.

A commit cannot be installed by itself (building torch_xla takes hours), so a
commit candidate is tested as an *overlay*: the pure-Python files of the
commit's ``torch_xla/`` package laid over an installed binary build (a release
or nightly wheel) whose native part is close enough.  This module lists
commits, tells which changes are native (need a rebuild) and which are pure
Python, picks the nearest binary base and builds the overlay directory.

Reads the clone with gitpython; the clone may be bare.  Library code: raises
:class:`~xlakb.errors.XlakbError`, never prints.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import fnmatch
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import git

from xlakb.candidates import Arg, Candidate, Source
from xlakb.candidates.nightlies import NIGHTLY_ARGUMENTS
from xlakb.errors import XlakbError
from xlakb.gitrepo import open_repo, repo_path, rev

__all__ = [
    "GITHUB_URL",
    "PATH_RULES",
    "CommitInfo",
    "first_parent_history",
    "resolve_end",
    "list_commits",
    "pr_number",
    "classify_path",
    "changed_paths",
    "native_changes",
    "is_python_only",
    "nearest_base",
]

GITHUB_URL = "https://github.com/pytorch/xla"

#: Subjects GitHub writes when it merges a pull request: a squash merge ends
#: with "(#N)", a merge commit starts with "Merge pull request #N from ...".
_SQUASH_RE = re.compile(r"\(#(\d+)\)\s*$")
_MERGE_RE = re.compile(r"^Merge pull request #(\d+) from\b")
_PR_REF_RE = re.compile(r"^(?:#|pr:)(\d+)$", re.IGNORECASE)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# --------------------------------------------------------------------------- path rules
#: How a changed path counts, first match wins (a glob without "/" matches the
#: file name in any directory; "**" spans directories).  "python": pure Python of the
#: torch_xla package, carried by an overlay.  "native": changes the compiled extension
#: (_XLAC): its C/C++ sources and headers, the Bazel build (BUILD, WORKSPACE with the XLA
#: pin, .bzl, patches applied to XLA), the code generator that writes C++ at build time,
#: the torch pin and setup.py.  Everything else never reaches the wheel's binary (docs,
#: tests, CI, infra/ and ansible configs, benchmarks, scripts, other packages):
#: "irrelevant", whatever its extension.
PATH_RULES: tuple[tuple[str, str, str], ...] = (
    # (glob on the repo-relative path, kind, why)
    ("torch_xla/*.py", "python", "Python source of the torch_xla package"),
    ("torch_xla/**/*.py", "python", "Python source of the torch_xla package"),
    ("torch_xla/csrc/**", "native", "sources of the compiled extension"),
    ("test/**", "irrelevant", "tests"),
    ("tests/**", "irrelevant", "tests"),
    ("docs/**", "irrelevant", "documentation"),
    ("infra/**", "irrelevant", "CI infrastructure (terraform, ansible)"),
    ("benchmarks/**", "irrelevant", "benchmarks"),
    ("examples/**", "irrelevant", "examples"),
    ("contrib/**", "irrelevant", "notebooks and examples"),
    ("experimental/**", "irrelevant", "reference models outside the package"),
    ("docker/**", "irrelevant", "container recipes for CI and users"),
    ("scripts/**", "irrelevant", "developer scripts"),
    ("plugins/**", "irrelevant", "separate plugin wheels"),
    ("torchax/**", "irrelevant", "a separate package"),
    (".github/**", "irrelevant", "CI configuration"),
    (".circleci/**", "irrelevant", "CI configuration"),
    (".devcontainer/**", "irrelevant", "editor configuration"),
    ("*.cpp", "native", "C++ source"),
    ("*.cc", "native", "C++ source"),
    ("*.c", "native", "C source"),
    ("*.h", "native", "C/C++ header"),
    ("*.hpp", "native", "C++ header"),
    ("*.cu", "native", "CUDA source"),
    ("*.proto", "native", "protocol buffer"),
    ("BUILD", "native", "Bazel"),
    ("*.BUILD", "native", "Bazel"),
    ("BUILD.bazel", "native", "Bazel"),
    ("WORKSPACE", "native", "Bazel workspace, holds the XLA pin"),
    ("*.bzl", "native", "Bazel"),
    (".bazelrc", "native", "Bazel"),
    (".bazelversion", "native", "Bazel"),
    ("openxla_patches/**", "native", "patches applied to XLA at build time"),
    ("third_party/**/*.diff", "native", "patches applied at build time"),
    ("third_party/**/*.patch", "native", "patches applied at build time"),
    ("codegen/**", "native", "generates C++ sources at build time"),
    (".torch_commit", "native", "the torch pin"),
    (".torch_pin", "native", "the torch pin"),
    ("setup.py", "native", "builds the wheel"),
    ("build_util.py", "native", "builds the wheel"),
    ("CMakeLists.txt", "native", "CMake"),
    ("*.cmake", "native", "CMake"),
)


def _glob_match(path: str, pattern: str) -> bool:
    """fnmatch where ``**`` spans directories and ``*`` does not (a pattern
    without "/" matches the base name anywhere)."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            regex += ".*"
            i += 2
        elif pattern[i] == "*":
            regex += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            regex += "[^/]"
            i += 1
        else:
            regex += re.escape(pattern[i])
            i += 1
    return re.fullmatch(regex, path) is not None


def classify_path(path: str) -> str:
    """ "python", "irrelevant" or "native" for a repo-relative path (see :data:`PATH_RULES`;
    anything unmatched does not reach the compiled extension: "irrelevant")."""
    for pattern, kind, _why in PATH_RULES:
        if _glob_match(path, pattern):
            return kind
    return "irrelevant"


def pr_number(subject: str) -> int | None:
    """The pull-request number GitHub wrote into a merge/squash subject, if any."""
    match = _SQUASH_RE.search(subject) or _MERGE_RE.match(subject)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a first-parent line."""

    sha: str
    committed: int  # committer time, seconds since the epoch
    author: str
    subject: str

    @property
    def pr(self) -> int | None:
        return pr_number(self.subject)

    @property
    def date(self) -> str:
        """Committer date in UTC, ISO 8601."""
        return _dt.datetime.fromtimestamp(self.committed, _dt.timezone.utc).isoformat()


def first_parent_history(repo: str | os.PathLike | git.Repo, branch: str | None = None) -> list[CommitInfo]:
    """The first-parent line of ``branch`` (default HEAD), oldest first."""
    r = open_repo(repo)
    tip = rev(r, branch or "HEAD", "branch")
    out = r.git.log("--first-parent", "--format=%H%x00%ct%x00%an%x00%s%x00", tip)
    fields = out.split("\x00")
    history: list[CommitInfo] = []
    for j in range(0, len(fields) - 3, 4):
        sha = fields[j].strip()
        history.append(CommitInfo(sha, int(fields[j + 1]), fields[j + 2], fields[j + 3]))
    history.reverse()
    return history


def resolve_end(
    repo: str | os.PathLike | git.Repo,
    ref: str,
    history: list[CommitInfo] | None = None,
    *,
    branch: str | None = None,
) -> int:
    """Index into ``history`` (the first-parent line, oldest first) named by ``ref``.

    ``ref`` is a pull request (``#8819`` or ``pr:8819``: the commit that
    merged it on this line), a date ``YYYY-MM-DD`` (the last commit of the
    line committed on or before that day, UTC), or anything git resolves (sha
    or prefix, tag, branch).  A commit off the line, such as a release tag on
    a release branch, maps to the newest commit of the line it descends from
    (the branch point).
    """
    r = open_repo(repo)
    if history is None:
        history = first_parent_history(r, branch)
    ref = str(ref).strip()
    where = branch or "HEAD"
    pr = _PR_REF_RE.match(ref)
    if pr:
        number = int(pr.group(1))
        hits = [i for i, c in enumerate(history) if c.pr == number]
        if not hits:
            raise XlakbError(
                f"pull request #{number} was not merged on the first-parent line of {where} in {repo_path(r)}",
                hint="fetch the repository, pick the right branch, or give the merge commit sha",
            )
        return hits[-1]
    if _DATE_RE.match(ref):
        try:
            day = _dt.date.fromisoformat(ref)
        except ValueError as err:
            raise XlakbError(f"date {ref!r} is not a valid YYYY-MM-DD date") from err
        end_of_day = _dt.datetime.combine(day + _dt.timedelta(days=1), _dt.time(), _dt.timezone.utc).timestamp()
        hits = [i for i, c in enumerate(history) if c.committed < end_of_day]
        if not hits:
            first = history[0].date[:10] if history else "?"
            raise XlakbError(f"no commit of {where} on or before {ref} (the line starts on {first})")
        return hits[-1]
    sha = rev(r, ref)
    index = {c.sha: i for i, c in enumerate(history)}
    if sha in index:
        return index[sha]
    # Off the line: walk to the newest line commit that is an ancestor of sha.
    tip = history[-1].sha if history else sha
    try:
        bases = r.git.merge_base(sha, tip).split()
    except git.GitCommandError:
        bases = []
    for base in bases:
        walk = base
        for _ in range(100_000):
            if walk in index:
                return index[walk]
            parents = r.git.rev_parse(f"{walk}^@").split()
            if not parents:
                break
            walk = parents[0]
    raise XlakbError(f"{ref!r} ({sha[:8]}) shares no history with the first-parent line of {where}")


def _candidate(repo_path: str, info: CommitInfo, **extra: object) -> Candidate:
    pr = info.pr
    label = f"{info.sha[:8]} (#{pr})" if pr is not None else info.sha[:8]
    meta: dict = {
        "sha": info.sha,
        "subject": info.subject,
        "date": info.date,
        "pr": pr,
        "author": info.author,
        "url": f"{GITHUB_URL}/commit/{info.sha}",
        "pr_url": f"{GITHUB_URL}/pull/{pr}" if pr is not None else None,
    }
    meta.update(extra)
    return Candidate(kind="commit", label=label, torch_xla="", torch="", overlay=(repo_path, info.sha), meta=meta)


def list_commits(
    repo: str | os.PathLike | git.Repo,
    start: str,
    end: str,
    *,
    branch: str | None = None,
) -> list[Candidate]:
    """Commits of the first-parent line of ``branch`` (default HEAD) from
    ``start`` to ``end``, both included, oldest first.

    Ends are resolved by :func:`resolve_end`.  ``torch_xla``/``torch`` are left
    empty: the engine fills them with the base build (see :func:`nearest_base`).
    Raises XlakbError for unknown refs or PRs, an end older than the start
    and a range of fewer than two commits.
    """
    r = open_repo(repo)
    history = first_parent_history(r, branch)
    i = resolve_end(r, start, history, branch=branch)
    j = resolve_end(r, end, history, branch=branch)
    where = branch or "HEAD"
    if j < i:
        raise XlakbError(
            f"end {end!r} ({history[j].sha[:8]}) comes before start {start!r} ({history[i].sha[:8]}) on {where}",
            hint="swap start and end",
        )
    if j == i:
        raise XlakbError(
            f"range {start!r}..{end!r} is empty: both resolve to {history[i].sha[:8]} on {where}",
            hint="widen the range",
        )
    path = repo_path(r)
    out = [_candidate(path, c) for c in history[i : j + 1]]
    for ref, cand in ((start, out[0]), (end, out[-1])):
        cand.meta["resolved_from"] = ref
    return out


# --------------------------------------------------------------------------- changes
def changed_paths(repo: str | os.PathLike | git.Repo, a: str, b: str) -> list[str]:
    """Paths that differ between commits ``a`` and ``b`` (renames as delete+add), sorted."""
    r = open_repo(repo)
    sa, sb = rev(r, a), rev(r, b)
    out = r.git.diff("--no-renames", "--name-only", "-z", sa, sb)
    return sorted(p for p in out.split("\x00") if p)


def native_changes(repo: str | os.PathLike | git.Repo, a: str, b: str) -> list[str]:
    """The paths of :func:`changed_paths` that are native (see :func:`classify_path`)."""
    return [p for p in changed_paths(repo, a, b) if classify_path(p) == "native"]


def is_python_only(repo: str | os.PathLike | git.Repo, sha: str) -> bool:
    """Whether commit ``sha``, against its first parent, touches only Python files
    of the torch_xla package (plus tests, docs, CI).  A root commit compares
    with the empty tree."""
    r = open_repo(repo)
    full = rev(r, sha)
    parents = r.git.rev_parse(f"{full}^@").split()
    if parents:
        paths = changed_paths(r, parents[0], full)
    else:
        out = r.git.ls_tree("-r", "--name-only", "-z", full)
        paths = [p for p in out.split("\x00") if p]
    return all(classify_path(p) != "native" for p in paths)


def _is_ancestor(repo: git.Repo, a: str, b: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", a, b)
        return True
    except git.GitCommandError:
        return False


def nearest_base(repo: str | os.PathLike | git.Repo, sha: str, bases: Mapping[str, str]) -> str:
    """The label of ``bases`` (label -> gitrev the binary was built from, as in
    ``torch_xla.version.__xla_gitrev__``) best suited to overlay ``sha`` on:
    fewest native differences, then fewest changed paths, then an ancestor of
    ``sha`` over a non-ancestor, then the label (for a stable answer).  Bases
    whose gitrev the clone lacks are ignored; none usable raises XlakbError.
    """
    r = open_repo(repo)
    target = rev(r, sha)
    scored: list[tuple[int, int, int, str]] = []
    missing: list[str] = []
    for label, gitrev in bases.items():
        try:
            base_sha = rev(r, gitrev)
        except XlakbError:
            missing.append(f"{label}={str(gitrev)[:12]}")
            continue
        paths = changed_paths(r, base_sha, target)
        native = sum(1 for p in paths if classify_path(p) == "native")
        scored.append((native, len(paths), 0 if _is_ancestor(r, base_sha, target) else 1, label))
    if not scored:
        known = ", ".join(missing) if missing else "none given"
        raise XlakbError(
            f"no base build for commit {target[:8]}: no base gitrev is in {repo_path(r)} ({known})",
            hint="fetch the repository so it holds the commits the wheels were built from",
        )
    return min(scored)[3]


# --------------------------------------------------------------------------- the commits source
_GITREV = r"""
import importlib.util, os, re, sys
spec = importlib.util.find_spec("torch_xla")
path = os.path.join(spec.submodule_search_locations[0], "version.py")
text = open(path).read() if os.path.exists(path) else ""
m = re.search(r"__xla_gitrev__\s*=\s*[\x27\x22]([0-9a-f]{7,40})[\x27\x22]", text)
print("GITREV", m.group(1) if m else "unknown")
"""


def base_gitrev(ctx, base: Candidate) -> str:
    """The commit a binary build was made from (``torch_xla.version.__xla_gitrev__``), read in its environment."""
    from ..runner import env_spec

    spec = env_spec(ctx.record, base, find_links=ctx.options.find_links, index_url=ctx.options.index_url)
    prepared = ctx.backend.ensure(spec, ctx.progress)
    with tempfile.TemporaryDirectory(prefix="xlakb-gitrev-") as tmp:
        script = Path(tmp) / "gitrev.py"
        script.write_text(_GITREV)
        result = ctx.backend.run(prepared, script, env={"PATH": "/usr/bin:/bin"}, timeout=120, log_path=Path(tmp) / "log")
    m = re.search(r"GITREV (\S+)", result.output)
    if result.exit_code != 0 or not m or m.group(1) == "unknown":
        raise XlakbError(f"cannot read __xla_gitrev__ of base build {base.label}: {result.output.strip()[-160:]}")
    return m.group(1)


def _base_candidate(spec: str, opts: Mapping) -> Candidate:
    """A ``--base``: a release ("2.6.0") or a nightly ("nightly:2025-01-16")."""
    from .nightlies import nightly_candidate
    from .releases import release

    if spec.startswith("nightly:"):
        return nightly_candidate(
            spec.removeprefix("nightly:"),
            versions=opts.get("nightly_version") or (),
            torch_xla_url=opts.get("torch_xla_url"),
            torch_url=opts.get("torch_url"),
        )
    return release(spec)


class CommitSource(Source):
    """Commits of a clone's first-parent line, each tested as its Python laid over the nearest binary
    base build (a release or nightly, ``--base``); ``--start``/``--end`` are commits, tags, dates or #PRs.
    Follow-ups: the commits of the answer with their PRs, whether the culprit is Python-only, and the
    native files an end differs from its base in (they lower the confidence)."""

    name = "commits"
    noun = "commit"
    follows = "nightlies"
    arguments = (
        Arg(("--repo",), {"help": "commits: path of a pytorch/xla clone"}),
        Arg(("--branch",), {"help": "commits: branch whose first-parent line is searched (default: HEAD)"}),
        Arg(
            ("--base",),
            {
                "action": "append",
                "metavar": "RELEASE|nightly:YYYY-MM-DD",
                "help": "commits: a binary build to lay commits over (repeatable; the nearest is used)",
            },
        ),
    ) + NIGHTLY_ARGUMENTS  # nightly bases are named like nightlies

    def __init__(self, ctx, repo: str | os.PathLike, bases: list[Candidate], *, branch: str | None = None) -> None:
        super().__init__(ctx)
        self.repo = Path(repo).resolve()
        self.branch = branch
        self.base_candidates = list(bases)
        self.bases: dict[str, tuple[Candidate, str]] = {}  # label -> (installable candidate, gitrev)
        self._memo: dict[str, Candidate] = {}  # sha -> resolved (git diffs are not cheap)

    @classmethod
    def from_options(cls, ctx, opts):
        if not (opts.get("repo") and opts.get("base")):
            raise XlakbError(
                "commits need --repo, --start, --end and at least one --base",
                hint="e.g. --repo ../xla --start '#8609' --end '#8819' --base 2.6.0 --base 2.7.0",
            )
        return cls(ctx, opts["repo"], [_base_candidate(b, opts) for b in opts["base"]], branch=opts.get("branch"))

    def prepare(self) -> None:
        """Build each base environment and read the commit it was built from (once)."""
        if self.bases:
            return
        from .nightlies import NightlySource

        fetch = NightlySource(self.ctx)
        progress = self.ctx.progress
        for i, base in enumerate(self.base_candidates):
            progress.step(i, len(self.base_candidates), f"base build {base.label}: preparing and reading its gitrev")
            real = fetch.resolve(base) if base.kind == "nightly" else base
            self.bases[base.label] = (real, base_gitrev(self.ctx, real))
            progress.info(f"{base.label} was built from {self.bases[base.label][1][:12]}")

    def ranges(self, engine, start, end, direction):
        if not (start and end):
            raise XlakbError(
                "commits need --repo, --start, --end and at least one --base",
                hint="e.g. --repo ../xla --start '#8609' --end '#8819' --base 2.6.0 --base 2.7.0",
            )
        self.prepare()
        return [list_commits(self.repo, start, end, branch=self.branch)]

    def fingerprint(self):
        self.prepare()
        return sorted([label, c.torch_xla, c.torch, list(c.pins), gitrev] for label, (c, gitrev) in self.bases.items())

    def resolve(self, cand: Candidate) -> Candidate:
        sha = cand.meta["sha"]
        hit = self._memo.get(sha)
        if hit is None:
            self.prepare()
            label = nearest_base(self.repo, sha, {k: v[1] for k, v in self.bases.items()})
            base, gitrev = self.bases[label]
            native = native_changes(self.repo, gitrev, sha)
            meta = dict(
                cand.meta, base=label, base_gitrev=gitrev, native_differences=native[:50], native_difference_count=len(native)
            )
            hit = dataclasses.replace(
                cand, torch_xla=base.torch_xla, torch=base.torch, pins=base.pins, overlay=(str(self.repo), sha), meta=meta
            )
            self._memo[sha] = hit
        return hit

    @classmethod
    def can_follow(cls, opts):
        return bool(opts.get("repo"))

    @classmethod
    def after(cls, ctx, opts, report):
        """The commits between the gitrevs the two nightlies of ``report`` were built from, over those nightlies."""
        lo, hi = report.last_old_candidate, report.first_new_candidate
        source = cls(ctx, opts["repo"], [lo, hi], branch=opts.get("branch"))
        source.stage = f"commits between {lo.label} and {hi.label}"
        source.prepare()
        return source, source.bases[lo.label][1], source.bases[hi.label][1]

    def finish(self, report) -> None:
        """The commits between the answer's ends (with PRs, Python-only or not), and the flags the
        report's confidence is computed from: the culprit's own diff, native differences of the ends."""
        from ..bisection.report import NativeEnd

        lo, hi = report.last_old, report.first_new
        for cand in report.candidates[lo + 1 : hi + 1]:
            sha = cand.meta.get("sha")
            if not sha:
                continue
            report.between.append(
                {
                    "sha": sha,
                    "subject": cand.meta.get("subject", ""),
                    "pr": cand.meta.get("pr"),
                    "url": cand.meta.get("url"),
                    "pr_url": cand.meta.get("pr_url"),
                    "date": cand.meta.get("date"),
                    "python_only": is_python_only(self.repo, sha),
                }
            )
        culprit = report.candidates[hi]
        if report.exact and report.between and report.between[-1]["sha"] == culprit.meta.get("sha"):
            report.culprit_python_only = culprit.meta["python_only"] = report.between[-1]["python_only"]
        for idx in (lo, hi):
            cand = report.candidates[idx]
            if not cand.meta.get("sha"):
                continue
            try:
                c = self.resolve(cand)
            except XlakbError:
                continue
            count, files = c.meta["native_difference_count"], c.meta["native_differences"]
            cand.meta.update(base=c.meta["base"], base_gitrev=c.meta["base_gitrev"], native_differences=files[:20])
            if count:
                report.native_ends.append(NativeEnd(cand.label, c.meta["base"], files, count))
