"""The reported tier: how well error signatures group reports of one bug and keep look-alikes apart.

    python3 benchmarks/bench_upstream.py

Labelled sample: the real pastes of tests/data/triage/pasted, each labelled with the bug it shows: its
record (`bug:`, else the answer triage should give), or, for a paste of no record, the bug of its thread. Two pastes are put
in one cluster when their primary signatures are the same (the same error words after normalisation, and
the same guilty location when both name one). A pair is right when both show the same record; a paste
labelled none is the bug of its upstream thread. Precision: of the pairs clustered together, how many are one bug; recall:
of the pairs of one bug, how many are clustered together. Then the stored upstream reports: how many have
error lines, how many clusters, and the time to cluster them.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_io import figure, write  # noqa: E402 - the benchmarks' own helper, beside this script

sys.path.insert(0, str(REPO / "src"))


def main() -> int:
    from xlakb.upstream import index, store
    from xlakb.upstream.signature import error_lines, primary

    folder = REPO / "tests" / "data" / "triage" / "pasted"
    items = yaml.safe_load((folder / "index.yaml").read_text("utf-8"))["pastes"]
    sample = []
    as_reports = {}
    for n, it in enumerate(items, 1):
        lines = error_lines((folder / it["file"]).read_text("utf-8"))
        p = primary(lines)
        if p is not None:
            # a paste of no record is its own bug, unless another paste comes from the same upstream thread
            # (`bug:` names the bug when triage's answer cannot: a generic line from a record's own thread)
            label = it.get("bug") or (it["expect"] if it["expect"] != "none" else f"thread:{it['url'].split('#')[0]}")
            sample.append((n, it["file"], label, p))
            as_reports[n] = store.Report(
                number=n, title=it["file"], state="open", url=it["url"], errors=[p.__dict__]
            )  # grouped by its primary line, as a report is
    cluster_of = {}
    for c in index.build(as_reports):
        for r in c.issues:
            cluster_of[r.number] = c.key
    tp = fp = fn = 0
    wrong = []
    for (na, fa, la, pa), (nb, fb, lb, pb) in itertools.combinations(sample, 2):
        same_bug, same_cluster = la == lb, cluster_of[na] == cluster_of[nb]
        tp += same_bug and same_cluster
        fp += (not same_bug) and same_cluster
        fn += same_bug and not same_cluster
        if same_cluster and not same_bug:
            wrong.append((fa, fb, pa.key))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(
        f"labelled pastes with an error line: {len(sample)} of {len(items)}; "
        f"pairs of one bug: {tp + fn}, pairs clustered together: {tp + fp}"
    )
    print(f"pairwise precision {precision:.3f}, recall {recall:.3f}")
    by_key: dict[str, list] = {}
    for fa, fb, key in wrong:
        by_key.setdefault(key, []).append((fa, fb))
    for key, pairs in sorted(by_key.items(), key=lambda kv: -len(kv[1])):
        files = sorted({f for pair in pairs for f in pair})
        print(f"  {len(pairs)} pairs of different bugs share {key[:80]!r}: {', '.join(files)}")

    reports = store.load(REPO)
    start = time.perf_counter()
    clusters = index.build(reports)
    took = time.perf_counter() - start
    with_errors = sum(1 for r in reports.values() if r.errors)
    multi = [c for c in clusters if len(c.issues) > 1]
    print(
        f"stored reports: {len(reports)} ({with_errors} with error lines, "
        f"{sum(r.seeded for r in reports.values())} seeded); clusters: {len(clusters)}, "
        f"{len(multi)} with more than one report; clustered in {took * 1000:.0f} ms"
    )
    big = (
        {
            n: store.Report(number=n, title="t", state="open", url="https://x", errors=r.errors)
            for n, r in ((i, list(reports.values())[i % len(reports)]) for i in range(20_000))
        }
        if reports
        else {}
    )
    start = time.perf_counter()
    index.build(big)
    big_took = time.perf_counter() - start
    print(f"20,000 reports clustered in {big_took:.2f} s")
    figures = [
        figure("stored upstream reports", "存档的上游报告", len(reports)),
        figure("… of them with error lines", "其中带有报错行的", with_errors),
        figure("clusters", "聚类数", len(clusters)),
        figure("clusters of more than one report", "包含多份报告的聚类", len(multi)),
        figure("clustering the store", "对存档做聚类", round(took * 1000), "ms"),
        figure("clustering 20,000 reports", "对 20,000 份报告做聚类", round(big_took, 2), "s"),
        figure(
            "labelled pastes: pairwise precision",
            "已标注粘贴：成对精确率",
            round(precision, 3),
            note_en="two pastes are one bug when they show the same record, or come from one thread",
            note_zh="两段粘贴若指向同一记录，或来自同一讨论串，即视为同一问题",
        ),
        figure("labelled pastes: pairwise recall", "已标注粘贴：成对召回率", round(recall, 3)),
    ]
    path = write("upstream", "The reported tier", "上游报告层", "python3 benchmarks/bench_upstream.py", figures)
    print(f"written: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
