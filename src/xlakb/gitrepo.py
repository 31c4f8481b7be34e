"""Reading a git clone (bare or not) with gitpython: opening it, naming its commits.

Shared by the commit candidate source and the overlay builder; library code, raises
:class:`~xlakb.errors.XlakbError` with the ref or path it could not use.
"""

from __future__ import annotations

import os
from pathlib import Path

import git

from .errors import XlakbError


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


def repo_path(repo: git.Repo) -> str:
    """The clone's path: its work tree when it has one, else its git dir."""
    wt = repo.working_tree_dir
    if wt and Path(repo.git_dir).resolve() == (Path(wt) / ".git").resolve():
        return str(Path(wt).resolve())
    return str(Path(repo.git_dir).resolve())


def rev(repo: git.Repo, ref: str, what: str = "ref") -> str:
    """Full sha of a commit-ish; XlakbError naming ``ref`` when unknown."""
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except git.GitCommandError as err:
        raise XlakbError(
            f"{what} {ref!r} is not a commit, tag or branch of {repo_path(repo)}",
            hint="fetch the repository, or check the spelling",
        ) from err


def commits_touching(
    repo: str | os.PathLike | git.Repo,
    text: str,
    *,
    since: str | None = None,
    paths: tuple[str, ...] = ("torch_xla",),
    limit: int = 20,
) -> list[tuple[str, str, str]]:
    """Commits whose diff adds or removes ``text`` (``git log -S``), newest first: (sha, date, subject).
    ``since``: a tag or commit; only commits after it (``since..HEAD``). XlakbError for an unknown ``since``."""
    r = open_repo(repo)
    head = "HEAD"
    try:
        r.git.rev_parse("--verify", "--quiet", "HEAD")
    except git.GitCommandError:
        head = "--all"
    span = [f"{rev(r, since, 'release tag')}..{head}"] if since and head == "HEAD" else [head]
    try:
        out = r.git.log(f"-S{text}", "--format=%H%x09%cs%x09%s", f"-n{limit}", *span, "--", *paths)
    except git.GitCommandError as err:
        raise XlakbError(f"git log -S in {repo_path(r)} failed: {err.stderr.strip() or err}") from err
    rows = []
    for line in out.splitlines():
        sha, date, subject = (line.split("\t", 2) + ["", ""])[:3]
        rows.append((sha, date, subject))
    return rows
