"""Commits of a local pytorch/xla clone as bisection candidates.

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

import datetime as _dt
import fnmatch
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import git

from xlakb.candidates import Candidate
from xlakb.errors import XlakbError

__all__ = [
    "GITHUB_URL",
    "PATH_RULES",
    "CommitInfo",
    "open_repo",
    "first_parent_history",
    "resolve_end",
    "list_commits",
    "pr_number",
    "classify_path",
    "changed_paths",
    "native_changes",
    "is_python_only",
    "nearest_base",
    "overlay_commit",
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
    """"python", "irrelevant" or "native" for a repo-relative path (see :data:`PATH_RULES`;
    anything unmatched does not reach the compiled extension: "irrelevant")."""
    for pattern, kind, _why in PATH_RULES:
        if _glob_match(path, pattern):
            return kind
    return "irrelevant"


# --------------------------------------------------------------------------- repository
def open_repo(repo: str | os.PathLike | git.Repo) -> git.Repo:
    """A :class:`git.Repo` for a clone (bare or not); XlakbError when it is none."""
    if isinstance(repo, git.Repo):
        r = repo
    else:
        path = Path(repo)
        if not path.exists():
            raise XlakbError(f"git repository {path} does not exist", hint="pass the path of a pytorch/xla clone")
        try:
            r = git.Repo(path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as err:
            raise XlakbError(f"{path} is not a git repository", hint="pass the path of a pytorch/xla clone") from err
    # Name the git dir explicitly: a bare mirror without "core.bare" in its
    # config makes gitpython run git from the parent directory, where git
    # finds no repository.
    r.git.update_environment(GIT_DIR=str(r.git_dir))
    return r


def _repo_path(repo: git.Repo) -> str:
    """The clone's path: its work tree when it has one, else its git dir."""
    wt = repo.working_tree_dir
    if wt and Path(repo.git_dir).resolve() == (Path(wt) / ".git").resolve():
        return str(Path(wt).resolve())
    return str(Path(repo.git_dir).resolve())


def _rev(repo: git.Repo, ref: str, what: str = "ref") -> str:
    """Full sha of a commit-ish; XlakbError naming ``ref`` when unknown."""
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except git.GitCommandError as err:
        raise XlakbError(
            f"{what} {ref!r} is not a commit, tag or branch of {_repo_path(repo)}",
            hint="fetch the repository, or check the spelling",
        ) from err


def pr_number(subject: str) -> int | None:
    """The pull-request number GitHub wrote into a merge/squash subject, if any."""
    match = _SQUASH_RE.search(subject) or _MERGE_RE.match(subject)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a first-parent line."""

    sha: str
    committed: int   # committer time, seconds since the epoch
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
    tip = _rev(r, branch or "HEAD", "branch")
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
                f"pull request #{number} was not merged on the first-parent line of {where} in {_repo_path(r)}",
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
    sha = _rev(r, ref)
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
    path = _repo_path(r)
    out = [_candidate(path, c) for c in history[i : j + 1]]
    for ref, cand in ((start, out[0]), (end, out[-1])):
        cand.meta["resolved_from"] = ref
    return out


# --------------------------------------------------------------------------- changes
def changed_paths(repo: str | os.PathLike | git.Repo, a: str, b: str) -> list[str]:
    """Paths that differ between commits ``a`` and ``b`` (renames as delete+add), sorted."""
    r = open_repo(repo)
    sa, sb = _rev(r, a), _rev(r, b)
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
    full = _rev(r, sha)
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
    target = _rev(r, sha)
    scored: list[tuple[int, int, int, str]] = []
    missing: list[str] = []
    for label, gitrev in bases.items():
        try:
            rev = _rev(r, gitrev)
        except XlakbError:
            missing.append(f"{label}={str(gitrev)[:12]}")
            continue
        paths = changed_paths(r, rev, target)
        native = sum(1 for p in paths if classify_path(p) == "native")
        scored.append((native, len(paths), 0 if _is_ancestor(r, rev, target) else 1, label))
    if not scored:
        known = ", ".join(missing) if missing else "none given"
        raise XlakbError(
            f"no base build for commit {target[:8]}: no base gitrev is in {_repo_path(r)} ({known})",
            hint="fetch the repository so it holds the commits the wheels were built from",
        )
    return min(scored)[3]


# --------------------------------------------------------------------------- overlay
_MARKER = ".xlakb-overlay.json"


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def _write_fresh(path: Path, data: bytes) -> None:
    """Write ``path`` as a new inode: never write through a hard link into the base."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    with open(path, "wb") as fh:
        fh.write(data)


def overlay_commit(
    repo: str | os.PathLike | git.Repo,
    sha: str,
    installed_pkg_dir: str | os.PathLike,
    dest_dir: str | os.PathLike,
    *,
    keep: Iterable[str] = ("version.py",),
) -> Path:
    """Build ``dest_dir/torch_xla``: the installed package with commit ``sha``'s Python.

    ``installed_pkg_dir`` is the installed ``torch_xla`` package directory of
    the base build (the one holding ``__init__.py`` and ``_XLAC*.so``).  Its
    files are hard-linked (copied across devices) into the new tree, then
    every ``torch_xla/**/*.py`` of the commit replaces or joins them and .py
    files the commit lacks are deleted — except ``keep`` (paths relative to
    the package; ``version.py`` is generated at build time and not in git).
    Non-.py files of the wheel stay.  ``__pycache__`` is not carried over.
    Put ``dest_dir`` first on PYTHONPATH to use it.

    Atomic: the tree is built in a temporary directory next to ``dest_dir``
    and renamed into place, so ``dest_dir`` is either absent, the old
    complete tree or the new complete tree.  An existing ``dest_dir`` made
    for the same commit and base is reused as is.  Returns ``dest_dir``.
    """
    r = open_repo(repo)
    full = _rev(r, sha)
    base = Path(installed_pkg_dir).resolve()
    if not (base / "__init__.py").is_file():
        raise XlakbError(
            f"{base} is not an installed torch_xla package directory (no __init__.py)",
            hint="pass .../site-packages/torch_xla of the base environment",
        )
    dest = Path(dest_dir).resolve()
    marker = {"sha": full, "base": str(base)}
    if _marker_matches(dest, marker):
        return dest

    tree = r.commit(full).tree
    try:
        pkg_tree = tree / "torch_xla"
    except KeyError as err:
        raise XlakbError(f"commit {full[:8]} has no torch_xla/ directory") from err
    commit_py: dict[str, bytes] = {}
    for item in pkg_tree.traverse():
        if item.type == "blob" and item.path.endswith(".py") and item.mode != 0o120000:
            commit_py[item.path[len("torch_xla/") :]] = item.data_stream.read()

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; other users (containers) read it
        pkg = tmp / "torch_xla"
        shutil.copytree(
            base, pkg, symlinks=True, copy_function=_link_or_copy,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        keep_set = {k.replace(os.sep, "/") for k in keep}
        for path in sorted(pkg.rglob("*.py")):
            rel = path.relative_to(pkg).as_posix()
            if rel not in commit_py and rel not in keep_set:
                path.unlink()
        for rel, data in commit_py.items():
            _write_fresh(pkg / rel, data)
        (tmp / _MARKER).write_text(json.dumps(marker))
        if dest.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            os.replace(dest, trash / "old")
            os.replace(tmp, dest)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, dest)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if _marker_matches(dest, marker):  # a concurrent build of the same overlay won
            return dest
        raise XlakbError(f"cannot build overlay {dest} for commit {full[:8]}: {err}") from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _marker_matches(dest: Path, marker: dict) -> bool:
    try:
        return json.loads((dest / _MARKER).read_text()) == marker
    except (OSError, ValueError):
        return False
