#!/usr/bin/env python3
"""How many probes the bisection core spends, against the ceil(log2 N) + 2 bound.

Synthetic ranges of N candidates with one culprit (every candidate from it on
is NEW); optionally a random share of the inner candidates cannot be tested
(SKIP).  For each N and skip rate the search runs over many culprit positions
(every position for N <= 256, 512 spread positions above) and reports the
maximum and mean probes, how often it stayed within the bound, how often the
answer was exact, and the rounds needed with 4 probes in parallel.  Then the
same search is repeated with the first run's outcomes as ``known`` (a verdict
cache): it must cost 0 probes.

    python3 benchmarks/bench_search.py [--seed 0] [--positions 512]

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

try:
    from xlakb.search import Bisection, Outcome, least_satisfying, probe_bound
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from xlakb.search import Bisection, Outcome, least_satisfying, probe_bound

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script

SIZES = (16, 64, 256, 1024, 4096)
SKIP_RATES = (0.0, 0.1, 0.3)


def make_world(n: int, culprit: int, skips: set[int]):
    def probe(i: int) -> Outcome:
        if i in skips:
            return Outcome.SKIP
        return Outcome.NEW if i >= culprit else Outcome.OLD

    return probe


def parallel_rounds(n: int, probe, k: int) -> int:
    b = Bisection(n)
    rounds = 0
    while not b.done:
        rounds += 1
        for i in b.next_probes(k):
            b.record(i, probe(i))
    return rounds


def run(n: int, rate: float, positions: int, rng: random.Random) -> dict:
    culprits = list(range(1, n)) if n - 1 <= 256 else sorted({round(1 + j * (n - 2) / (positions - 1)) for j in range(positions)})
    probes, definite, rounds, repeat = [], [], [], []
    exact = within = 0
    for culprit in culprits:
        inner = range(1, n - 1)
        skips = {i for i in inner if rng.random() < rate}
        probe = make_world(n, culprit, skips)
        res = least_satisfying(n, probe)
        assert res.last_old < culprit <= res.first_new, (n, culprit, res)
        probes.append(res.probe_count)
        definite.append(sum(1 for _, o in res.probes if o.known))
        exact += res.exact
        within += res.probe_count <= probe_bound(n)
        rounds.append(parallel_rounds(n, probe, 4))
        again = least_satisfying(n, probe, known=dict(res.probes))
        assert (again.last_old, again.first_new) == (res.last_old, res.first_new)
        repeat.append(again.probe_count)
    runs = len(culprits)
    return {
        "runs": runs,
        "max": max(probes),
        "mean": statistics.fmean(probes),
        "definite": max(definite),
        "within": 100.0 * within / runs,
        "exact": 100.0 * exact / runs,
        "rounds4": max(rounds),
        "repeat": max(repeat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--positions", type=int, default=512, help="culprit positions for N > 257")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    print(
        "| N | skipped | runs | bound ceil(log2 N)+2 | max probes | mean probes | "
        "max OLD/NEW probes | within bound | exact | max rounds, k=4 | repeat with known (max probes) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    figures = []
    for n in SIZES:
        for rate in SKIP_RATES:
            r = run(n, rate, args.positions, rng)
            if rate in (0.0, SKIP_RATES[-1]):
                figures.append(
                    figure(
                        f"{n} candidates, {rate:.0%} untestable: most probes (bound {probe_bound(n)})",
                        f"{n} 个候选，{rate:.0%} 无法测试：最多的探测次数（上限 {probe_bound(n)}）",
                        r["max"],
                        note_en=f"mean {r['mean']:.2f}; within the bound {r['within']:.1f}%; exact {r['exact']:.1f}%; "
                        f"a second run with the verdicts known: {r['repeat']} probes",
                        note_zh=f"平均 {r['mean']:.2f}；在上限之内 {r['within']:.1f}%；精确 {r['exact']:.1f}%；"
                        f"已知结果时再运行一次：{r['repeat']} 次探测",
                    )
                )
            print(
                f"| {n} | {rate:.0%} | {r['runs']} | {probe_bound(n)} | {r['max']} | {r['mean']:.2f} | {r['definite']} | "
                f"{r['within']:.1f}% | {r['exact']:.1f}% | {r['rounds4']} | {r['repeat']} |"
            )
    print(
        f"\n(seed {args.seed}; {time.perf_counter() - started:.1f} s; log5 N bounds the k=4 rounds: "
        + ", ".join(f"N={n}: {math.ceil(math.log(n, 5))}" for n in SIZES)
        + ")"
    )
    path = write("search", "Bisection core: probes", "二分查找核心：探测次数", "python3 benchmarks/bench_search.py", figures)
    print(f"written: {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
