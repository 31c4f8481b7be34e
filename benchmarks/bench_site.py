#!/usr/bin/env python3
"""Site build time and search-index size for many records.

Copies the site sources of this checkout into a scratch folder, adds N generated
records (each with a reproducer and a 12-release matrix.json fixture; the stand-ins
of the first records too, unless the real ones exist), builds the site strictly in
both languages with ``build_site`` and reports:

- build seconds, wall clock and CPU (one build, single-threaded; the scratch copy and
  generation are not counted; on a busy machine the wall clock exceeds the CPU time),
- pages written, output size,
- the search index size, per language (``search/search_index.json`` for en,
  ``zh/search/search_index.json`` for zh) and gzip-compressed (what a browser downloads).

    python3 benchmarks/bench_site.py [--records 1000] [--seed 0] [--keep DIR]

Target: under 60 s for 1,000 records on a 2-core machine. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the synthetic records live with the tests
try:
    from xlakb.sitegen.build import build_site
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from xlakb.sitegen.build import build_site
import sitesynthetic as synthetic  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script

REPO = Path(__file__).resolve().parents[1]


def size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 6))


def tree_size(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def run(records: int, seed: int, workdir: Path) -> dict:
    root = synthetic.make_layout(workdir / "kb", REPO)
    synthetic.populate(root, records, seed=seed)
    total = len(list((root / "issues").glob("*.yaml")))
    out = workdir / "out"
    start, cpu = time.perf_counter(), time.process_time()
    build_site(root, out)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    en, en_gz = size(out / "search" / "search_index.json")
    zh, zh_gz = size(out / "zh" / "search" / "search_index.json")
    files, output = tree_size(out)
    pages = len(list(out.rglob("records/*/index.html")))
    return {
        "records": total,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "load": os.getloadavg()[0],
        "record_pages": pages,
        "files": files,
        "output_bytes": output,
        "index_en": en,
        "index_en_gz": en_gz,
        "index_zh": zh,
        "index_zh_gz": zh_gz,
    }


def mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000, help="generated records (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="build here and keep the result (default: a temp dir)")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        r = run(args.records, args.seed, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="xlakb-bench-site-") as tmp:
            r = run(args.records, args.seed, Path(tmp))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at the end {r['load']:.1f}"
    )
    print()
    print(
        "| records | build wall (s) | build CPU (s) | record pages (en+zh) | output | search index en (gzip) | search index zh (gzip) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {r['records']} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['record_pages']} | {mib(r['output_bytes'])} "
        f"| {mib(r['index_en'])} ({mib(r['index_en_gz'])}) | {mib(r['index_zh'])} ({mib(r['index_zh_gz'])}) |"
    )
    n = r["records"]
    figures = [
        figure(
            f"a strict build of both languages, {n:,} records (wall clock)",
            f"严格模式构建中英文两种语言的网站，{n:,} 条记录（墙钟时间）",
            round(r["seconds"], 1),
            "s",
            note_en=f"CPU {r['cpu_seconds']:.1f} s; target under 60 s for 1,000 records on 2 cores; "
            f"load average at the end {r['load']:.1f}",
            note_zh=f"CPU 时间 {r['cpu_seconds']:.1f} 秒；目标：2 核机器上 1,000 条记录少于 60 秒；结束时的平均负载 {r['load']:.1f}",
        ),
        figure("record pages written (en + zh)", "生成的记录页面（英文 + 中文）", r["record_pages"]),
        figure(
            "the built site",
            "构建出的网站",
            round(r["output_bytes"] / 2**20, 2),
            "MiB",
            f"{r['files']:,} files",
            f"{r['files']:,} 个文件",
        ),
        figure(
            "search index, English, gzip-compressed (what a browser downloads)",
            "搜索索引，英文，gzip 压缩后（浏览器实际下载的大小）",
            round(r["index_en_gz"] / 2**20, 2),
            "MiB",
            f"uncompressed {mib(r['index_en'])}",
            f"未压缩 {mib(r['index_en'])}",
        ),
        figure(
            "search index, Chinese, gzip-compressed",
            "搜索索引，中文，gzip 压缩后",
            round(r["index_zh_gz"] / 2**20, 2),
            "MiB",
            f"uncompressed {mib(r['index_zh'])}",
            f"未压缩 {mib(r['index_zh'])}",
        ),
    ]
    command = "python3 benchmarks/bench_site.py" + (f" --records {args.records}" if args.records != 1000 else "")
    command += f" --seed {args.seed}" if args.seed else ""
    path = write("site", "Site build", "网站构建", command, figures)
    print(f"written: {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
