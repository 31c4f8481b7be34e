"""Environments: where a reproducer runs, behind one small protocol.

A backend (:class:`Backend`) turns an :class:`EnvSpec` — exactly what is to be
installed — into a ready :class:`Prepared` environment (``ensure``), cached by
the spec's key, and runs a script in it (``run``).  Backends live in the
:data:`BACKENDS` registry: ``uv`` (local virtualenvs) and ``docker``
(containers).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import XlakbError
from ..proc import RunResult
from ..progress import Progress

if TYPE_CHECKING:
    from .cache import Entry

ENV_FORMAT = 1  # bump when the on-disk layout of an environment changes


#: a file beside a script saying the whole folder is the reproducer (a mined record's test tree); a backend
#: that copies a script somewhere (a container) copies that folder instead
BUNDLE_MARKER = ".xlakb-bundle"


def cache_dir() -> Path:
    """Root of xlakb's cache: ``$XLAKB_CACHE_DIR``, else ``$XDG_CACHE_HOME/xlakb``, else ``~/.cache/xlakb``."""
    explicit = os.environ.get("XLAKB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "xlakb"


@dataclass(frozen=True)
class EnvSpec:
    """Exactly what an environment holds; its :meth:`key` names it in the cache.

    ``requirements`` are PEP 508 strings or absolute wheel paths (nightlies);
    ``find_links`` are local wheelhouses; ``index_url`` overrides the package index ("none": no index,
    only the wheelhouses);
    ``overlay`` is (repo, sha) whose torch_xla/*.py files are laid over the installed package.
    """

    python: str
    requirements: tuple[str, ...]
    find_links: tuple[str, ...] = ()
    index_url: str | None = None
    overlay: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(set(self.requirements))))

    def describe(self) -> dict:
        return {
            "format": ENV_FORMAT,
            "python": self.python,
            "requirements": list(self.requirements),
            "find_links": list(self.find_links),
            "index_url": self.index_url,
            "overlay": list(self.overlay) if self.overlay else None,
        }

    def base(self) -> EnvSpec:
        """The same spec without the overlay: the binary environment a commit is laid over."""
        return EnvSpec(self.python, self.requirements, self.find_links, self.index_url, None)

    def key(self) -> str:
        blob = json.dumps(self.describe(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:20]


@dataclass(frozen=True)
class Prepared:
    """A ready environment: the backend that made it and where it lives."""

    backend: str
    key: str
    spec: EnvSpec
    location: str  # a directory (uv) or a volume/image name (docker)
    python: str  # interpreter path inside the environment
    extra_path: tuple[str, ...] = ()  # prepended to PYTHONPATH (commit overlays)
    info: dict = field(default_factory=dict, compare=False)


class Backend(Protocol):
    """What every runner backend provides."""

    name: str
    cache: Path  # xlakb's cache root the backend keeps its environments under

    def available(self) -> str | None:
        """None when the backend can be used here at all (uv found, a Docker daemon answers), else a one-line reason."""

    def ready(self) -> str | None:
        """None when a probe can run now: available, and nothing it needs is missing that cannot be had
        (Docker: the base image present or pulled). Else a one-line reason. ``--runner auto`` asks this."""

    def ensure(self, spec: EnvSpec, progress: Progress) -> Prepared:
        """Build the environment unless a healthy cached one exists; return it."""

    def prestart(self, prepared: Prepared, env: Mapping[str, str]) -> None:
        """Start, without a probe, the warm server a probe of ``prepared`` with ``env`` would be forked from (a
        batch does it for the next release while this one's probes run, so no core waits for an import).
        Best effort: what goes wrong is left to the probe."""

    def run(
        self,
        prepared: Prepared,
        script: Path,
        *,
        env: Mapping[str, str],
        timeout: float,
        log_path: Path,
        on_line: Callable[[str], None] | None = None,
        args: Sequence[str] = (),
        warm: bool = False,
    ) -> RunResult:
        """Run ``script`` (with ``args``) with the environment's python; kill everything on timeout. ``warm``:
        the caller allows a warm start (a child forked from a server that imported torch and torch_xla,
        :mod:`xlakb.envs.warm`), judged like a cold run; a backend that cannot warm runs cold."""

    def remove(self, key: str) -> bool:
        """Delete a cached environment unless it is in use; True when something was removed."""

    def entries(self, seen: set | None = None) -> list[Entry]:
        """What this backend keeps in the cache, with sizes and last use (:mod:`xlakb.envs.cache`)."""


#: name -> "module:class", imported on first use (the Docker SDK is only loaded when asked for)
BACKENDS: dict[str, str] = {
    "uv": "xlakb.envs.uv:UvBackend",
    "docker": "xlakb.envs.docker:DockerBackend",
}
#: what ``auto`` tries, in order: the sandbox first, then local virtualenvs
AUTO_ORDER = ("docker", "uv")


def backend_class(name: str) -> type:
    import importlib

    where = BACKENDS.get(name)
    if where is None:
        raise XlakbError(f"unknown runner {name!r}", hint=f"choose auto, {', '.join(BACKENDS)}")
    module, _, cls = where.partition(":")
    return getattr(importlib.import_module(module), cls)


def get_backend(name: str, **options) -> Backend:
    """The backend called ``name`` (a key of :data:`BACKENDS`), or XlakbError when it cannot be used here.
    ``auto`` is :func:`choose_backend` without its reason."""
    if name == "auto":
        return choose_backend(name, **options)[0]
    backend = backend_class(name)(**options)
    reason = backend.available()
    if reason is not None:
        other = next((n for n in BACKENDS if n != name), None)
        raise XlakbError(f"{name} runner unavailable: {reason}", hint=f"use --runner {other}" if other else None)
    return backend


def choose_backend(name: str, **options) -> tuple[Backend, str | None]:
    """The backend for ``--runner name`` and, for ``auto``, one line on why it was chosen.

    ``auto`` takes the first backend of :data:`AUTO_ORDER` that is :meth:`~Backend.ready`: Docker only when
    a daemon answers *and* its image is there (or can be pulled), since otherwise the first probe would fail."""
    if name != "auto":
        return get_backend(name, **options), None
    skipped: list[str] = []
    for candidate in AUTO_ORDER:
        try:
            backend = backend_class(candidate)(**options)
        except ImportError as err:  # pragma: no cover - both SDKs are dependencies
            skipped.append(f"{candidate}: {err}")
            continue
        reason = backend.ready()
        if reason is None:
            return backend, ("; ".join(f"not {s}" for s in skipped) or None)
        skipped.append(f"{candidate}: {reason}")
    raise XlakbError("no runner can run probes here: " + "; ".join(skipped))
