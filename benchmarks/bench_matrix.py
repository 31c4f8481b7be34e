"""Wall time to measure records on every release with warm environments.

    python3 benchmarks/bench_matrix.py                 # every record of issues/, all releases
    python3 benchmarks/bench_matrix.py ID [ID ...]     # some records
    python3 benchmarks/bench_matrix.py -j 2            # one batch, 2 probes at once (xlakb matrix --all -j 2)

Environments are the ones already in xlakb's cache ($XLAKB_CACHE_DIR, default ~/.cache/xlakb:
"warm" means built before; a release whose environment is missing is built first and that
build is reported apart, not counted in the probe times). Verdicts are never taken from the
cache: every probe runs. Nothing is written under bisect/. Prints one line per record (wall
time, probes, the slowest release) and the total, as a Markdown table for the README.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument("-j", "--jobs", type=int, default=0,
                        help="measure one batch of every probe, N at a time, instead of record after record")
    args = parser.parse_args()

    from xlakb.candidates.releases import releases_between
    from xlakb.envs.uv import UvBackend
    from xlakb.matrix import run_matrix
    from xlakb.progress import NullProgress
    from xlakb.records import load_record, load_records
    from xlakb.runner import env_spec

    records = [load_record(REPO, i) for i in args.ids] if args.ids else load_records(REPO)
    releases = releases_between()
    backend = UvBackend()

    # warm up: build what is missing, timed apart
    built = []
    for rec in records:
        for cand in releases:
            spec = env_spec(rec, cand)
            if backend.cached(spec) is None:
                start = time.perf_counter()
                backend.ensure(spec, NullProgress())
                built.append((rec.id, cand.label, time.perf_counter() - start))

    if args.jobs:
        return batch(records, releases, backend, args.jobs, built)

    rows = []
    total_start = time.perf_counter()
    for rec in records:
        start = time.perf_counter()
        results = run_matrix(rec, releases, backend, cache=None)
        wall = time.perf_counter() - start
        slowest = max(results, key=lambda r: r.duration_s)
        verdicts = "".join({"reproduced": "R", "not-reproduced": "N", "untestable": "U", "error": "E"}[r.verdict.value]
                           for r in results)
        rows.append((rec.id, wall, len(results), slowest.candidate, slowest.duration_s, verdicts))
        print(f"{rec.id}: {wall:.1f} s for {len(results)} releases ({verdicts})", file=sys.stderr, flush=True)
    total = time.perf_counter() - total_start

    print("| record | releases | wall (warm environments) | slowest release | verdicts 2.1.0 → 2.9.0 |")
    print("|---|---:|---:|---|---|")
    for rid, wall, n, slow, slow_s, verdicts in rows:
        print(f"| `{rid}` | {n} | {wall:.1f} s | {slow} ({slow_s:.1f} s) | `{verdicts}` |")
    probes = sum(r[2] for r in rows)
    print(f"| **all {len(rows)} records** | {probes} probes | **{total:.0f} s** ({total / max(probes, 1):.1f} s a probe) | | |")
    if built:
        print(f"\n(built first, not counted: {len(built)} environment(s), {sum(b[2] for b in built):.0f} s)")
    return 0


def batch(records, releases, backend, jobs: int, built: list) -> int:
    """All (record, release) probes as one batch, ``jobs`` at a time: what `xlakb matrix --all -j N` does."""
    from collections import Counter

    from xlakb.matrix import run_batch
    from xlakb.progress import NullProgress

    pairs = [(r, c) for r in records for c in releases]
    start = time.perf_counter()
    results = run_batch(pairs, backend, jobs=jobs, progress=NullProgress(), cache=None)
    wall = time.perf_counter() - start
    verdicts = Counter(r.verdict.value for r in results)
    print(f"| {len(records)} records × {len(releases)} releases, -j {jobs} | {len(results)} probes | **{wall:.0f} s** | "
          f"{len(results) / wall * 60:.1f} probes/min | {dict(verdicts)} |")
    if built:
        print(f"\n(built first, not counted: {len(built)} environment(s), {sum(b[2] for b in built):.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
