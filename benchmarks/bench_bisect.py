"""Wall time of a release-level bisection, cold and warm.

    python3 benchmarks/bench_bisect.py                       # fake releases (hermetic)
    python3 benchmarks/bench_bisect.py --real RECORD_ID      # a real record over all releases

cold: empty verdict cache and bisection state (environments: fake = built from scratch;
      real = the uv package cache is whatever UV_CACHE_DIR holds, so torch downloads are
      counted only the first time ever);
warm: the same bisection again — the verdict cache answers every probe (zero probes run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))


def bisect_once(record, candidates, find_links=(), index_url=None):
    from xlakb.bisection import Engine, Options
    from xlakb.envs.uv import UvBackend

    start = time.perf_counter()
    report = Engine(record, UvBackend(), options=Options(find_links=find_links, index_url=index_url)).run(
        candidates, source="releases"
    )
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", metavar="RECORD_ID")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xlakb-bench-bisect-"))
    os.environ["XLAKB_CACHE_DIR"] = str(work / "cache")
    os.environ.setdefault("UV_CACHE_DIR", str(work / "uv-cache"))
    os.environ["UV_PYTHON_DOWNLOADS"] = "never"
    from xlakb.candidates.releases import releases_between
    from xlakb.records import load_record

    rows = []
    if args.real:
        record = load_record(REPO, args.real)
        cands = releases_between("2.2.0", None)
        cold, report = bisect_once(record, cands)
        rows.append((f"real {args.real}, {len(cands)} releases", cold, report))
        warm, report2 = bisect_once(record, cands)
        rows.append(("  again (warm)", warm, report2))
    else:
        from fakewheels import fake_record, fake_torch, fake_torch_xla

        house = work / "house"
        versions = [f"2.{i}.0" for i in range(1, 10)]
        for i, v in enumerate(versions):
            fake_torch_xla(house, v, bug="present" if i >= 5 else "none")
            fake_torch(house, v)
        kb = work / "kb"
        fake_record(kb)
        record = load_record(kb, "fake-bug")
        from xlakb.candidates import Candidate

        cands = [Candidate("release", v, v, v) for v in versions]
        cold, report = bisect_once(record, cands, (str(house),), "none")
        rows.append((f"fake, {len(cands)} releases", cold, report))
        warm, report2 = bisect_once(record, cands, (str(house),), "none")
        rows.append(("  again (warm)", warm, report2))
    print("| bisection | wall time | probes run | answer |")
    print("|---|---|---|---|")
    for name, secs, rep in rows:
        print(
            f"| {name} | {secs:.1f} s | {rep.probes_run} | {rep.last_old_candidate.label} → {rep.first_new_candidate.label} ({rep.direction}) |"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
