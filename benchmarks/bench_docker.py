"""Per-probe overhead of the Docker runner against the uv runner, with cached environments.

    python3 benchmarks/bench_docker.py                      # fake wheels (a minute)
    python3 benchmarks/bench_docker.py --real 2.5.1         # also a real torch_xla release (~3.5 GB of wheels)

Needs a Docker daemon and a base image ($XLAKB_DOCKER_IMAGE, default xlakb-base:bookworm;
.ci/setup-docker.sh makes both).  Works in a private cache (``--cache``, default a folder under
the system temp dir, kept between runs so --real downloads its wheels once); never the user's.

Measured per runner, median of ``--repeat`` runs:
  * cold env: a new environment from wheels already on disk (uv venv vs build container + commit);
  * ensure: a second request for the same environment (the cache hit);
  * probe: a whole ``xlakb.runner.probe`` of a trivial reproducer (``pass``) and of one that
    imports torch_xla: environment check + container/process start + run + judge;
  * overhead: docker minus uv.  The Docker runner compiles bytecode into the image (its root
    filesystem is read-only at run time); the uv runner does not, so with real wheels a row for the
    same uv environment after ``compileall`` separates the container's own cost from that.
With --real, the uv runner installs from the same wheelhouse the Docker runner downloaded
(``--index-url none``), into a private uv cache.  Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from bench_envs import timed  # noqa: E402
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script


def median_time(fn, repeat: int) -> float:
    return timed(fn, repeat)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", metavar="VERSION", help="also measure a real torch_xla release")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "xlakb-bench-docker"))
    parser.add_argument("--keep", action="store_true", help="keep the docker images made (default: removed at the end)")
    parser.add_argument(
        "--warm", action="store_true", help="reuse environments kept by an earlier --keep run (new env then measures a cache hit)"
    )
    args = parser.parse_args()
    work = Path(args.cache)
    work.mkdir(parents=True, exist_ok=True)
    os.environ["XLAKB_CACHE_DIR"] = str(work / "cache")
    os.environ["UV_CACHE_DIR"] = str(work / "uv-cache")
    os.environ["UV_PYTHON_DOWNLOADS"] = "never"
    os.environ.setdefault("XLAKB_DOCKER_IMAGE", "xlakb-base:bookworm")

    from fakewheels import fake_record, fake_torch, fake_torch_xla
    from xlakb.candidates.releases import release
    from xlakb.envs.docker import DockerBackend, gc
    from xlakb.envs.uv import UvBackend
    from xlakb.records import load_record
    from xlakb.runner import env_spec, probe

    label = {"xlakb.bench": "docker"}
    docker = DockerBackend(labels=label)
    reason = docker.available()
    if reason:
        print(f"no Docker daemon: {reason}", file=sys.stderr)
        return 1
    docker.base_image()

    house = work / "house"
    fake_torch_xla(house, "2.5.1", bug="none")
    fake_torch(house, "2.5.1")
    kb = work / "kb"
    fake_record(kb, "trivial", reproducer="pass\n")
    fake_record(kb, "import", reproducer="import sys, torch_xla\nsys.exit(0)\n")

    rows = []
    starts: set[str] = set()  # how the measured probes started: warm (forked from a server) or cold

    def scenario(
        name: str, version: str, uv_links: tuple[str, ...], docker_links: tuple[str, ...], docker_index: str | None
    ) -> None:
        cand = release(version)
        # docker first: with --real it fills the wheelhouse the uv runner then installs from
        for runner, backend, links, index in (
            ("docker", docker, docker_links, docker_index),
            ("uv", UvBackend(), uv_links, "none"),
        ):
            spec = env_spec(load_record(kb, "trivial"), cand, find_links=links, index_url=index)
            if not args.warm:
                backend.remove(spec.key())
            if runner == "docker" and index != "none":
                backend.fill_wheelhouse(spec, _Print())
            start = time.perf_counter()
            prepared = backend.ensure(spec, _Print() if name != "fake" else None)
            cold = time.perf_counter() - start
            ensure = median_time(lambda: backend.ensure(spec), args.repeat)
            probes = {}
            for rid in ("trivial", "import"):
                rec = load_record(kb, rid)
                results = []

                def one():
                    res = probe(rec, cand, backend, find_links=links, index_url=index)
                    results.append(res)

                probes[rid] = median_time(one, args.repeat)
                starts.update(r.start for r in results)
                bad = [r for r in results if r.verdict.value != "not-reproduced"]
                if bad:
                    raise SystemExit(f"{runner} {rid}: {bad[0].verdict.value} {bad[0].detail}")
            rows.append((name, runner, cold, ensure, probes["trivial"], probes["import"]))
            if runner == "uv":
                # the Docker runner compiles bytecode when it builds (its root filesystem is read-only at run
                # time); the uv runner does not, so each of its runs compiles what it imports.  The same
                # uv environment with bytecode compiled separates that from the container's own cost.
                subprocess.run(
                    [prepared.python, "-m", "compileall", "-q", "-j0", str(Path(prepared.python).parent.parent / "lib")],
                    capture_output=True,
                )
                rec = load_record(kb, "import")
                compiled = median_time(lambda: probe(rec, cand, backend, find_links=links, index_url=index), args.repeat)
                rows.append((name, "uv, bytecode compiled", float("nan"), float("nan"), float("nan"), compiled))

    try:
        scenario("fake", "2.5.1", (str(house),), (str(house),), "none")
        if args.real:
            wheelhouse = work / "cache" / "wheelhouse"
            scenario(f"real {args.real}", args.real, (str(wheelhouse),), (), None)
    finally:
        if not args.keep:
            gc(labels=label)

    print(f"\nPer-probe cost, median of {args.repeat} ({os.cpu_count()} cores, base image {docker.image}):\n")
    print("| wheels | runner | new env (s) | cached ensure (s) | probe `pass` (s) | probe `import torch_xla` (s) |")
    print("|---|---|---:|---:|---:|---:|")
    for name, runner, cold, ensure, trivial, imp in rows:
        cells = [f"{cold:.2f}", f"{ensure:.3f}", f"{trivial:.2f}", f"{imp:.2f}"]
        print(f"| {name} | {runner} | " + " | ".join("" if c == "nan" else c for c in cells) + " |")
    by = {(n, r): (t, i) for n, r, _, _, t, i in rows}
    for name in dict.fromkeys(n for n, *_ in rows):
        if (name, "uv") in by and (name, "docker") in by:
            d = [by[(name, "docker")][k] - by[(name, "uv")][k] for k in (0, 1)]
            print(f"| {name} | docker − uv | | | {d[0]:+.2f} | {d[1]:+.2f} |")
            c = by[(name, "docker")][1] - by[(name, "uv, bytecode compiled")][1]
            print(f"| {name} | docker − uv (compiled) | | | | {c:+.2f} |")
    figures = []
    med_en, med_zh = f"median of {args.repeat}", f"{args.repeat} 次的中位数"
    start_en = {"warm": "warm starts (forked from a server)", "cold": "cold starts (a new interpreter)"}
    start_zh = {"warm": "热启动（从常驻服务进程派生）", "cold": "冷启动（新的解释器进程）"}
    probe_en = " and ".join(start_en[s] for s in sorted(starts, reverse=True))
    probe_zh = "和".join(start_zh[s] for s in sorted(starts, reverse=True))
    for name in dict.fromkeys(n for n, *_ in rows):
        row = {r: (cold, ensure, trivial, imp) for n, r, cold, ensure, trivial, imp in rows if n == name}
        if "docker" not in row or "uv" not in row:
            continue
        d, u, uc = row["docker"], row["uv"], row.get("uv, bytecode compiled")
        en = "fake wheels" if name == "fake" else f"torch_xla {name.removeprefix('real ')} wheels"
        zh = "模拟的 wheel" if name == "fake" else f"torch_xla {name.removeprefix('real ')} 的 wheel"
        compiled_en = f", {d[3] - uc[3]:+.2f} s against uv with bytecode compiled" if uc else ""
        compiled_zh = f"，与已编译字节码的 uv 环境相比 {d[3] - uc[3]:+.2f} 秒" if uc else ""
        figures += [
            figure(
                f"{en}: a new environment, Docker runner (build a container, commit it)",
                f"{zh}：新建一个环境，Docker 运行器（构建容器并提交）",
                round(d[0], 2),
                "s",
                note_en=f"uv runner: {u[0]:.2f} s",
                note_zh=f"uv 运行器：{u[0]:.2f} 秒",
            ),
            figure(
                f"{en}: the same environment requested again, Docker runner",
                f"{zh}：再次请求同一环境，Docker 运行器",
                round(d[1] * 1000, 1),
                "ms",
                note_en=f"uv runner: {u[1] * 1000:.1f} ms; {med_en}",
                note_zh=f"uv 运行器：{u[1] * 1000:.1f} 毫秒；{med_zh}",
            ),
        ]
        for k, script, more_en, more_zh in ((2, "pass", "", ""), (3, "import torch_xla", compiled_en, compiled_zh)):
            figures.append(
                figure(
                    f"{en}: a whole probe of `{script}`, Docker runner",
                    f"{zh}：一次完整的探测（复现脚本为 `{script}`），Docker 运行器",
                    round(d[k], 2),
                    "s",
                    note_en=f"uv runner: {u[k]:.2f} s; Docker's overhead {d[k] - u[k]:+.2f} s{more_en}; {probe_en}; {med_en}",
                    note_zh=f"uv 运行器：{u[k]:.2f} 秒；Docker 的额外开销 {d[k] - u[k]:+.2f} 秒{more_zh}；{probe_zh}；{med_zh}",
                )
            )
    command = "python3 benchmarks/bench_docker.py" + (f" --real {args.real}" if args.real else "")
    path = write("docker", "The Docker runner against the uv runner", "Docker 运行器与 uv 运行器对比", command, figures)
    print(f"written: {path.relative_to(HERE.parent)}", file=sys.stderr)
    return 0


class _Print:
    def step(self, done, total, message):
        print(f"[{done}/{total}] {message}", file=sys.stderr, flush=True)

    def info(self, message):
        print(f"  {message}", file=sys.stderr, flush=True)

    def download(self, name, done, total):
        print(f"  downloaded {name} ({done / 1e6:.1f} MB)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
