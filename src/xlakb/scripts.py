"""A script without a record: what ``xlakb bisect --script`` and ``xlakb repro --script`` run.

A maintainer holding a failing script bisects it before anyone writes a record. The script becomes a
:class:`ScriptRecord`, a record made in memory, so everything the engine does for records (sources, narrowing,
``-j``, ``--repeat``, runners, clusters, the verdict cache, resume) it does for the script unchanged. What
differs is said by the record itself: its arguments (``reproducer.args``), the rule its runs are judged by
(``reproducer.regress``, :data:`xlakb.runner.REGRESS`; ``--match`` patterns as its signatures), and its key.

A script is *content-addressed* (:attr:`Script.address`): the hash of its bytes, its arguments, its rule and
match, the packages added (``--with``), its settings and timeout. The verdict cache and the resume state are
keyed by it, so the same bisection again runs no probe and an interrupted one resumes, and a changed script is
another bisection. Probes run a copy of those bytes (``<cache>/scripts/<hash>/``, which is their working
folder), never the file the user may be editing meanwhile.

A ``.py`` file runs with the environment's ``python``; any other file (``test.sh``) runs as a program with the
environment's ``bin`` first on ``PATH`` (its ``#!`` line's interpreter, else ``sh``), through xlakb's small
runner ``data/script_runner.py``, which carries the script inside it: a probe is always one Python file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .candidates.settings import environment, settings_from_options
from .envs import cache_dir
from .errors import XlakbError
from .records import Record
from .runner import REGRESS

DEFAULT_TIMEOUT = 300
DEFAULT_DEVICES = 4
RUNNER = "script_runner.py"
#: verdict words of a script: what is bad and good under its rule
WORDS = {"reproduced": "bad", "not-reproduced": "good", "untestable": "skip", "error": "error"}


@dataclass(frozen=True)
class Script:
    """A script as the command line gives it, checked: the file, its arguments, its rule and environment."""

    path: Path
    args: tuple[str, ...] = ()
    regress: str = "error"
    match: str | None = None
    packages: tuple[str, ...] = ()
    settings: tuple[tuple[str, str], ...] = ()  # the variables it runs with (XLA_FLAGS entries joined)
    timeout: int = DEFAULT_TIMEOUT
    content: bytes = b""

    @classmethod
    def load(
        cls,
        file: str,
        args: tuple[str, ...] = (),
        *,
        regress: str = "error",
        match: str | None = None,
        packages: tuple[str, ...] = (),
        settings: tuple[tuple[str, str], ...] = (),
        timeout: int | None = None,
    ) -> Script:
        """The script ``file``, or XlakbError naming the flag and value at fault."""
        path = Path(file).expanduser()
        if not path.is_file():
            raise XlakbError(f"--script {file}: no such file", hint="pass the path of a Python file or a shell script")
        try:
            content = path.read_bytes()
        except OSError as err:
            raise XlakbError(f"--script {file}: cannot be read ({err.strerror or err})") from None
        if regress not in REGRESS:
            raise XlakbError(f"--regress {regress!r}: unknown rule", hint=f"choose {', '.join(REGRESS)}")
        if match is not None:
            try:
                re.compile(match)
            except re.error as err:
                raise XlakbError(f"--match {match!r}: bad regex ({err})") from None
        if timeout is not None and timeout < 1:
            raise XlakbError(f"--timeout {timeout}: must be at least 1 second")
        for pkg in packages:
            if not pkg.strip() or pkg.startswith("-"):
                raise XlakbError(f"--with {pkg!r}: not a package requirement", hint="e.g. --with numpy or --with 'jax==0.4.30'")
        return cls(
            path.resolve(),
            tuple(args),
            regress,
            match,
            tuple(packages),
            tuple(settings),
            timeout or DEFAULT_TIMEOUT,
            content,
        )

    @classmethod
    def from_options(cls, opts: Mapping[str, Any]) -> Script:
        """The script as the command line gives it: ``--script`` and the arguments after ``--``, ``--regress``,
        ``--match``, ``--with``, ``--setting``/``--settings-file`` (the variables it runs with; a settings
        bisection minimises the same ones), ``--timeout``."""
        return cls.load(
            opts["script"],
            tuple(opts.get("script_args") or ()),
            regress=opts.get("regress") or "error",
            match=opts.get("match"),
            packages=tuple(opts.get("with_packages") or ()),
            settings=environment(settings_from_options(opts)),
            timeout=opts.get("timeout"),
        )

    @property
    def kind(self) -> str:
        """ "python" (a .py file, run by the environment's python) or "shell" (any other file, run as a program)."""
        return "python" if self.path.suffix == ".py" else "shell"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    def describe(self) -> dict:
        """What makes the script what it is (its address is the hash of this) and what a report says of it."""
        return {
            "sha256": self.sha256,
            "kind": self.kind,
            "args": list(self.args),
            "regress": self.regress,
            "match": self.match,
            "with": list(self.packages),
            "settings": [f"{k}={v}" for k, v in self.settings],
            "timeout": self.timeout,
        }

    @property
    def address(self) -> str:
        blob = json.dumps(self.describe(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()

    @property
    def id(self) -> str:
        """The name of the script's bisections and logs: ``script-`` and its address's first 12 digits."""
        return f"script-{self.address[:12]}"

    @property
    def folder(self) -> Path:
        """Where probes run the script: a copy of its bytes, its working folder."""
        return cache_dir() / "scripts" / self.sha256[:16]

    def stage(self) -> Path:
        """The file probes run, written once per content into :attr:`folder`: a copy of a Python script, or for
        any other file xlakb's runner carrying the script inside it (one self-contained Python file, as a
        record's reproducer is, so a container or a Ray worker needs nothing else)."""
        if self.kind == "python":
            path, content = self.folder / self.path.name, self.content
        else:
            template = (resources.files("xlakb") / "data" / RUNNER).read_text("utf-8")
            text = template.replace('NAME = "script.sh"', f"NAME = {self.path.name!r}").replace(
                'SCRIPT = base64.b64decode("")', f"SCRIPT = base64.b64decode({base64.b64encode(self.content).decode()!r})"
            )
            path, content = self.folder / f"{self.path.name}.py", text.encode("utf-8")
        _put(path, content)
        return path

    def record(self) -> ScriptRecord:
        """The script as a record the engine and the runner take (see the module's doc)."""
        run = self.stage()
        args = list(self.args)
        data = {
            "id": self.id,
            "environment": {
                "devices": DEFAULT_DEVICES,
                "env": dict(self.settings),
                "packages": list(self.packages),
                # a program is exec'd by the runner: nothing to gain from a warm python
                "cold_start": self.kind != "python",
            },
            "reproducer": {
                "path": run.name,
                "timeout": self.timeout,
                "signatures": [self.match] if self.match else [],
                "args": args,
                "regress": self.regress,
            },
        }
        return ScriptRecord(run.parent / "issues" / f"{self.id}.yaml", data, address=self.address, script=self)


def _put(path: Path, content: bytes) -> None:
    """``path`` holds ``content``: written atomically unless it already does."""
    try:
        if path.read_bytes() == content:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)


@dataclass(frozen=True)
class ScriptRecord(Record):
    """A record made in memory for a script: keyed by the script's address, claiming no versions."""

    address: str = ""
    script: Script | None = None

    def reproducer_sha256(self) -> str:
        return self.address

    def claims(self, version: str) -> bool | None:
        return None
