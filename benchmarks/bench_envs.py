"""Environment benchmarks: time to a ready environment and per-probe overhead.

    python3 benchmarks/bench_envs.py                 # fake wheels only (seconds)
    python3 benchmarks/bench_envs.py --real 2.5.1    # also a real torch_xla release (~5 GB)

Measures, in a private cache (never the user's):
  * cold: a new environment (xlakb + uv); with --real the uv cache is warmed first
    with a throw-away install, so "cold" is a new environment, not a first download;
  * cached: a second request for the same environment (xlakb's cache hit);
  * naive: `python -m venv` + `pip install` of the same requirements;
  * probe overhead: process start + `import torch_xla` in a cached environment, and a
    whole xlakb probe of a trivial reproducer (ensure + run + judge).
Prints a markdown table.
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
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script


def timed(fn, repeat=1):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", metavar="VERSION", help="also measure a real torch_xla release")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xlakb-bench-"))
    try:
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, work: Path) -> None:
    os.environ["XLAKB_CACHE_DIR"] = str(work / "cache")
    os.environ.setdefault("UV_CACHE_DIR", str(work / "uv-cache"))
    os.environ["UV_PYTHON_DOWNLOADS"] = "never"

    from fakewheels import fake_record, fake_torch, fake_torch_xla
    from xlakb.candidates.releases import release
    from xlakb.envs import EnvSpec
    from xlakb.envs.uv import UvBackend
    from xlakb.records import load_record
    from xlakb.runner import env_spec, probe

    rows = []
    house = work / "house"
    fake_torch_xla(house, "2.5.1", bug="none")
    fake_torch(house, "2.5.1")
    kb = work / "kb"
    fake_record(kb, reproducer="import sys, torch_xla\nsys.exit(0)\n")
    record = load_record(kb, "fake-bug")

    def scenario(name, name_zh, spec, naive_reqs, naive_args):
        backend = UvBackend()
        cold = timed(lambda: backend.ensure(spec))
        cached = timed(lambda: backend.ensure(spec), args.repeat)

        def naive():
            venv = work / f"naive-{time.monotonic_ns()}"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run(
                [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *naive_args, *naive_reqs], check=True
            )
            shutil.rmtree(venv)

        naive_s = timed(naive)
        prepared = backend.ensure(spec)
        imp = timed(
            lambda: subprocess.run(
                [prepared.python, "-c", "import torch_xla"], check=True, env={**os.environ, "PJRT_DEVICE": "CPU"}
            ),
            args.repeat,
        )
        rows.append((name, name_zh, cold, cached, naive_s, imp))

    fake_spec = EnvSpec("3.11", ("torch_xla==2.5.1", "torch==2.5.1"), (str(house),), "none")
    scenario(
        "fake torch_xla 2.5.1",
        "模拟的 torch_xla 2.5.1",
        fake_spec,
        ["torch_xla==2.5.1", "torch==2.5.1"],
        ["--no-index", "--find-links", str(house)],
    )
    starts = set()
    probe_s = timed(
        lambda: starts.add(probe(record, release("2.5.1"), UvBackend(), find_links=(str(house),), index_url="none").start),
        args.repeat,
    )

    if args.real:
        cand = release(args.real)
        spec = env_spec(record, cand)
        warm = UvBackend(work / "warm")
        print(f"warming the uv cache with torch_xla {args.real} (downloads ~5 GB the first time)...", file=sys.stderr)
        warm.ensure(spec)
        shutil.rmtree(work / "warm")
        scenario(
            f"real torch_xla {args.real}", f"真实的 torch_xla {args.real}", spec, list(spec.requirements), ["--no-cache-dir"]
        )

    print("| environment | cold (new env) | cached (2nd request) | naive venv + pip | python + import torch_xla |")
    print("|---|---|---|---|---|")
    for name, _, cold, cached, naive_s, imp in rows:
        print(f"| {name} | {cold:.2f} s | {cached * 1000:.1f} ms | {naive_s:.2f} s | {imp:.2f} s |")
    print(
        f"\nwhole xlakb probe of a trivial reproducer, cached fake environment: {probe_s * 1000:.0f} ms (median of {args.repeat})"
    )
    figures = []
    for name, zh, cold, cached, naive_s, imp in rows:
        figures += [
            figure(f"{name}: a new environment (first request)", f"{zh}：新建一个环境（首次请求）", round(cold, 2), "s"),
            figure(
                f"{name}: the same environment requested again (cache hit)",
                f"{zh}：再次请求同一环境（缓存命中）",
                round(cached * 1000, 1),
                "ms",
                note_en=f"median of {args.repeat}",
                note_zh=f"{args.repeat} 次的中位数",
            ),
            figure(
                f"{name}: `python -m venv` + `pip install`, for comparison",
                f"{zh}：`python -m venv` + `pip install`（作为对照）",
                round(naive_s, 2),
                "s",
            ),
            figure(
                f"{name}: start Python and `import torch_xla`",
                f"{zh}：启动 Python 并 `import torch_xla`",
                round(imp, 2),
                "s",
                note_en=f"median of {args.repeat}",
                note_zh=f"{args.repeat} 次的中位数",
            ),
        ]
    started_en = " and ".join({"warm": "warm starts (forked from a server)", "cold": "cold starts"}[s] for s in sorted(starts))
    started_zh = "和".join({"warm": "热启动（从常驻服务进程派生）", "cold": "冷启动"}[s] for s in sorted(starts))
    figures.append(
        figure(
            "a whole xlakb probe of a trivial reproducer, cached fake environment",
            "一次完整的 xlakb 探测：简单的复现脚本，已缓存的模拟环境",
            round(probe_s * 1000),
            "ms",
            note_en=f"environment check, run and judgement; {started_en}; median of {args.repeat}",
            note_zh=f"包括环境检查、运行和判定；{started_zh}；{args.repeat} 次的中位数",
        )
    )
    command = "python3 benchmarks/bench_envs.py" + (f" --real {args.real}" if args.real else "")
    path = write("envs", "Environments: time to ready and per-probe cost", "环境：就绪时间与每次探测的开销", command, figures)
    print(f"written: {path.relative_to(HERE.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
