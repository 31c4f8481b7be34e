"""Probes a settings bisection uses: delta debugging over n settings with one and with two culprits.

The count of probes is what a settings bisection costs (each probe is one reproducer run on the
chosen release), so this measures the pure core (:func:`xlakb.ddmin.ddmin`) with a test that shows
the bug exactly when every culprit is set: for each n, the culprits are placed at every position
(one culprit) or at 200 random pairs of positions (two culprits), and the mean and worst number of
probes, the two verified ends included, are printed next to ddmin's worst-case bound.

Run: python benchmarks/bench_settings.py
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from xlakb.ddmin import Trial, ddmin, ddmin_bound  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script

FIGURES = (8, 16, 32, 64)  # the sizes kept for the measurements page


def probes(n: int, culprits: set[int], batch: int = 1) -> int:
    def test(configs):
        return [Trial.FAIL if culprits <= set(c) else Trial.PASS for c in configs]

    # the engine verifies both ends (all settings, none) before delta debugging: +2
    return ddmin(n, test, batch=batch).test_count + 1  # the full configuration is among the tests; +1 for the empty one


def main() -> None:
    rng = random.Random(7)
    figures = []
    print(f"{'n':>4} {'one culprit: mean':>18} {'worst':>6} {'two culprits: mean':>19} {'worst':>6} {'bound':>6}")
    for n in (2, 4, 8, 10, 16, 32, 64):
        one = [probes(n, {i}) for i in range(n)]
        pairs = [set(rng.sample(range(n), 2)) for _ in range(200)] if n >= 2 else []
        two = [probes(n, p) for p in pairs]
        print(
            f"{n:>4} {statistics.mean(one):>18.1f} {max(one):>6} {statistics.mean(two):>19.1f} {max(two):>6} {ddmin_bound(n):>6}"
        )
        if n in FIGURES:
            figures += [
                figure(
                    f"{n} settings, one culprit: most probes (ddmin's worst-case bound {ddmin_bound(n)})",
                    f"{n} 项设置，其中 1 项必需：最多的探测次数（ddmin 最坏情况上限 {ddmin_bound(n)}）",
                    max(one),
                    note_en=f"mean {statistics.mean(one):.1f}; the culprit at each of the {n} positions",
                    note_zh=f"平均 {statistics.mean(one):.1f}；必需的那项依次位于全部 {n} 个位置",
                ),
                figure(
                    f"{n} settings, two culprits: most probes (ddmin's worst-case bound {ddmin_bound(n)})",
                    f"{n} 项设置，其中 2 项必需：最多的探测次数（ddmin 最坏情况上限 {ddmin_bound(n)}）",
                    max(two),
                    note_en=f"mean {statistics.mean(two):.1f}; {len(pairs)} random pairs of positions",
                    note_zh=f"平均 {statistics.mean(two):.1f}；{len(pairs)} 组随机位置",
                ),
            ]
    path = write("settings", "Settings bisection: probes", "设置二分：探测次数", "python3 benchmarks/bench_settings.py", figures)
    print(f"written: {path.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
