"""Wall time to measure records on every release with warm environments.

    python3 benchmarks/bench_matrix.py                 # every record of issues/, all releases
    python3 benchmarks/bench_matrix.py ID [ID ...]     # some records
    python3 benchmarks/bench_matrix.py -j 2            # one batch, 2 probes at once (xlakb matrix --all -j 2)
    python3 benchmarks/bench_matrix.py --ray-nodes 2   # the same batch on a two-node Ray cluster of this machine

Environments are the ones already in xlakb's cache ($XLAKB_CACHE_DIR, default ~/.cache/xlakb:
"warm" means built before; a release whose environment is missing is built first and that
build is reported apart, not counted in the probe times). Verdicts are never taken from the
cache: every probe runs. Nothing is written under bisect/. Prints one line per record (wall
time, probes, the slowest release) and the total, as a Markdown table for the README, and how many
fresh verdicts equal the ones stored in each record's bisect/<id>/matrix.json (and which do not).

``--ray-nodes N`` starts N Ray nodes of 1 CPU each in a network namespace with only loopback
(tests/raycluster.py), each with its own xlakb cache under a temporary folder; the nodes share this
machine's uv package cache ($UV_CACHE_DIR, default ~/.cache/uv) and read it offline (UV_OFFLINE=1: the
namespace has no network). Warm-up, timed apart: every node's environments are built first, from this
process (which has the network), into that node's cache. The driver then runs the batch inside the
namespace through the Ray executor (what `xlakb matrix --all --cluster ray://...` does) and checks that
no node built an environment while measuring. Everything started is stopped by pid and the temporary
folder removed (the uv package cache stays).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # raycluster: the loopback Ray cluster of the tests
LETTER = {"reproduced": "R", "not-reproduced": "N", "untestable": "U", "error": "E"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument(
        "-j", "--jobs", type=int, default=0, help="measure one batch of every probe, N at a time, instead of record after record"
    )
    parser.add_argument(
        "--ray-nodes",
        type=int,
        default=0,
        metavar="N",
        help="measure the batch on a Ray cluster of this machine with N nodes of 1 CPU each",
    )
    parser.add_argument("--releases", nargs="+", metavar="VERSION", help="only these releases (default: all)")
    parser.add_argument("--drive", help=argparse.SUPPRESS)  # the Ray driver, run inside the namespace: its address
    parser.add_argument("--node-caches", nargs="*", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        return drive(args)

    from xlakb.cli import ConsoleProgress
    from xlakb.envs.uv import UvBackend
    from xlakb.matrix import run_matrix
    from xlakb.records import load_record, load_records

    records = [load_record(REPO, i) for i in args.ids] if args.ids else load_records(REPO)
    releases = pick_releases(args.releases)
    if args.ray_nodes:
        return on_ray(args, records, releases)
    backend = UvBackend()

    # warm up: build what is missing, timed apart
    built, progress = [], ConsoleProgress()
    missing = [spec for spec in distinct_specs(records, releases) if backend.cached(spec) is None]
    for i, spec in enumerate(missing):
        progress.step(i, len(missing), f"environment {i + 1} of {len(missing)} missing")
        start = time.perf_counter()
        backend.ensure(spec, progress)
        built.append(time.perf_counter() - start)

    if args.jobs:
        return batch(records, releases, backend, args.jobs, built)

    rows, measured = [], []
    total_start = time.perf_counter()
    for rec in records:
        start = time.perf_counter()
        results = run_matrix(rec, releases, backend, cache=None)
        measured += [(rec.id, r.candidate, r.verdict.value) for r in results]
        wall = time.perf_counter() - start
        slowest = max(results, key=lambda r: r.duration_s)
        verdicts = "".join(LETTER[r.verdict.value] for r in results)
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
        print(f"\n(built first, not counted: {len(built)} environment(s), {sum(built):.0f} s)")
    print(against_stored(measured))
    return 0


def batch(records, releases, backend, jobs: int, built: list) -> int:
    """All (record, release) probes as one batch, ``jobs`` at a time: what `xlakb matrix --all -j N` does."""
    from collections import Counter

    from xlakb.cli import ConsoleProgress
    from xlakb.matrix import run_batch

    pairs = [(r, c) for r in records for c in releases]
    start = time.perf_counter()
    results = run_batch(pairs, backend, jobs=jobs, progress=ConsoleProgress(), cache=None)
    wall = time.perf_counter() - start
    verdicts = Counter(r.verdict.value for r in results)
    print(
        f"| {len(records)} records × {len(releases)} releases, -j {jobs} | {len(results)} probes | **{wall:.0f} s** | "
        f"{len(results) / wall * 60:.1f} probes/min | {dict(verdicts)} |"
    )
    if built:
        print(f"\n(built first, not counted: {len(built)} environment(s), {sum(built):.0f} s)")
    print(against_stored([(p[0].id, r.candidate, r.verdict.value) for p, r in zip(pairs, results)]))
    return 0


def distinct_specs(records, releases) -> list:
    """The environments the (record, release) pairs need, each once (one serves every record of its package set)."""
    from xlakb.runner import env_spec

    specs = (env_spec(rec, c) for rec in records for c in releases)
    return list({spec.key(): spec for spec in specs}.values())


def pick_releases(versions: list[str] | None):
    from xlakb.candidates.releases import releases_between

    every = releases_between()
    if not versions:
        return every
    unknown = sorted(set(versions) - {c.label for c in every})
    if unknown:
        raise SystemExit(f"bench_matrix: --releases: unknown release(s) {', '.join(unknown)}")
    return [c for c in every if c.label in versions]


def against_stored(measured: list[tuple[str, str, str]]) -> str:
    """How many fresh verdicts (record, release, verdict) equal the ones in bisect/<id>/matrix.json."""
    stored: dict[tuple[str, str], str] = {}
    for rid in {m[0] for m in measured}:
        path = REPO / "bisect" / rid / "matrix.json"
        if path.is_file():
            for r in json.loads(path.read_text())["results"]:
                stored[(rid, r["candidate"])] = r["verdict"]
    same = [m for m in measured if stored.get(m[:2]) == m[2]]
    lines = [f"\n{len(same)} of {len(measured)} fresh verdicts equal the stored ones"]
    lines += [
        f"  differs: {rid} {cand}: {verdict} now, {stored.get((rid, cand), 'nothing')} stored"
        for rid, cand, verdict in measured
        if stored.get((rid, cand)) != verdict
    ]
    return "\n".join(lines)


def on_ray(args, records, releases) -> int:
    """The batch on ``args.ray_nodes`` Ray nodes of this machine (see the module's docstring)."""
    from raycluster import LoopbackCluster, read_answer
    from xlakb.cli import ConsoleProgress
    from xlakb.envs.uv import UvBackend

    uv_cache = Path(os.environ.get("UV_CACHE_DIR") or Path.home() / ".cache" / "uv")
    os.environ["UV_CACHE_DIR"] = str(uv_cache)  # the warm-up below fills the cache the nodes read offline
    work = Path(tempfile.mkdtemp(prefix="xlakb-bench-matrix-ray-", dir=Path.home() / ".cache"))  # same disk as uv's
    cluster = LoopbackCluster(work / "cluster", uv_cache=uv_cache, node_env={"UV_OFFLINE": "1"})
    names = ["head"] + [f"worker{i}" for i in range(1, args.ray_nodes)]
    try:
        specs = distinct_specs(records, releases)
        progress = ConsoleProgress()
        built = []
        for n, name in enumerate(names):
            node = UvBackend(cluster.node_cache(name))
            start = time.perf_counter()
            for i, spec in enumerate(specs):
                progress.step(n * len(specs) + i, len(names) * len(specs), f"environment {i + 1} of node {name}")
                node.ensure(spec, progress)
            built.append((name, len(specs), time.perf_counter() - start))
        started = time.perf_counter()
        for name in names:
            cluster.add_node(name)
        up = time.perf_counter() - started
        progress.info(f"{len(names)} Ray nodes up in {up:.1f} s; running {len(records) * len(releases)} probes")
        argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            *[r.id for r in records],
            "--drive",
            cluster.address,
            *(["--releases", *args.releases] if args.releases else []),
            "--node-caches",
            *[str(cluster.node_cache(n)) for n in names],
        ]
        env = cluster.env(XLAKB_CACHE_DIR=str(work / "driver-cache"), UV_CACHE_DIR=str(uv_cache), UV_OFFLINE="1")
        r = subprocess.run(cluster.cmd(argv), stdout=subprocess.PIPE, text=True, env=env, timeout=4 * 3600)
        if r.returncode != 0:
            print(f"the driver failed (exit {r.returncode})", file=sys.stderr)
            return 1
        data = read_answer(r.stdout)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    from collections import Counter

    wall, measured = data["wall"], [tuple(m) for m in data["measured"]]
    verdicts = Counter(m[2] for m in measured)
    print(
        f"| {len(records)} records × {len(releases)} releases, Ray, {len(names)} nodes of 1 CPU | {len(measured)} probes"
        f" | **{wall:.0f} s** | {len(measured) / wall * 60:.1f} probes/min | {dict(verdicts)} |"
    )
    print(
        f"\nnodes up in {up:.1f} s; built first, not counted: "
        + "; ".join(f"{name}: {n} environments in {t:.0f} s" for name, n, t in built)
        + f"; environments built while measuring: {data['built while measuring']} (must be 0)"
    )
    print(against_stored(measured))
    return 0


def drive(args) -> int:
    """Inside the namespace: the batch through the Ray executor at ``args.drive``; prints its answer line on stdout."""
    from bench_ray import envs_in  # this script's folder is on sys.path
    from xlakb.cli import ConsoleProgress
    from xlakb.envs.uv import UvBackend
    from xlakb.executors import RayExecutor
    from xlakb.matrix import run_batch
    from xlakb.records import load_record

    def envs() -> int:
        return sum(envs_in(Path(c)) for c in args.node_caches)

    records = [load_record(REPO, i) for i in args.ids]
    pairs = [(rec, c) for rec in records for c in pick_releases(args.releases)]
    before = envs()
    executor = RayExecutor(args.drive)
    try:
        start = time.perf_counter()
        results = run_batch(pairs, UvBackend(), executor=executor, progress=ConsoleProgress(), cache=None)
        wall = time.perf_counter() - start
    finally:
        executor.close()
    from raycluster import answer_line

    print(
        answer_line(
            {
                "wall": wall,
                "built while measuring": envs() - before,
                "measured": [(p[0].id, r.candidate, r.verdict.value) for p, r in zip(pairs, results)],
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
