"""Regenerate the triage corpus's measured logs from real reproducer runs.

    python3 tests/data/triage/regenerate.py [ID ...]

For every record with triage signatures and an exact reproducer (all of them, or the ids given; a
proxy's log shows the cause on CPU, not what users see) and every release its
matrix measured, the log of a real run of its reproducer there (the verdict cache's log when it
still exists, else a new run through xlakb, uv runner) is trimmed and written to:

* ``positive/<id>@<release>.log`` when the run reproduced the bug and its log shows an error a user would
  paste (a reproducer that proves a silent bug through a debug API is left out): triage must name the
  record, strongly;
* ``negative/measured/<id>@<release>.log`` when it did not: triage must not name it strongly.

Trimming keeps what a user would paste: XLA's per-device INFO noise and the reproducer's own verdict
lines are dropped, the environment's path is replaced by a plain site-packages path, and at most the
last 160 lines are kept. The hand-written unrelated tracebacks (``src/xlakb/data/background/*.log``) are not
touched.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

NOISE = re.compile(
    r"I torch_xla/csrc/device\.cpp:\d+\] Using SPMD virtual device optimization|"
    r"^(?:REPRODUCED|NOT REPRODUCED|UNTESTABLE|ERROR|INFO|elapsed)\b"
)
ERROR_SHOWN = re.compile(
    r"Traceback \(most recent call last\)|Check failed|RET_CHECK|\w+Error: |Aborted|terminate called|"
    r"Fatal Python error: |Segmentation fault"
)
ENV_PATH = re.compile(r"/[^\s\"']*/envs/(?:uv|docker)/[0-9a-f]{20}/venv/lib/(python3\.\d+)/site-packages/")
#: the measuring machine's interpreter: the environment's python and the standard library it came from
ENV_PYTHON = re.compile(r"/[^\s\"']*/envs/(?:uv|docker)/[0-9a-f]{20}/venv/bin/python3?")
STDLIB_PATH = re.compile(r"/[^\s\"']*/versions/[\d.]+/lib/(python3\.\d+)/")
#: the checkout the reproducer ran from (this one, or another worktree of it): a user's own folder
REPRO_DIR = re.compile(r"/[^\s\"']*/reproducers/")


def machine_neutral(line: str) -> str:
    """A log line with the measuring machine's paths put as on a plain Linux install."""
    line = ENV_PATH.sub(r"/usr/lib/\1/site-packages/", line)
    line = ENV_PYTHON.sub("/usr/bin/python3", line)
    return STDLIB_PATH.sub(r"/usr/lib/\1/", line)


def trim(text: str) -> str:
    lines = [machine_neutral(ln) for ln in text.splitlines() if not NOISE.search(ln)]
    lines = [REPRO_DIR.sub("/home/user/", ln) for ln in lines]
    return "\n".join(lines[-160:]) + "\n"


def main(argv: list[str]) -> int:
    from xlakb.candidates.releases import release
    from xlakb.envs.uv import UvBackend
    from xlakb.records import load_record, load_records
    from xlakb.results import load_matrix
    from xlakb.runner import VerdictCache, env_spec, probe

    records = [load_record(REPO, i) for i in argv] if argv else load_records(REPO)
    cache = VerdictCache()
    backend = UvBackend()
    written = 0
    for rec in records:
        if not rec.data.get("signatures"):
            continue  # a silent bug (a wrong result, no error): nothing a user could paste
        if rec.data["reproducer"]["fidelity"] == "proxy":
            continue  # a proxy shows the cause on CPU, not the error users see on their hardware
        matrix = load_matrix(REPO, rec.id) or {"results": []}
        for row in matrix["results"]:
            if row.get("kind", "release") != "release" or row["verdict"] not in ("reproduced", "not-reproduced"):
                continue
            cand = release(row["candidate"])
            hit = cache.get(VerdictCache.key(rec, env_spec(rec, cand), backend.name))
            log = Path(hit.log) if hit is not None and hit.log else None
            if log is None or not log.is_file():
                res = probe(rec, cand, backend, cache=cache)
                log = Path(res.log)
                if res.verdict.value != row["verdict"]:
                    print(
                        f"warning: {rec.id} on {cand.label}: measured {res.verdict.value} now, the matrix says {row['verdict']}",
                        file=sys.stderr,
                    )
                    continue
            where = HERE / ("positive" if row["verdict"] == "reproduced" else "negative/measured")
            trimmed = trim(log.read_text("utf-8", "replace"))
            if not trimmed.strip():
                continue  # the run printed nothing but its verdict: nothing a user would paste
            if row["verdict"] == "reproduced" and not ERROR_SHOWN.search(trimmed):
                print(
                    f"{rec.id}@{cand.label}: no error in the log (the reproducer shows the bug another way): "
                    f"not a triage positive",
                    file=sys.stderr,
                )
                continue
            where.mkdir(parents=True, exist_ok=True)
            (where / f"{rec.id}@{cand.label}.log").write_text(trimmed)
            written += 1
            print(f"{rec.id}@{cand.label}: {row['verdict']}", file=sys.stderr)
    print(f"{written} log(s) written under {HERE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
