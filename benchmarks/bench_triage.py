"""Triage: precision and recall on the corpus, per kind of evidence, and speed on a big log.

    python3 benchmarks/bench_triage.py

Corpus (tests/data/triage): positives are trimmed logs of real reproducer runs on releases where
the bug was measured (``<id>@<release>.log``: the record that must come first, strongly);
negatives are logs of runs on fixed releases and unrelated tracebacks (nothing may match strongly).
A positive is found when its record is a strong match and the first strong match is it or a record
whose logs cannot be told apart from it (tests/data/triage/equivalent.yaml); a strong match naming
any other record is a false positive.

Speed: a 1 MB log (training-step lines, XLA INFO lines, a traceback at the end) against 1,000
records (the real ones plus generated ones with the same shape of signatures); best of 5.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "triage"


def corpus_scores() -> None:
    from xlakb.triage import KINDS, export, read_log_file, triage

    import yaml

    records = export(REPO)["records"]
    groups = yaml.safe_load((CORPUS / "equivalent.yaml").read_text())["groups"]

    def same(rid: str) -> set[str]:  # records whose logs cannot be told apart (equivalent.yaml)
        return set().union({rid}, *(set(g["records"]) for g in groups if rid in g["records"]))

    tp = fp = fn = possible = 0
    used_right: Counter = Counter()
    used_wrong: Counter = Counter()
    matched_in_positive: Counter = Counter()
    positives = sorted((CORPUS / "positive").glob("*.log"))
    negatives = sorted((CORPUS / "negative").glob("*.log")) + sorted((CORPUS / "negative" / "measured").glob("*.log"))
    for path in positives:
        want = path.stem.split("@")[0]
        result = triage(read_log_file(path), records)
        strong = result.strong
        possible += len(result.matches) - len(strong)
        right = [m for m in strong if m.id in same(want)]
        if strong and strong[0].id in same(want) and any(m.id == want for m in right):
            tp += 1
            kinds = {h.signature.kind for h in next(m for m in right if m.id == want).hits}
            used_right.update(kinds)
            matched_in_positive.update(kinds)
        else:
            fn += 1
        for m in strong:
            if m.id not in same(want):
                fp += 1
                used_wrong.update({h.signature.kind for h in m.hits})
    for path in negatives:
        result = triage(read_log_file(path), records)
        possible += len(result.matches) - len(result.strong)
        for m in result.strong:
            fp += 1
            used_wrong.update({h.signature.kind for h in m.hits})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"corpus: {len(positives)} positive logs, {len(negatives)} negative logs, {len(records)} records")
    print(f"strong matches: precision {precision:.3f}, recall {recall:.3f} (TP {tp}, FP {fp}, FN {fn}); "
          f"possible-only matches shown: {possible}\n")
    print("| evidence kind | in correct strong matches | in wrong strong matches | precision | recall (share of positives it helped find) |")
    print("|---|---:|---:|---:|---:|")
    for kind in KINDS:
        right, wrong = used_right[kind], used_wrong[kind]
        prec = right / (right + wrong) if right + wrong else float("nan")
        rec = matched_in_positive[kind] / len(positives) if positives else float("nan")
        print(f"| {kind} | {right} | {wrong} | {prec:.3f} | {rec:.3f} |")


def speed() -> None:
    from xlakb.triage import export, log_from_text, triage

    real = export(REPO)["records"]
    rng = random.Random(7)
    records = list(real)
    words = ["shard", "mesh", "tensor", "buffer", "graph", "lower", "compile", "device", "alias", "donate", "step"]
    while len(records) < 1000:
        n = len(records)
        w = "_".join(rng.sample(words, 3))
        records.append({
            "id": f"synthetic-{n}", "title": {"en": w, "zh": w}, "status": "fixed", "fixed_in": "2.7.0", "affected": ">=2.4",
            "workaround": {"en": "-", "zh": "-"}, "measured": {"2.5.1": "reproduced"},
            "signatures": [
                {"kind": "message", "pattern": rf"RuntimeError: {w} failed at step \d+", "file": "", "function": "", "name": ""},
                {"kind": "check", "pattern": rf"Check failed: {w}_{n}\(\)", "file": "", "function": "", "name": ""},
                {"kind": "frame", "pattern": "", "file": rf"{w}\.py", "function": "__init__|forward", "name": ""},
                {"kind": "call", "pattern": rf"{w}_{n}\(", "file": "", "function": "", "name": ""},
            ],
        })
    lines = []
    size = 0
    i = 0
    while size < 1_000_000:
        line = (f"2026-11-02 10:{i % 60:02d}:{i % 60:02d}.{i:06d}: I torch_xla/csrc/runtime/pjrt_computation_client.cc:{i % 900}] "
                f"Executing computation {i}" if i % 7 == 0 else f"epoch 0 step {i} loss {1 / (i + 1):.6f} lr 0.0003 tokens/s 12345.6")
        lines.append(line)
        size += len(line) + 1
        i += 1
    lines.append(open(sorted((CORPUS / "positive").glob("fsdpv2-scalar-param-unhashable-list@*.log"))[0]).read())
    text = "\n".join(lines)
    log = log_from_text(text, "bench")
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        result = triage(log, records)
        best = min(best, time.perf_counter() - start)
    assert result.strong and result.strong[0].id == "fsdpv2-scalar-param-unhashable-list"
    print(f"\nspeed: a {len(text) / 1e6:.2f} MB log against {len(records)} records: {best:.3f} s (best of 5; target < 1 s)")


def main() -> int:
    corpus_scores()
    speed()
    return 0


if __name__ == "__main__":
    sys.exit(main())
