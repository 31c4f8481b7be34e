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
    records = sorted(p.stem for p in (REPO / "issues").glob("mined-*.yaml"))
    print(f"mined records: {len(records)}")
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
