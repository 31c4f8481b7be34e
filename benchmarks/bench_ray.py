"""Per-probe overhead of the Ray executor against the local one, with fake torch_xla wheels (hermetic).

    python3 benchmarks/bench_ray.py [--probes 20] [--releases 3]

Starts a two-node Ray cluster of this machine (head and worker, 1 CPU each, in a loopback-only network
namespace: tests/raycluster.py), then, as the driver inside that namespace:

* warm-up: builds each release's environment, locally once and on each node once (timed and counted apart:
  a build is counted once per release and cache, never in the probe figures);
* sequential latency: one probe at a time, submit to result, ``--probes`` times, local vs Ray (the overhead
  of a probe: task submission, scheduling, the reproducer's upload, result and log excerpt back);
* batch: ``--probes`` probes through ``run_batch`` (local ``-j 1``, local ``-j 2``, Ray on the two nodes).

Every probe runs (no verdict cache); the reproducer is the fake one (about 20 ms of Python), so the figures
are the executors' own cost. Prints a Markdown table for the README. Everything it starts is stopped by pid.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))


def envs_in(cache: Path) -> int:
    return len(list((cache / "envs" / "uv").glob("*/xlakb-env.json"))) if (cache / "envs" / "uv").is_dir() else 0


def drive(args) -> dict:
    """The measurements, run inside the cluster's namespace; returns them as a dict."""
    from xlakb.candidates.releases import release
    from xlakb.envs.uv import UvBackend
    from xlakb.executors import LocalExecutor, ProbeTask, RayExecutor, probe_all
    from xlakb.matrix import run_batch
    from xlakb.records import load_record

    work = Path(args.work)
    house = work / "house"
    record = load_record(work / "kb", "fake-bug")
    cands = [release(v) for v in args.versions]
    backend = UvBackend()
    links = (str(house),)
    out: dict = {"builds": {}}

    def task(c):
        return ProbeTask(record, c, links, "none")

    local1, ray = LocalExecutor(1), RayExecutor(args.address)
    try:
        # warm-up: environments built once per release and cache (the driver's; each node's)
        start = time.perf_counter()
        probe_all(local1, [task(c) for c in cands], backend)
        out["builds"]["local"] = (envs_in(Path(os.environ["XLAKB_CACHE_DIR"])), time.perf_counter() - start)
        start = time.perf_counter()
        napping = load_record(work / "kb", "fake-nap")  # the same environments; 1 s a run, so that
        for c in cands:  # two at once take both nodes (1 CPU each): each node builds every release once
            probe_all(ray, [ProbeTask(napping, c, links, "none")] * 2, backend)
        out["builds"]["ray"] = (sum(envs_in(Path(n)) for n in args.node_caches), time.perf_counter() - start)
        before = sum(envs_in(Path(n)) for n in args.node_caches)

        tasks = [task(cands[i % len(cands)]) for i in range(args.probes)]
        for name, ex in (("local", local1), ("ray", ray)):
            lat = []
            for t in tasks:
                start = time.perf_counter()
                probe_all(ex, [t], backend)
                lat.append(time.perf_counter() - start)
            out[f"latency {name}"] = lat
        pairs = [(t.record, t.candidate) for t in tasks]
        for name, ex in (("local -j 1", local1), ("local -j 2", LocalExecutor(2)), ("ray, 2 nodes", ray)):
            start = time.perf_counter()
            results = run_batch(pairs, backend, executor=ex, find_links=links, index_url="none")
            out[f"batch {name}"] = time.perf_counter() - start
            assert len(results) == len(pairs) and all(r.verdict.value != "error" for r in results), results
        out["new builds while measuring"] = sum(envs_in(Path(n)) for n in args.node_caches) - before
    finally:
        ray.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=20)
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--versions", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--node-caches", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from raycluster import answer_line, read_answer

    if args.drive:
        print(answer_line(drive(args)), flush=True)
        return 0

    from fakewheels import FAKE_REPRODUCER, fake_record, fake_torch, fake_torch_xla
    from raycluster import LoopbackCluster

    work = Path(tempfile.mkdtemp(prefix="xlakb-bench-ray-"))
    versions = [f"2.{5 + i}.0" for i in range(args.releases)]  # no numpy pin needed
    for v in versions:
        fake_torch_xla(work / "house", v, bug="present" if v < "2.6" else "none")
        fake_torch(work / "house", v)
    fake_record(work / "kb", reproducer=FAKE_REPRODUCER)
    fake_record(work / "kb", "fake-nap", reproducer="import time; time.sleep(1)\n" + FAKE_REPRODUCER)
    cluster = LoopbackCluster(work / "cluster")
    try:
        started = time.perf_counter()
        cluster.add_node("head")
        cluster.add_node("worker")
        up = time.perf_counter() - started
        env = cluster.env(
            XLAKB_CACHE_DIR=str(work / "driver-cache"),
            UV_CACHE_DIR=str(work / "cluster" / "uv-cache"),
            UV_PYTHON_DOWNLOADS="never",
        )
        argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--drive",
            "--work",
            str(work),
            "--address",
            cluster.address,
            "--probes",
            str(args.probes),
            "--versions",
            *versions,
            "--node-caches",
            str(cluster.node_cache("head")),
            str(cluster.node_cache("worker")),
        ]
        r = subprocess.run(cluster.cmd(argv), capture_output=True, text=True, env=env, timeout=1800)
        if r.returncode != 0:
            print(r.stderr[-3000:], file=sys.stderr)
            return 1
        data = read_answer(r.stdout)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)

    n = args.probes
    loc, ray = data["latency local"], data["latency ray"]
    print(f"two-node cluster up in {up:.1f} s; {len(versions)} releases; {n} probes of the fake reproducer\n")
    print("| what | local | Ray (2 nodes, 1 CPU each) |\n|---|---:|---:|")
    print(
        f"| environment builds (once per release and cache) | {data['builds']['local'][0]} in {data['builds']['local'][1]:.1f} s"
        f" | {data['builds']['ray'][0]} in {data['builds']['ray'][1]:.1f} s |"
    )
    print(
        f"| one probe at a time, median (min–max) | {statistics.median(loc):.3f} s ({min(loc):.3f}–{max(loc):.3f})"
        f" | {statistics.median(ray):.3f} s ({min(ray):.3f}–{max(ray):.3f}) |"
    )
    print(f"| per-probe overhead of Ray (median difference) | | {statistics.median(ray) - statistics.median(loc):+.3f} s |")
    print(
        f"| batch of {n}: local -j 1 / -j 2 | {data['batch local -j 1']:.2f} s / {data['batch local -j 2']:.2f} s"
        f" ({data['batch local -j 1'] / n:.3f} / {data['batch local -j 2'] / n:.3f} s a probe) |"
        f" {data['batch ray, 2 nodes']:.2f} s ({data['batch ray, 2 nodes'] / n:.3f} s a probe) |"
    )
    print(f"\nenvironments built while measuring: {data['new builds while measuring']} (must be 0)")
    from results_io import figure, write

    lat_l, lat_r = statistics.median(loc), statistics.median(ray)
    figures = [
        figure("Two-node Ray cluster of this machine, up in", "本机两节点 Ray 集群启动耗时", round(up, 1), "s"),
        figure(
            "One probe at a time, local executor (median)",
            "逐个探测，本地执行器（中位数）",
            round(lat_l, 3),
            "s",
            f"min {min(loc):.3f}, max {max(loc):.3f}; {n} probes of the fake reproducer",
            f"最小 {min(loc):.3f}，最大 {max(loc):.3f}；假复现脚本探测 {n} 次",
        ),
        figure(
            "One probe at a time, Ray executor (median)",
            "逐个探测，Ray 执行器（中位数）",
            round(lat_r, 3),
            "s",
            f"min {min(ray):.3f}, max {max(ray):.3f}",
            f"最小 {min(ray):.3f}，最大 {max(ray):.3f}",
        ),
        figure(
            "Per-probe overhead of Ray (median difference)", "Ray 每次探测的额外开销（中位数之差）", round(lat_r - lat_l, 3), "s"
        ),
        figure(f"Batch of {n} probes, local -j 1", f"{n} 次探测一批，本地 -j 1", round(data["batch local -j 1"], 2), "s"),
        figure(f"Batch of {n} probes, local -j 2", f"{n} 次探测一批，本地 -j 2", round(data["batch local -j 2"], 2), "s"),
        figure(f"Batch of {n} probes, Ray on 2 nodes", f"{n} 次探测一批，Ray 两节点", round(data["batch ray, 2 nodes"], 2), "s"),
        figure(
            "Environments built while measuring (must be 0)",
            "测量期间新建的环境数（应为 0）",
            data["new builds while measuring"],
        ),
    ]
    path = write(
        "ray",
        "Ray executor: per-probe overhead",
        "Ray 执行器：每次探测的开销",
        f"python3 benchmarks/bench_ray.py --probes {n} --releases {len(versions)}",
        figures,
    )
    print(f"written: {path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
