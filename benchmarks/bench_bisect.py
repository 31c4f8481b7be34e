"""Wall time of a release-level bisection, cold and warm; and a script's bisection against its record's.

    python3 benchmarks/bench_bisect.py                       # fake releases (hermetic)
    python3 benchmarks/bench_bisect.py --real RECORD_ID      # a real record over all releases
    python3 benchmarks/bench_bisect.py --script              # script vs record, probes (hermetic; writes results/bisect_script.json)

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

from packaging.version import Version

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))


def bisect_once(record, candidates, find_links=(), index_url=None):
    from xlakb.bisection import Engine, Options
    from xlakb.envs.uv import UvBackend

    start = time.perf_counter()
    report = Engine(record, UvBackend(), options=Options(find_links=find_links, index_url=index_url)).run(
        candidates, source="releases"
    )
    return time.perf_counter() - start, report


#: what the script and the record see: (scenario, the fake torch_xla's BUG per release, the record's claim)
SCENARIOS = (
    ("fixed in 2.6.0", "修复于 2.6.0", lambda v: "present" if Version(v) < Version("2.6") else "none", (">=2.1,<2.6", "2.6.0")),
    ("introduced in 2.4.0", "引入于 2.4.0", lambda v: "present" if Version(v) >= Version("2.4") else "none", (">=2.4", None)),
)

SCRIPT = """import sys
import torch_xla
print("torch_xla", torch_xla.__version__)
if torch_xla.BUG == "present":
    raise TypeError("unhashable type: 'list'")
"""


def whole_range(record, house):
    """A bisection as ``xlakb bisect`` runs one without --start/--end: every known release, ends found first."""
    from xlakb.bisection import Context, Options
    from xlakb.candidates.releases import ReleaseSource
    from xlakb.envs.uv import UvBackend

    ctx = Context(record, UvBackend(), options=Options(find_links=(str(house),), index_url="none"))
    source = ReleaseSource(ctx)
    start = time.perf_counter()
    reports = source.bisect(ctx.engine(source))
    return time.perf_counter() - start, reports


def script_vs_record(work: Path) -> None:
    """The same behaviour as a record and as a plain script, each bisected over the whole known range: probes
    run, the answer, and the script's bisection again (the verdict cache: none)."""
    from fakewheels import fake_record, fake_wheelhouse
    from results_io import figure, write
    from xlakb.candidates.releases import all_releases
    from xlakb.records import load_record
    from xlakb.scripts import Script

    script_path = work / "repro.py"
    script_path.write_text(SCRIPT)
    figures, rows = [], []
    for n, (en, zh, bug, (affected, fixed_in)) in enumerate(SCENARIOS):
        house = fake_wheelhouse(work / f"house-{n}", {v: bug(v) for v in all_releases()})
        kb = work / f"kb-{n}"
        path = fake_record(kb, affected=affected, fixed_in=fixed_in)
        if not fixed_in:
            path.write_text(path.read_text().replace("status: fixed", "status: open"))
        record_s, (rec,) = whole_range(load_record(kb, "fake-bug"), house)
        script_s, (scr,) = whole_range(Script.load(str(script_path)).record(), house)
        again_s, (again,) = whole_range(Script.load(str(script_path)).record(), house)
        answer = lambda r: (r.last_old_candidate.label, r.first_new_candidate.label)  # noqa: E731
        assert answer(rec) == answer(scr) == answer(again), (answer(rec), answer(scr))
        assert scr.probes_run <= rec.probes_run, (scr.probes_run, rec.probes_run)
        rows += [(f"record, {en}", record_s, rec), (f"script, {en}", script_s, scr), ("  script again", again_s, again)]
        figures += [
            figure(f"probes run, record bisection ({en})", f"记录二分所运行的探测次数（{zh}）", rec.probes_run, "probes"),
            figure(
                f"probes run, script bisection ({en})",
                f"脚本二分所运行的探测次数（{zh}）",
                scr.probes_run,
                "probes",
                note_en="the same answer as the record's; its environments were already built by the record's run",
                note_zh="与记录二分的结果相同；所需环境已由记录二分建好",
            ),
            figure(
                f"probes run, the same script bisection again ({en})",
                f"再次进行同一脚本二分所运行的探测次数（{zh}）",
                again.probes_run,
                "probes",
            ),
        ]
    write(
        "bisect_script",
        f"Bisecting a script without a record ({len(all_releases())} fake releases, the whole known range)",
        f"无需记录即可二分脚本（{len(all_releases())} 个假版本，全部已知版本范围）",
        "python3 benchmarks/bench_bisect.py --script",
        figures,
    )
    print_rows(rows)


def print_rows(rows) -> None:
    print("| bisection | wall time | probes run | answer |")
    print("|---|---|---|---|")
    for name, secs, rep in rows:
        print(
            f"| {name} | {secs:.1f} s | {rep.probes_run} | {rep.last_old_candidate.label} → {rep.first_new_candidate.label} ({rep.direction}) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", metavar="RECORD_ID")
    parser.add_argument("--script", action="store_true", help="a script's bisection against its record's (probes)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xlakb-bench-bisect-"))
    os.environ["XLAKB_CACHE_DIR"] = str(work / "cache")
    os.environ.setdefault("UV_CACHE_DIR", str(work / "uv-cache"))
    os.environ["UV_PYTHON_DOWNLOADS"] = "never"
    if args.script:
        script_vs_record(work)
        shutil.rmtree(work, ignore_errors=True)
        return
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
    print_rows(rows)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
