"""Every subprocess xlakb starts goes through :func:`run`.

The child gets its own process group, so a timeout (or Ctrl-C) kills the
whole tree it made, not just the first process; output goes to a log file and
is streamed line by line to an optional callback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import XlakbError


@dataclass(frozen=True)
class RunResult:
    argv: tuple[str, ...]
    exit_code: int | None  # None when killed by us (timeout); negative = killed by signal N
    timed_out: bool
    duration_s: float
    output: str
    log_path: Path | None = None
    note: str = ""  # e.g. "killed: out of memory" from a runner that knows more
    warm: bool = False  # forked from a warm server (xlakb.envs.warm), not started cold


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float | None = None,
    log_path: Path | None = None,
    on_line: Callable[[str], None] | None = None,
) -> RunResult:
    """Run ``argv``; never raises for a non-zero exit, only when it cannot start."""
    start = time.monotonic()
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd else None,
            start_new_session=True,
        )
    except OSError as err:
        raise XlakbError(f"cannot start {argv[0]}: {err.strerror or err}") from None
    chunks: list[bytes] = []
    log = open(log_path, "wb") if log_path is not None else None

    def pump() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            chunks.append(raw)
            if log is not None:
                log.write(raw)
                log.flush()
            if on_line is not None:
                on_line(raw.decode("utf-8", "replace").rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid)
        proc.wait()
    except BaseException:  # Ctrl-C: leave nothing running behind us
        kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        kill_group(proc.pid)  # grandchildren that outlived the child
        reader.join(timeout=5)
        if log is not None:
            log.close()
    output = b"".join(chunks).decode("utf-8", "replace")
    return RunResult(
        argv=tuple(argv),
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        output=output,
        log_path=log_path,
    )
