"""The environment cache as a whole: what it holds, how big it is, what to remove.

Every backend lists its environments as :class:`Entry` rows (``Backend.entries``);
this module sizes folders (hard links counted once: uv links its package cache
into every virtualenv), guards environments in use with a lock, chooses what to
prune (least recently used first, never one in use: a pure function,
:func:`plan_prune`) and keeps an optional size cap by itself
(``$XLAKB_CACHE_MAX_SIZE``, like mozregression's persistent-cache limit).

"In use" is a shared ``flock`` on ``<cache>/envs/locks/<runner>-<key>.use`` held
while a probe prepares and runs in the environment; pruning takes it exclusively
and without waiting, so an environment in use is skipped, never removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import XlakbError

CAP_VARIABLE = "XLAKB_CACHE_MAX_SIZE"
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class Entry:
    """One thing in the cache that can be removed on its own."""

    runner: str  # "uv" | "docker"
    key: str  # the environment's key (EnvSpec.key), or a volume's name
    kind: str  # "env" | "overlay" | "partial" (half-built) | "volume"
    holds: str  # what is installed: "torch_xla==2.5.1 torch==2.5.1", "overlay of 1a2b3c4d on <key>"...
    size: int  # bytes on disk; files linked from elsewhere are counted once over the whole listing
    last_used: float  # seconds since the epoch
    in_use: bool
    location: str


def parse_size(text: str) -> int:
    """``40G``, ``512M``, ``1.5T``, ``100000`` (bytes) -> bytes; binary units."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text).lower())
    if not match:
        raise XlakbError(f"size {text!r} is not understood", hint="e.g. 40G, 512M, 1.5T")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def parse_age(text: str) -> float:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", str(text).lower())
    if not match:
        raise XlakbError(f"age {text!r} is not understood", hint="e.g. 30d, 12h, 2w")
    return float(match.group(1)) * _AGE_UNITS[match.group(2)]


def human_size(n: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def disk_usage(path: Path, seen: set[tuple[int, int]] | None = None) -> int:
    """Bytes allocated under ``path`` (not following symlinks), each inode counted once in ``seen``."""
    seen = set() if seen is None else seen
    total = 0
    try:
        top = os.lstat(path)
    except OSError:
        return 0
    stack = [str(path)]
    if not os.path.isdir(path) or os.path.islink(path):
        if (top.st_dev, top.st_ino) not in seen:
            seen.add((top.st_dev, top.st_ino))
            total += top.st_blocks * 512
        return total
    while stack:
        folder = stack.pop()
        try:
            items = list(os.scandir(folder))
        except OSError:
            continue
        for item in items:
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            ident = (st.st_dev, st.st_ino)
            if ident in seen:
                continue
            seen.add(ident)
            total += st.st_blocks * 512
            if item.is_dir(follow_symlinks=False):
                stack.append(item.path)
    return total


# -- in use --------------------------------------------------------------------------
def lock_path(cache: Path, runner: str, key: str) -> Path:
    return cache / "envs" / "locks" / f"{runner}-{key}.use"


@contextlib.contextmanager
def in_use(cache: Path, runner: str, keys: Iterable[str]) -> Iterator[None]:
    """Hold shared use-locks on environments while a probe prepares and runs in them."""
    handles = []
    try:
        for key in dict.fromkeys(keys):
            path = lock_path(cache, runner, key)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            handles.append(fd)
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        for fd in handles:
            os.close(fd)  # closing drops the lock


@contextlib.contextmanager
def exclusive(cache: Path, runner: str, key: str) -> Iterator[bool]:
    """Try to take an environment for removal, without waiting: yields False when it is in use."""
    path = lock_path(cache, runner, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def is_in_use(cache: Path, runner: str, key: str) -> bool:
    with exclusive(cache, runner, key) as free:
        return not free


def touch(path: Path) -> None:
    """Record a use (the file's mtime); never fails a probe."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


# -- what to prune ------------------------------------------------------------------------
def plan_prune(
    entries: list[Entry],
    *,
    max_size: int | None = None,
    older_than: float | None = None,
    remove_all: bool = False,
    now: float | None = None,
    keep: Iterable[str] = (),
) -> list[Entry]:
    """What to remove, least recently used first: half-built leftovers; everything unused for longer than
    ``older_than`` seconds; then, while the whole cache is larger than ``max_size`` bytes, the least
    recently used.  Entries in use and keys in ``keep`` are never chosen."""
    now = time.time() if now is None else now
    keep = set(keep)
    removable = sorted((e for e in entries if not e.in_use and e.key not in keep), key=lambda e: (e.last_used, e.key))
    chosen: dict[tuple[str, str], Entry] = {}
    for e in removable:
        if remove_all or e.kind == "partial" or (older_than is not None and now - e.last_used > older_than):
            chosen[(e.runner, e.key)] = e
    if max_size is not None:
        total = sum(e.size for e in entries) - sum(e.size for e in chosen.values())
        for e in removable:
            if total <= max_size:
                break
            if (e.runner, e.key) not in chosen:
                chosen[(e.runner, e.key)] = e
                total -= e.size
    return sorted(chosen.values(), key=lambda e: (e.last_used, e.key))


def cap_from_environment() -> int | None:
    text = os.environ.get(CAP_VARIABLE)
    if not text:
        return None
    try:
        return parse_size(text)
    except XlakbError as err:
        raise XlakbError(f"{CAP_VARIABLE}={text!r}: {err.message}", hint=err.hint) from None


# -- over backends ----------------------------------------------------------------------------
def list_entries(backends: Iterable) -> tuple[list[Entry], list[str]]:
    """Every entry of every backend (hard links counted once over all of them), and one note per
    backend that could not be listed (e.g. no Docker daemon)."""
    seen: set[tuple[int, int]] = set()
    entries: list[Entry] = []
    notes: list[str] = []
    for backend in backends:
        try:
            entries += backend.entries(seen)
        except XlakbError as err:
            notes.append(f"{backend.name}: not listed ({err})")
    return entries, notes


def remove_entries(backends: Iterable, chosen: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """Remove what :func:`plan_prune` chose; returns (removed, skipped because in use by now)."""
    by_name = {b.name: b for b in backends}
    removed: list[Entry] = []
    skipped: list[Entry] = []
    for entry in chosen:
        (removed if by_name[entry.runner].remove(entry.key) else skipped).append(entry)
    return removed, skipped


_CAP_LOCK = threading.Lock()


def enforce_cap(backend, cap: int, *, keep: Iterable[str], progress) -> list[Entry]:
    """Keep one backend's environments under ``cap`` bytes, least recently used out first (one probe of this
    process at a time: probes in threads would otherwise prune the same environments at once)."""
    with _CAP_LOCK:
        return _enforce_cap(backend, cap, keep=keep, progress=progress)


def _enforce_cap(backend, cap: int, *, keep: Iterable[str], progress) -> list[Entry]:
    entries, _ = list_entries([backend])
    total = sum(e.size for e in entries)
    if total <= cap:
        return []
    removed, _ = remove_entries([backend], plan_prune(entries, max_size=cap, keep=keep))
    if removed:
        progress.info(
            f"{backend.name} cache was {human_size(total)}, over its cap of {human_size(cap)} ({CAP_VARIABLE}): "
            f"removed {len(removed)} least recently used environment(s), {human_size(sum(e.size for e in removed))}"
        )
    return removed
