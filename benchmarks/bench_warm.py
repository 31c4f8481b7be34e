"""Warm starts against cold ones: the same verdict for every probe, and how much faster.

    python3 benchmarks/bench_warm.py [--records ID ...] [--versions X.Y.Z ...] [-j 2] [--runner uv]
    python3 benchmarks/bench_warm.py --single ID X.Y.Z [--repeat 5]

Every record (default: all) on every release (default: all known) is probed twice with real wheels, the
verdict cache left out: once cold (XLAKB_WARM=0, a new interpreter per probe) and once warm (a child forked
from a server per environment that imported torch and torch_xla). It prints each batch's wall time, the
per-probe durations, and every (record, release) whose verdicts differ; a difference is a failure (exit 1).
Environments are built before the first batch and not counted.

--single times one probe with a warm server: the first probe (which builds the environment if needed and
starts the server) is left out, then the same probe runs --repeat times, each a forked child judged in full
(exit, log, signatures), and the times are printed with their median.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def batch(pairs, backend, jobs: int, warm_on: bool, progress):
    """One batch, the verdict cache left out: its results, wall time and how many warm servers it started."""
    from xlakb.envs.warm import close_pool, pool
    from xlakb.matrix import run_batch

    os.environ["XLAKB_WARM"] = "1" if warm_on else "0"
    close_pool()
    started = time.monotonic()
    results = run_batch(pairs, backend, jobs=jobs, progress=progress, cache=None)
    wall = time.monotonic() - started
    servers, refused = pool().started, dict(pool().refused)
    close_pool()
    return results, wall, servers, refused


def single(record_id: str, version: str, repeat: int, runner: str) -> int:
    from xlakb.candidates.releases import release
    from xlakb.envs import get_backend
    from xlakb.envs.warm import close_pool
    from xlakb.records import load_record
    from xlakb.runner import probe

    os.environ["XLAKB_WARM"] = "1"
    record, cand, backend = load_record(REPO, record_id), release(version), get_backend(runner)
    try:
        first = probe(record, cand, backend)
        times, verdicts = [], set()
        for _ in range(repeat):
            r = probe(record, cand, backend)
            if r.start != "warm":
                print(f"probe ran {r.start}, not warm: {r.detail}", file=sys.stderr)
                return 1
            times.append(r.duration_s)
            verdicts.add(r.verdict.value)
    finally:
        close_pool()
    print(
        f"{record_id} on {version}, runner {runner}: first probe (server start) {first.duration_s:.2f} s, "
        f"then {', '.join(f'{t:.2f}' for t in times)} s; median {sorted(times)[len(times) // 2]:.2f} s; "
        f"verdicts {sorted(verdicts)} (first: {first.verdict.value})"
    )
    return 0 if verdicts == {first.verdict.value} else 1


def main() -> int:
    from xlakb.candidates.releases import release, releases_between
    from xlakb.envs import get_backend
    from xlakb.progress import NullProgress
    from xlakb.records import load_record, load_records

    ap = argparse.ArgumentParser()
    ap.add_argument("--records", nargs="*")
    ap.add_argument("--versions", nargs="*")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--runner", default="uv")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--warm-only", action="store_true", help="time the warm batch alone (no equality check)")
    ap.add_argument("--single", nargs=2, metavar=("ID", "VERSION"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.single:
        return single(args.single[0], args.single[1], args.repeat, args.runner)
    records = [load_record(REPO, r) for r in args.records] if args.records else load_records(REPO)
    cands = [release(v) for v in args.versions] if args.versions else releases_between()
    pairs = [(r, c) for r in records for c in cands]
    backend = get_backend(args.runner)

    class Lines(NullProgress):
        def step(self, done, total, message):
            if not args.quiet and done % 10 == 0:
                print(f"  [{done}/{total}] {message}", file=sys.stderr, flush=True)

    # environments first, each built once (not counted)
    from xlakb.runner import env_spec

    specs = {}
    for r, c in pairs:
        spec = env_spec(r, c)
        specs.setdefault(spec.key(), spec)
    for n, spec in enumerate(specs.values(), 1):
        if not args.quiet:
            print(f"  environment {n}/{len(specs)}", file=sys.stderr, flush=True)
        backend.ensure(spec, NullProgress())
    cold, cold_wall, _, _ = ([], 0.0, 0, {}) if args.warm_only else batch(pairs, backend, args.jobs, False, Lines())
    warm, warm_wall, servers, refused = batch(pairs, backend, args.jobs, True, Lines())
    key = lambda r: (r.record, r.candidate)  # noqa: E731
    cold_by, warm_by = {key(r): r for r in cold}, {key(r): r for r in warm}
    differ = [
        (k, cold_by[k].verdict.value, warm_by[k].verdict.value)
        for k in cold_by
        if k in warm_by and cold_by[k].verdict != warm_by[k].verdict
    ]
    starts = sum(r.start == "warm" for r in warm)
    mean = lambda rs: sum(r.duration_s for r in rs) / max(len(rs), 1)  # noqa: E731
    print(
        f"{len(records)} records x {len(cands)} releases = {len(pairs)} probes each way, -j {args.jobs}, runner {backend.name}\n"
    )
    print("| start | wall time | probes a minute | mean probe | verdicts equal to cold |")
    print("|---|---:|---:|---:|---:|")
    if cold:
        print(f"| cold | {cold_wall:.0f} s | {len(cold) / cold_wall * 60:.1f} | {mean(cold):.2f} s | - |")
    print(
        f"| warm ({starts} of {len(warm)} forked) | {warm_wall:.0f} s | {len(warm) / warm_wall * 60:.1f} | "
        f"{mean(warm):.2f} s | {f'{len(warm) - len(differ)} of {len(warm)}' if cold else 'not compared'} |"
    )
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else 0.0  # noqa: E731
    print(f"\nwarm servers started: {servers} for {len({(r.id, c.label) for r, c in pairs})} probes on {len(specs)} environments")
    for (_, prefix), why in sorted(refused.items()):
        print(f"  environment {Path(prefix).parent.name} has a server of its own: {why}")
    print(f"\nmedian probe: cold {median([r.duration_s for r in cold]):.2f} s, warm {median([r.duration_s for r in warm]):.2f} s")
    for rid, cand in (("fsdpv2-scalar-param-unhashable-list", "2.7.0"),):
        if (rid, cand) in cold_by and (rid, cand) in warm_by:
            print(f"{rid} on {cand}: cold {cold_by[rid, cand].duration_s:.2f} s, warm {warm_by[rid, cand].duration_s:.2f} s")
    per_record: dict = {}
    for r in warm:
        per_record[r.record] = per_record.get(r.record, 0.0) + r.duration_s
    slow = sorted(per_record.items(), key=lambda kv: -kv[1])[:12]
    print("\nwarm probe time by record, the slowest: " + ", ".join(f"{rid} {t:.0f} s" for rid, t in slow))
    for (rid, cand), c, w in differ:
        print(f"DIFFERENT {rid} on {cand}: cold {c}, warm {w}")
    if cold and not differ:
        keep_figures(args, len(records), len(cands), cold, warm, cold_wall, warm_wall, starts)
    return 1 if differ else 0


def keep_figures(args, n_records, n_releases, cold, warm, cold_wall, warm_wall, starts) -> None:
    """The figures of a run whose warm verdicts all equal the cold ones, kept for the measurements page."""
    from results_io import figure, write

    median = lambda rs: sorted(r.duration_s for r in rs)[len(rs) // 2]  # noqa: E731
    n = len(warm)
    what = f"{n_records} records x {n_releases} releases = {n} probes each way, -j {args.jobs}"
    what_zh = f"{n_records} 条记录 × {n_releases} 个版本 = 每种方式 {n} 次探测，-j {args.jobs}"
    figures = [
        figure(
            "Cold batch (a new interpreter per probe), wall time",
            "冷启动一批（每次探测新起解释器）总耗时",
            round(cold_wall),
            "s",
            what,
            what_zh,
        ),
        figure(
            "Warm batch (forked from a server that imported torch_xla), wall time",
            "热启动一批（从已导入 torch_xla 的服务进程分叉）总耗时",
            round(warm_wall),
            "s",
            what,
            what_zh,
        ),
        figure("Median probe, cold", "探测耗时中位数（冷启动）", round(median(cold), 2), "s"),
        figure("Median probe, warm", "探测耗时中位数（热启动）", round(median(warm), 2), "s"),
        figure("Warm probes that forked from a server", "从服务进程分叉的热探测", f"{starts} / {n}"),
        figure("Warm verdicts equal to the cold ones", "热探测结论与冷探测相同", f"{n} / {n}"),
    ]
    command = "python3 benchmarks/bench_warm.py"
    if args.records:
        command += " --records " + " ".join(args.records)
    if args.versions:
        command += " --versions " + " ".join(args.versions)
    command += f" -j {args.jobs}"
    path = write("warm", "Warm probes against cold ones (real wheels)", "热探测与冷探测（真实 wheel）", command, figures)
    print(f"written: {path.name}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
