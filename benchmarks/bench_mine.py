"""Mining upstream fixes: how fast candidates are found, and what proving them cost.

    python3 benchmarks/bench_mine.py --repo ../xla

Finding is measured here: the commits changing a test between 2.1.0 and 2.9.0 of the clone are listed,
classified, their test functions found and their first release worked out (no probe runs), and the rate is
candidates per minute. Proving is what the last `xlakb mine` run that probed measured and kept in
mined/candidates.json (`last_run`: its wall time and the probes it asked for: two per candidate, twelve
per record's matrix and the release bisection's own), because a second run would only read its cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script

OUTCOMES_ZH = {
    "proved": "已证明",
    "passes-before": "修复前已通过",
    "fails-after": "修复后仍失败",
    "untestable": "无法测试",
    "error": "出错",
    "excluded": "排除",
    "pending": "待处理",
}


def main() -> int:
    from xlakb.candidates.releases import releases_between
    from xlakb.mining.mine import find

    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.environ.get("XLAKB_XLA_REPO"), help="a pytorch/xla clone")
    ap.add_argument("--from", dest="start", default="2.1.0")
    ap.add_argument("--to", dest="end", default="2.9.0")
    args = ap.parse_args()
    if args.repo:
        published = [c.label for c in releases_between()]
        started = time.perf_counter()
        rows = find(args.repo, args.start, args.end, published)
        took = time.perf_counter() - started
        excluded = sum(1 for m in rows if m.status == "excluded")
        print(
            f"finding: {len(rows)} candidates ({len(rows) - excluded} to prove, {excluded} left out with a reason) "
            f"in {took:.0f} s: {len(rows) / took * 60:.0f} candidates per minute"
        )
    else:
        print("finding: not measured (give --repo or XLAKB_XLA_REPO)")
    table = json.loads((REPO / "mined" / "candidates.json").read_text("utf-8"))
    counts = table.get("counts", {})
    print("outcomes: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    import yaml

    def mined_in(folder: str) -> int:
        return sum(1 for p in (REPO / folder).glob("*.yaml") if "\nsource: mined\n" in p.read_text("utf-8"))

    bugs, limitations = mined_in("issues"), mined_in("limitations")
    print(f"mined records: {bugs} bugs, {limitations} limitations")
    proved = [m for m in table["candidates"] if m["status"] == "proved"]
    reviewed = [m for m in proved if m.get("kind_rule") == "review"]
    agree = sum(1 for m in reviewed if m.get("rule_kind") == m.get("kind"))
    kinds = {k: sum(1 for m in proved if m.get("kind") == k) for k in ("bug", "limitation", "neither")}
    print(f"proved: {kinds}; the rules agree with the review on {agree} of {len(reviewed)} reviewed proofs")
    reviews = yaml.safe_load((REPO / "mined" / "review.yaml").read_text("utf-8"))["reviews"]
    figures = [
        figure("test functions considered", "考察的测试函数", len(table["candidates"])),
        *(figure(f"outcome: {k}", f"结果：{OUTCOMES_ZH.get(k, k)}", n) for k, n in sorted(counts.items())),
        figure("proofs of a bug", "证明为缺陷的", kinds["bug"]),
        figure("proofs of a limitation lifted", "证明为已解除限制的", kinds["limitation"]),
        figure("proofs of neither", "两者都不是的", kinds["neither"]),
        figure("fixes read from their diffs (mined/review.yaml)", "依据代码改动审阅过的修复", len(reviews)),
        figure(
            "the rules agree with the review",
            "规则与人工审阅一致",
            f"{agree} / {len(reviewed)}",
            note_en="where they differ, the review decides",
            note_zh="不一致时以人工审阅为准",
        ),
        figure("bug records found by mining", "由挖掘得到的缺陷记录", bugs),
        figure("limitations found by mining", "由挖掘得到的限制", limitations),
    ]
    if args.repo:
        figures.append(figure("finding the candidates (no probe)", "找出候选（不运行探测）", round(took), "s"))
    path = write("mine", "Mining upstream fixes", "挖掘上游修复", "python3 benchmarks/bench_mine.py --repo ../xla", figures)
    print(f"written: {path.relative_to(REPO)}")
    run = table.get("last_run")
    if not run:
        print("proving: no run that probed is recorded")
        return 0
    per = (
        f"{run['probes'] / run['records_now']:.1f} probes per record"
        if run.get("records_now")
        else "no record written, so no probes-per-record figure"
    )
    print(
        f"last run ({run['date']}): {run['seconds'] / 60:.0f} min wall time, {run['probes']} probes, "
        f"{run['proved_now']} proved, {run['records_now']} records written: {per}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
