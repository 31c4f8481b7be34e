"""``xlakb mine``: proven bugs from pytorch/xla's own fixes.

1. :func:`find` reads a clone: the commits that change a test between two releases, their class
   (``data/mine_rules.yaml``), the test functions each one added or changed, what those need (a CPU machine
   runs only some), how upstream's CPU test script runs them (a file it does not list: with the settings it
   gives every test), and the first release with the fix.
2. :func:`prove` runs each candidate test like a reproducer (:mod:`xlakb.mining.bundle`) on the release
   before the fix and on the first fixed release. It is proved only when it fails before and passes after.
3. :func:`record_for` makes a record of a proved candidate: its claims come from a 12-release matrix,
   measured like any record's by the caller (``xlakb mine`` runs :func:`xlakb.matrix.measure`).

Every candidate keeps its outcome and why in ``mined/candidates.json`` (committed): the ones that did not
prove out are kept, with the reason, not thrown away. A second run takes up where the first stopped.

Library code: raises XlakbError, prints nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from packaging.version import Version

from ..errors import XlakbError
from ..progress import NullProgress, Progress
from ..published import md_code, scrub
from ..records import Record
from ..triage import signatures_from_log
from . import history, runscript, triggers

TABLE = Path("mined") / "candidates.json"
#: a person's reading of fixes' diffs: what their proved tests show, overriding the rules (see load_review)
REVIEW = Path("mined") / "review.yaml"
#: test-only packages of upstream's tests, a layer on top of the release environment; setuptools because
#: upstream's CI images have it and torch 2.6 and 2.9 no longer bring it, while torch.utils.cpp_extension
#: (imported by upstream's test_operations.py) and dynamo's guards import it
TEST_PACKAGES = ("expecttest", "absl-py", "pytest", "setuptools")
#: a test file importing one of these needs what the release environments do not have
HEAVY_IMPORTS = {
    "jax": "jax",
    "torchax": "torchax",
    "tensorflow": "tensorflow",
    "transformers": "transformers",
    "requests": "network",
    "libtpu": "tpu",
}
OUTCOMES = ("proved", "passes-before", "fails-after", "untestable", "error", "excluded", "pending")


@dataclass
class Mined:
    """One candidate: a test function a commit added or changed (or a commit left out, without a test)."""

    commit: str
    pr: int | None
    subject: str
    date: str
    cls: str
    path: str = ""
    test: str = ""
    line: int = 0
    fixed_in: str | None = None
    before: str | None = None
    shipped: str = ""
    env: dict = field(default_factory=dict)
    packages: list = field(default_factory=list)
    status: str = "pending"
    reason: str = ""
    verdicts: dict = field(default_factory=dict)  # release -> [verdict, detail]
    failure: str = ""  # the XLAKB-TRIGGER line measured before the fix
    record: str = ""  # the record made of it, or the existing record it proves again
    test_commit: str = ""  # where the test is taken from, when not the fix (the first fixed release's tag)
    triage: str = ""  # of its record: "signatures" (taken from its measured failure) or "none" (nothing to take)
    kind: str = ""  # of a proved one: "bug", "limitation" or "neither" (see kinds in data/mine_rules.yaml)
    kind_rule: str = ""  # what decided it: a rule's name, "review" (mined/review.yaml), "" (no rule: a bug)
    kind_reason: str = ""
    rule_kind: str = ""  # what the rules alone say, kept beside a review that overrides them

    @property
    def key(self) -> str:
        return f"{self.commit[:12]}:{self.path}::{self.test}" if self.test else self.commit[:12]

    @property
    def trigger(self) -> dict:
        return {
            "repo": "pytorch/xla",
            "commit": self.test_commit or self.commit,
            "path": self.path,
            "test": self.test,
            "line": self.line,
        }


def _imports(source: str) -> set[str]:
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {name for node in ast.walk(tree) for name in _imported(node)}


def _imported(node) -> list[str]:
    """The top-level names an ``import`` statement imports (none for a relative one or another statement)."""
    import ast

    if isinstance(node, ast.Import):
        return [a.name.split(".")[0] for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module.split(".")[0]]
    return []


def _imports_at_load(source: str) -> set[str]:
    """The top-level names a module imports when it is loaded: statements of its body (and of the blocks in
    it), not those inside a function or class, nor those guarded by a ``try`` that catches their absence
    (``has_tf_package()`` in upstream's test helpers imports tensorflow only when asked, if it is there)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()

    def guarded(node: ast.Try) -> bool:
        for h in node.handlers:
            caught = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            if h.type is None or any(getattr(t, "id", "") in ("ImportError", "ModuleNotFoundError", "Exception") for t in caught):
                return True
        return False

    def walk(body) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update(_imported(node))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            elif isinstance(node, ast.Try) and guarded(node):
                walk(node.orelse)
                walk(node.finalbody)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        walk(inner)

    walk(tree.body)
    return names


def _imports_with_helpers(source: str, path: str, read: Callable[[str], str | None], depth: int = 3) -> set[str]:
    """The top-level names a test module imports, and those its own helpers import when loaded (a module of its
    folder, of ``test/`` or of ``examples/`` at the same commit, as upstream's tests find them on sys.path),
    ``depth`` levels down: `test_profiler.py` needs torchvision because the helper it imports does."""
    names = _imports(source)
    seen, frontier = {path}, [(path, source)]
    for _ in range(depth):
        found = []
        for where, text in frontier:
            folder = where.rsplit("/", 1)[0]
            for name in sorted(_imports(text)):
                for candidate in (f"{folder}/{name}.py", f"test/{name}.py", f"examples/{name}.py"):
                    if candidate in seen:
                        break
                    helper = read(candidate)
                    if helper is not None:
                        seen.add(candidate)
                        names |= _imports_at_load(helper)
                        found.append((candidate, helper))
                        break
        frontier = found
    return names


def find(repo, start: str, end: str, published: list[str], progress: Progress | None = None) -> list[Mined]:
    """Every commit changing a test between releases ``start`` and ``end`` of ``repo``, as candidates: one per
    test function a minable commit changed that a CPU machine can run (status ``pending``), and the rest
    ``excluded`` with why."""
    progress = progress or NullProgress()
    progress.info(f"reading the history of {repo}")
    hist = history.test_commits(repo, start, end)
    shipped = history.first_releases(repo, hist)
    order = sorted(published, key=Version)
    undone = history.reverts(hist)

    def reverted_in(sha: str, release: str, depth: int = 0) -> history.Commit | None:
        """The revert of ``sha`` that ``release`` (or an earlier one) ships, unless that revert was itself
        reverted there: then ``release`` does not have the commit's change."""
        r = undone.get(sha)
        ship = shipped.get(r.sha) if r is not None else None
        first = ship.first_of(order) if ship else None
        if r is None or first is None or Version(first) > Version(release) or depth > 4:
            return None
        return None if reverted_in(r.sha, release, depth + 1) else r

    out: list[Mined] = []
    for n, c in enumerate(hist.commits):
        progress.step(n, len(hist.commits), f"{c.sha[:10]} {c.subject[:60]}")
        cls, minable = triggers.classify(c.subject, c.body)
        base = dict(commit=c.sha, pr=c.pr, subject=c.subject, date=c.date, cls=cls)
        ship = shipped.get(c.sha)
        fixed = ship.first_of(order) if ship else None
        before = order[order.index(fixed) - 1] if fixed and order.index(fixed) > 0 else None
        base.update(fixed_in=fixed, before=before, shipped=ship.how if ship else "")
        if not minable:
            out.append(Mined(**base, status="excluded", reason=f"class {cls}: not a change of behaviour a user meets"))
            continue
        if fixed is None:
            out.append(Mined(**base, status="excluded", reason="in no published release yet"))
            continue
        if before is None:
            out.append(Mined(**base, status="excluded", reason=f"first released in {fixed}, the oldest release measured"))
            continue
        revert = reverted_in(c.sha, fixed)
        if revert is not None:
            out.append(
                Mined(
                    **base,
                    status="excluded",
                    reason=f'reverted by "{revert.subject[:80]}" before {fixed} '
                    "shipped it: the fix that shipped is a later commit (its re-land)",
                )
            )
            continue
        script = history.show_file(repo, c.sha, "test/run_tests.sh") or ""
        found = 0
        files: dict[str, str | None] = {}  # the commit's helper modules, read once for all its test files

        def read(name: str, sha: str = c.sha) -> str | None:
            if name not in files:
                files[name] = history.show_file(repo, sha, name)
            return files[name]

        for path in c.test_files:
            source = history.show_file(repo, c.sha, path)
            if source is None:
                continue
            imported = _imports_with_helpers(source, path, read)
            heavy = sorted({HEAVY_IMPORTS[m] for m in imported if m in HEAVY_IMPORTS})
            old_path = history.renamed_from(repo, c.sha, path) or path
            added, removed = history.changed_lines(repo, c.sha, path, old_path)
            parent = history.show_file(repo, f"{c.sha}^1", old_path) if removed else None
            for t in triggers.changed_tests(source, path, added, parent, removed):
                found += 1
                row = Mined(**base, path=path, test=t.test, line=t.first_line)
                need = triggers.needs(t) + heavy
                env = runscript.test_env(script, path)
                if need:
                    row.status, row.reason = "excluded", f"needs {', '.join(dict.fromkeys(need))}"
                elif triggers.fallback_only(t):
                    row.status, row.reason = "excluded", "checks which ops fell back (metrics counters): speed, not a failure"
                else:
                    # a file upstream's CPU script does not list (its TPU or GPU job may) is still tried, with the
                    # settings the script gives every test: what it needs shows when it runs (a skip, a missing
                    # device comes back untestable), and only a failure before and a pass after proves it
                    row.env = env if env is not None else runscript.exported(script)
                    row.packages = list(TEST_PACKAGES) + (["torchvision"] if "torchvision" in imported else [])
                out.append(row)
        if not found:
            out.append(Mined(**base, status="excluded", reason="changes no test function (helpers or data only)"))
    progress.step(len(hist.commits), len(hist.commits), f"{len(out)} candidates")
    return out


def load_review(root: Path) -> dict[int, dict]:
    """``mined/review.yaml``: per fix PR, what a person read in its diff: ``kind`` (bug, limitation, neither),
    ``reason``, ``credited_fix`` (the change whose diff removes the failure), ``record`` (where its proofs
    belong) and, when its tests differ, ``tests`` (the test names this entry is for). XlakbError naming the
    file and the entry when one is malformed."""
    import yaml

    path = root / REVIEW
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text("utf-8")) or {}
    except yaml.YAMLError as err:
        raise XlakbError(f"{REVIEW}: malformed YAML: {str(err).splitlines()[0]}") from None
    out: dict[int, dict] = {}
    for n, entry in enumerate(data.get("reviews") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("pr"), int):
            raise XlakbError(f"{REVIEW}: reviews[{n}]: each entry names its fix (pr: N)")
        if entry.get("kind") not in triggers.KINDS:
            raise XlakbError(
                f"{REVIEW}: reviews[{n}] (#{entry['pr']}): kind {entry.get('kind')!r} is not one of {', '.join(triggers.KINDS)}"
            )
        if not str(entry.get("reason") or "").strip():
            raise XlakbError(f"{REVIEW}: reviews[{n}] (#{entry['pr']}): a decision says why (reason)")
        out.setdefault(entry["pr"], []).append(entry)
    return out


def judge_kinds(root: Path, repo, rows: list[Mined]) -> list[tuple[str, str, str]]:
    """Set what each proved candidate shows (``kind``, ``kind_rule``, ``kind_reason``; the rules' own answer in
    ``rule_kind``): the rules of ``kinds`` over its failure, its test's text at the commit it is taken from,
    its settings and its fix; a review of its fix overrides them. Returns the (key, was, now) of the rows
    whose kind changed."""
    review = load_review(root)
    changed = []
    texts: dict[tuple[str, str], str] = {}
    changed_by: dict[str, tuple[str, ...]] = {}
    for m in rows:
        if m.status != "proved":
            continue
        where = (m.test_commit or m.commit, m.path)
        if where not in texts:
            texts[where] = history.show_file(repo, *where) or "" if repo is not None else ""
        found = next((t for t in triggers.test_functions(texts[where], m.path) if t.test == m.test), None)
        if m.commit not in changed_by and repo is not None:
            changed_by[m.commit] = tuple(history.changed_files(repo, m.commit))
        by_rule = triggers.kind_of(
            m.failure, found.text if found else "", tuple(sorted(m.env)), m.path, m.subject, changed_by.get(m.commit)
        )
        was = m.kind
        m.rule_kind = by_rule.kind
        m.kind, m.kind_rule, m.kind_reason = by_rule.kind, by_rule.rule, by_rule.reason
        for entry in review.get(m.pr or -1, []):
            if entry.get("tests") in (None, "all") or m.test in entry["tests"]:
                m.kind, m.kind_rule, m.kind_reason = entry["kind"], "review", entry["reason"].strip()
                break
        if was != m.kind:
            changed.append((m.key, was, m.kind))
    return changed


def signature_for(test: str) -> str:
    """The reproducer signature of a mined record: its test failed, raised or crashed (the runner's last line)."""
    return rf"XLAKB-TRIGGER (FAILED|ERROR|CRASHED) {re.escape(test)}: "


def probe_record(root: Path, m: Mined, timeout: int = 300) -> Record:
    """A record in memory for probing a candidate (the record written for a proved one is :func:`record_for`)."""
    import hashlib

    devices = int(m.env.get("CPU_NUM_DEVICES", "1") or 1)
    env = {k: v for k, v in m.env.items() if k not in ("CPU_NUM_DEVICES", "PJRT_DEVICE")}
    data = {
        "id": "mined-probe-" + hashlib.sha256(m.key.encode()).hexdigest()[:16],
        "source": "mined",
        "environment": {"hardware": "cpu", "devices": devices, "env": env, "packages": list(m.packages)},
        "reproducer": {"trigger": m.trigger, "fidelity": "exact", "timeout": timeout, "signatures": [signature_for(m.test)]},
        "versions": {"affected": f"<{m.fixed_in}"},
    }
    return Record(root / "mined" / "drafts" / f"{data['id']}.yaml", data)


def judge(m: Mined) -> tuple[str, str]:
    """A candidate's outcome from its verdicts before and after the fix."""
    before = m.verdicts.get(m.before or "")
    after = m.verdicts.get(m.fixed_in or "")
    if not before or not after:
        return "pending", ""
    (bv, bd), (av, ad) = before, after
    if bv == "untestable":
        return "untestable", f"on {m.before}: {bd}"
    if bv == "error":
        return "error", f"on {m.before}: {bd}"
    if bv == "not-reproduced":
        return "passes-before", f"passes on {m.before}, the release before the fix"
    if av == "reproduced":
        return "fails-after", f"fails on {m.fixed_in} too, the first release with the fix: {ad}"
    if av != "not-reproduced":
        return ("untestable" if av == "untestable" else "error"), f"on {m.fixed_in}: {ad}"
    return "proved", f"fails on {m.before} ({bd}), passes on {m.fixed_in}"


def prove(
    root: Path,
    rows: list[Mined],
    backend,
    *,
    progress: Progress | None = None,
    on_row: Callable[[Mined], None] | None = None,
    **batch,
) -> int:
    """Probe every pending candidate of ``rows`` on the release before its fix and the first with it, and set
    its status as the verdicts arrive (``on_row`` is called with each decided row). ``batch``: the options of
    :func:`xlakb.matrix.run_batch` (jobs, executor, cache, find_links, index_url). Returns the number of probes
    asked for (a cached verdict counts: it was a probe once)."""
    from ..candidates.releases import release
    from ..matrix import run_batch

    pending = [m for m in rows if m.status == "pending"]
    by_record: dict[str, Mined] = {}
    pairs = []
    for m in pending:
        rec = probe_record(root, m)
        by_record[rec.id] = m
        pairs += [(rec, release(m.before)), (rec, release(m.fixed_in))]

    def arrived(rec: Record, res) -> None:
        m = by_record[rec.id]
        line = _failure_line(res.log) if res.verdict.value == "reproduced" else ""
        # a failure is kept with the runner's line (its error), not the part of it the signature matched
        m.verdicts[res.candidate] = [res.verdict.value, f"{res.detail.split(',')[0]}: {line}" if line else res.detail]
        if res.candidate == m.before and res.verdict.value == "reproduced":
            m.failure = line or res.detail
        status, reason = judge(m)
        if status != "pending":
            m.status, m.reason = status, reason
            if on_row is not None:
                on_row(m)

    if pairs:
        run_batch(pairs, backend, progress=progress, on_result=arrived, **batch)
    return len(pairs)


def retry_at_release(repo, rows: list[Mined]) -> list[Mined]:
    """The candidates untestable before their fix because the fix's copy of the test calls an API the old
    release lacks, set to try the test as the first fixed release ships it (its tag), when that copy has the
    test; they are pending again. The others stay as they are."""
    tags = dict(history.release_tags(repo))
    again = []
    for m in rows:
        if m.status != "untestable" or m.test_commit or m.fixed_in not in tags or "API" not in m.reason:
            continue
        source = history.show_file(repo, tags[m.fixed_in], m.path)
        if source is None or m.test not in {t.test for t in triggers.test_functions(source, m.path)}:
            continue
        found = next(t for t in triggers.test_functions(source, m.path) if t.test == m.test)
        m.test_commit, m.line = tags[m.fixed_in], found.first_line
        m.status, m.reason, m.verdicts = "pending", "", {}
        again.append(m)
    return again


def _failure_line(log: str) -> str:
    try:
        text = Path(log).read_text("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln for ln in text.splitlines() if ln.startswith("XLAKB-TRIGGER ")]
    return scrub(lines[-1])[:300] if lines else ""


# -- the table --------------------------------------------------------------------------------------------
def load_table(root: Path) -> list[Mined]:
    path = root / TABLE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
        return [Mined(**row) for row in data["candidates"]]
    except (ValueError, KeyError, TypeError) as err:
        raise XlakbError(
            f"{path}: not a table of mined candidates ({err})",
            hint="it is written by xlakb mine; restore it from git or remove it to start over",
        ) from None


def save_table(root: Path, rows: list[Mined], meta: dict) -> Path:
    """Write the table (sorted by commit date and key, so a new run makes a readable diff)."""
    path = root / TABLE
    path.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    for m in rows:
        counts[m.status] = counts.get(m.status, 0) + 1
    body = {
        **meta,
        "counts": dict(sorted(counts.items())),
        "candidates": [asdict(m) for m in sorted(rows, key=lambda m: (m.date, m.key))],
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=1, ensure_ascii=False, sort_keys=False) + "\n", "utf-8")
    tmp.replace(path)
    return path


def merge(old: list[Mined], new: list[Mined]) -> list[Mined]:
    """The candidates found now, each keeping what an earlier run measured of it (same key). An exclusion is
    not measured: it is what the rules of this run say (a row the old rules left out is pending now)."""
    kept = {m.key: m for m in old}
    out = []
    for m in new:
        before = kept.get(m.key)
        if before is not None and before.status not in ("pending", "excluded") and m.status == "pending":
            m.status, m.reason, m.verdicts, m.failure, m.record = (
                before.status,
                before.reason,
                before.verdicts,
                before.failure,
                before.record,
            )
            m.test_commit, m.line = before.test_commit, before.line if before.test_commit else m.line
            m.triage = before.triage
        out.append(m)
    return out


# -- records ----------------------------------------------------------------------------------------------
COMPONENTS = (
    ("test/spmd/", "spmd"),
    ("test/dynamo/", "dynamo"),
    ("test/pjrt/", "runtime"),
    ("test/ds/", "dynamic-shape"),
    ("test/debug_tool", "debug"),
    ("test/test_mp_", "distributed"),
    ("test/distributed", "distributed"),
    ("test/eager", "eager"),
    ("test/scan", "scan"),
    ("test/test_autocast", "amp"),
    ("test/stablehlo", "stablehlo"),
    ("test/", "ops"),
)


def record_id(m: Mined) -> str:
    name = m.test.split(".")[-1]
    slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"^test_?", "", name).lower()).strip("-") or "test"
    head = f"mined-pr{m.pr}" if m.pr else f"mined-{m.commit[:8]}"
    return f"{head}-{slug}"[:80].rstrip("-")


def _spec(reproduced: list[str], fixed: str) -> str:
    """The affected releases as a specifier: from the oldest measured reproduced to the fix."""
    return f">={reproduced[0]},<{fixed}" if reproduced else f"<{fixed}"


def record_for(m: Mined, reproduced: list[str]) -> dict:
    """The record of a proved candidate: what failed, on which releases, fixed by which PR. The text is a
    draft from templates in both languages (``mined.draft: true``) a person can rewrite into the full story;
    ``reproduced`` is what the candidate's own matrix measured, oldest first."""
    subject = re.sub(r"\s*\(#\d+\)\s*$", "", m.subject).strip()
    pr = f"PR #{m.pr}" if m.pr else f"commit {m.commit[:10]}"
    first = reproduced[0] if reproduced else m.before
    last = reproduced[-1] if reproduced else m.before
    span_en = f"{first}" if first == last else f"{first} to {last}"
    span_zh = f"{first}" if first == last else f"{first} 到 {last}"
    failure = m.failure or f"XLAKB-TRIGGER FAILED {m.test}"
    shown = failure.split(": ", 1)[1] if ": " in failure else failure
    component = next(c for prefix, c in COMPONENTS if m.path.startswith(prefix))
    link = f"https://github.com/pytorch/xla/blob/{m.commit}/{m.path}#L{m.line}"
    devices = int(m.env.get("CPU_NUM_DEVICES", "1") or 1)
    env = {k: v for k, v in m.env.items() if k not in ("CPU_NUM_DEVICES", "PJRT_DEVICE")}
    data = {
        "id": record_id(m),
        "source": "mined",
        "title": {
            "en": f"{subject} (upstream test {m.test.split('.')[-1]} fails before {pr})",
            "zh": f"{_code(subject)}（上游测试 {m.test.split('.')[-1]} 在 {pr} 之前失败）",
        },
        "summary": {
            "en": (
                f'The upstream regression test {m.test} in {m.path}, added or changed by {pr} ("{subject}"), '
                f"fails on torch_xla {span_en} and passes from {m.fixed_in} on, as measured on CPU with the "
                f"release wheels. The failure before the fix: {shown}"
            ),
            "zh": (
                f"{pr}（{_code(subject)}）新增或修改了 {m.path} 中的上游回归测试 {m.test}。在 CPU 上用发布的 wheel "
                f"实测：它在 torch_xla {span_zh} 上失败，从 {m.fixed_in} 起通过。修复前的失败信息：{_code(shown)}"
            ),
        },
        "symptoms": {"en": [f"{m.test} fails: {shown}"], "zh": [f"{m.test} 失败：{_code(shown)}"]},
        "root_cause": {
            "en": (
                f'Not yet written up by a person. The fix is {pr}, "{subject}"; its diff shows the cause. This '
                f"record was mined from that fix and its test by xlakb mine."
            ),
            "zh": (
                f"尚无人撰写详细分析。修复是 {pr}（{_code(subject)}），其改动说明了原因。本记录由 xlakb mine 从该修复及其"
                f"测试自动挖掘而来。"
            ),
        },
        "workaround": {"en": f"Upgrade to torch_xla {m.fixed_in} or later.", "zh": f"升级到 torch_xla {m.fixed_in} 或更高版本。"},
        "status": "fixed",
        "component": component,
        "tags": ["mined", m.cls],
        "upstream": {"repo": "pytorch/xla", "issues": [], **({"fixed_by": [m.pr]} if m.pr else {}), "links": [link]},
        "environment": {"hardware": "cpu", "devices": devices, **({"env": env} if env else {}), "packages": list(m.packages)},
        "reproducer": {"trigger": m.trigger, "fidelity": "exact", "timeout": 300, "signatures": [signature_for(m.test)]},
        "versions": {"affected": _spec(reproduced, m.fixed_in), "fixed_in": m.fixed_in},
        "mined": {
            "commit": m.commit,
            **({"pr": m.pr} if m.pr else {}),
            "subject": m.subject,
            "date": m.date,
            "class": m.cls,
            "shipped": m.shipped,
            "draft": True,
        },
    }
    return data


def _code(text: str) -> str:
    """An upstream subject or a test's failure quoted on a Chinese page, on one line: a literal the reader
    searches for, not an English sentence of ours."""
    text = " ".join(text.split())
    return md_code(text) if text else text


def triage_signatures(log: str) -> list[dict]:
    """What ``xlakb triage`` looks for in a user's paste of a mined bug, taken from the log of its failure
    before the fix (as ``xlakb new --from-log`` does): the error line and the checks, and the innermost
    torch_xla frame that is not an entry. The test's own calls and settings are upstream's test code, not a
    user's: left out. Empty when there is no check or torch_xla frame, since an error line alone names no
    bug (an assertion of the test, a generic RuntimeError): such a record is not offered to triage."""
    log = _failure_block(log)
    log = "\n".join(ln for ln in log.splitlines() if not ln.startswith("XLAKB-TRIGGER "))  # our runner's summary
    sigs = [
        s
        for s in signatures_from_log(log)
        if set(s) & {"message", "check", "frame"} and not str(s.get("message", "")).startswith("AssertionError")
    ]  # the test's own assertion
    return sigs if any("message" not in s for s in sigs) else []


def _failure_block(log: str) -> str:
    """The part of a test's log that holds the failure our runner reported (its last line says which): the
    unittest block of that failure when the test failed in several ways (a fallback check and an export
    error, subtests), else the whole log."""
    m = re.search(r"^XLAKB-TRIGGER (?:FAILED|ERROR) \S+: (.+)$", log, re.MULTILINE)
    if not m:
        return log
    reported = m.group(1).strip()[:80]
    for block in re.split(r"^={20,}$", log, flags=re.MULTILINE)[1:]:
        if reported in block:
            return block.split("\n" + "-" * 70 + "\nRan ", 1)[0]
    return log


def _failure_signatures(res) -> list[dict] | None:
    """:func:`triage_signatures` of a probe's log (none without a probe or a log); None when the log cannot
    be read."""
    try:
        log = Path(res.log).read_text("utf-8", errors="replace") if res is not None and res.log else ""
    except OSError:
        return None
    return triage_signatures(log)


def _insert_after(data: dict, key: str, new_key: str, value) -> dict:
    out = {}
    for k, v in data.items():
        out[k] = v
        if k == key:
            out[new_key] = value
    return out


def full_matrices(root: Path, rows: Sequence[Mined], backend, *, progress: Progress | None = None, **batch) -> dict[str, list]:
    """Each candidate of ``rows`` measured on every release, by candidate key, in one batch release after
    release: one release's environment and warm server serve all its probes, instead of twelve environments
    taken up again for each candidate."""
    from ..candidates.releases import releases_between
    from ..matrix import run_batch

    probes = {m.key: probe_record(root, m) for m in rows}
    pairs = [(probe, c) for probe in probes.values() for c in releases_between()]
    measured = run_batch(pairs, backend, progress=progress, **batch) if pairs else []
    key_of = {probe.id: key for key, probe in probes.items()}
    out: dict[str, list] = {}
    for (probe, _), res in zip(pairs, measured):
        out.setdefault(key_of[probe.id], []).append(res)
    return out


def matrix_rows(results: Sequence) -> list[dict]:
    """Probe results as the matrix rows :func:`reproduced_span` reads."""
    return [{"candidate": r.candidate, "kind": r.kind, "verdict": r.verdict.value} for r in results]


def no_span(why: str) -> str:
    """Why a candidate proved before/after is no record: its full matrix does not make one span."""
    return f"proved before/after, but its full matrix {why}: no record"


def reproduced_span(rows: Sequence[dict], m: Mined) -> tuple[list[str], str]:
    """From a candidate's measured matrix rows: the releases it failed on (oldest first), and "" when they
    make one span ending before the fix with every later release passing, else why not."""
    order = sorted((Version(r["candidate"]), r["candidate"], r["verdict"]) for r in rows if r.get("kind", "release") == "release")
    failed = [v for _, v, verdict in order if verdict == "reproduced"]
    if not failed:
        return [], "failed on no release in the full matrix"
    after = [v for key, v, verdict in order if key >= Version(m.fixed_in) and verdict == "reproduced"]
    if after:
        return failed, f"fails again on {', '.join(after)}, after the fix"
    inside = [v for key, v, verdict in order if Version(failed[0]) <= key <= Version(failed[-1]) and verdict == "not-reproduced"]
    if inside:
        return failed, f"passes on {', '.join(inside)} between releases where it fails"
    return failed, ""


def write_record(root: Path, data: dict, kind: str = "draft") -> Path:
    """Write a record's YAML in its kind's folder (a mined one is a draft, under ``mined/drafts/``, until a
    person writes it up), the schema line first, keys in the order given."""
    import yaml

    from ..records import FOLDERS, SCHEMA_COMMENT

    path = root / FOLDERS[kind] / f"{data['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110, default_flow_style=False)
    path.write_text(SCHEMA_COMMENT + "\n" + text, "utf-8")
    return path


@dataclass
class Outcome:
    """What a mining run did: the table, the records it wrote, the existing records it proved again (and any
    disagreement with their own matrix)."""

    table: Path
    rows: list[Mined]
    written: list[str] = field(default_factory=list)
    attached: list[tuple[str, str]] = field(default_factory=list)  # (record id, "agrees" or the disagreement)
    left: list[tuple[str, str]] = field(default_factory=list)  # (candidate key, why no record)
    signed: list[str] = field(default_factory=list)  # records given triage signatures from a measured failure


def run(
    root: Path,
    repo,
    start: str,
    end: str,
    backend,
    *,
    progress: Progress | None = None,
    limit: int | None = None,
    find_only: bool = False,
    records: bool = True,
    retry: tuple[str, ...] = (),
    **batch,
) -> Outcome:
    """``xlakb mine``: find the candidates (kept in ``mined/candidates.json`` with what earlier runs measured),
    prove the pending ones (at most ``limit``), and make a record of each proved one that no record covers
    (its 12-release matrix and release bisection measured) or attach the proof to the record that does.
    ``retry``: outcomes (``error``, ``untestable`` ...) to prove again, after the runner or the rules changed."""
    from ..candidates.releases import releases_between
    from ..records import ALL_KINDS, load_records

    progress = progress or NullProgress()
    published = [c.label for c in releases_between()]
    meta = {"repo": "pytorch/xla", "from": start, "to": end, "rules": "src/xlakb/data/mine_rules.yaml"}
    try:  # what the last run that probed spent stays until another run probes
        meta["last_run"] = json.loads((root / TABLE).read_text("utf-8"))["last_run"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    rows = merge(load_table(root), find(repo, start, end, published, progress))
    for m in rows:
        # a proved candidate is proved again only while no record was made of it: a record, once written,
        # is changed by a person (or removed with its matrix), never behind their back
        if m.status in retry and m.status not in ("excluded", "pending") and not (m.status == "proved" and m.record):
            m.status, m.reason, m.verdicts, m.failure = "pending", "", {}, ""
    judge_kinds(root, repo, rows)
    table = save_table(root, rows, meta)
    out = Outcome(table, rows)
    if find_only:
        return out
    todo = [m for m in rows if m.status == "pending"][:limit] if limit else [m for m in rows if m.status == "pending"]
    progress.info(f"{len(todo)} candidate test(s) to prove, two probes each")
    started, spent = time.time(), []
    account = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(started)),
        "candidates": len(rows),
        "proved_now": 0,
        "records_now": 0,
        "probes": 0,
        "seconds": 0,
    }
    meta["last_run"] = account

    def tally() -> None:
        account["probes"], account["seconds"] = sum(spent), round(time.time() - started)

    spent.append(prove(root, todo, backend, progress=progress, on_row=lambda m: save_table(root, rows, meta), **batch))
    again = retry_at_release(repo, todo)
    if again:
        progress.info(
            f"{len(again)} test(s) need an API the release before the fix lacks: trying them as the "
            "first fixed release ships them"
        )
        spent.append(prove(root, again, backend, progress=progress, on_row=lambda m: save_table(root, rows, meta), **batch))
    account["proved_now"] = sum(1 for m in todo if m.status == "proved")
    judge_kinds(root, repo, rows)
    tally()
    save_table(root, rows, meta)
    if not records:
        return out
    existing = load_records(root, ALL_KINDS)
    by_pr: dict[int, list[Record]] = {}
    for rec in existing:
        for n in rec.data["upstream"].get("fixed_by", []):
            by_pr.setdefault(n, []).append(rec)
    same = same_proof(rows)
    # a test of wording, a counter, a patch or expected text proves no bug and no limitation: no record
    proved = [m for m in rows if m.status == "proved" and not m.record and m.key not in same and m.kind != "neither"]
    covering = {m.key: [r for r in by_pr.get(m.pr or -1, []) if r.source != "mined"] for m in proved}
    new = {m.key for m in proved if not covering[m.key]}
    if new:
        progress.info(f"{len(new)} proved candidate(s) without a record: measuring each on every release")
    measured = full_matrices(root, [m for m in proved if m.key in new], backend, progress=progress, **batch)
    spent.append(sum(len(v) for v in measured.values()))
    for n, m in enumerate(proved):
        progress.step(n, len(proved), f"record of {m.key}")
        if covering[m.key]:
            for rec in covering[m.key]:
                out.attached.append((rec.id, attach_proof(root, rec, m)))
            m.record = covering[m.key][0].id
            continue
        made = make_record(root, m, backend, progress=progress, spent=spent, results=measured.get(m.key), **batch)
        if made is None:
            out.left.append((m.key, m.reason))
        else:
            out.written.append(made)
        account["records_now"] = len(out.written)
        tally()
        save_table(root, rows, meta)
    for m in rows:
        owner = same.get(m.key)
        if owner is not None and owner.status == "proved" and owner.record:
            m.record = owner.record
            m.reason = (
                f"{m.reason}; the same copy of the test proves {owner.subject[:60]} too (both changed it "
                f"before {m.fixed_in}): one bug, recorded once, in {owner.record}"
            )
    out.signed = add_triage_signatures(root, rows, backend, progress=progress, **batch)
    tally()
    save_table(root, rows, meta)
    return out


REJUDGED = Path("mined") / "rejudged.json"


def rejudge(root: Path, repo, backend, *, progress: Progress | None = None, **batch) -> list[dict]:
    """Run every measured candidate of the table again with the runner and rules of today (after a change of
    either) and list what changed: its key, test, old and new outcome and why. The table takes the new
    outcomes; a record whose proof no longer holds keeps its file (a person decides) and is named in the
    change. The list is written to ``mined/rejudged.json`` beside the table."""
    import hashlib
    from importlib import resources

    progress = progress or NullProgress()
    rows = load_table(root)
    meta = {k: v for k, v in json.loads((root / TABLE).read_text("utf-8")).items() if k not in ("counts", "candidates")}
    todo = [m for m in rows if m.test and m.status not in ("excluded", "pending")]
    fresh = [replace(m, status="pending", reason="", verdicts={}, failure="") for m in todo]
    progress.info(f"{len(fresh)} measured candidate(s) to judge again, two probes each")
    started = time.time()
    probes = prove(root, fresh, backend, progress=progress, **batch)
    # a proof stands as a run makes it: newly proved (or proved before only until its full matrix failed
    # again), it is measured on every release, and a span that does not end at the fix is no proof
    again = [
        (old, new)
        for old, new in zip(todo, fresh)
        if new.status == "proved" and (old.status != "proved" or old.reason.startswith("proved before/after, but"))
    ]
    if again:
        progress.info(f"{len(again)} newly proved candidate(s): measuring each on every release")
        measured = full_matrices(root, [new for _, new in again], backend, progress=progress, **batch)
        probes += sum(len(v) for v in measured.values())
        for _, new in again:
            _, why = reproduced_span(matrix_rows(measured.get(new.key, [])), new)
            if why:
                new.status, new.reason = "error", no_span(why)
    judge_kinds(root, repo, fresh)
    changes = []
    for old, new in zip(todo, fresh):
        if new.status != old.status:
            changes.append(
                {
                    "key": old.key,
                    "pr": old.pr,
                    "test": old.test,
                    "was": old.status,
                    "now": new.status,
                    "why": new.reason,
                    "before": old.reason,
                    "record": old.record,
                }
            )
        old.status, old.reason, old.verdicts, old.failure = new.status, new.reason, new.verdicts, new.failure
        old.kind, old.kind_rule, old.kind_reason, old.rule_kind = new.kind, new.kind_rule, new.kind_reason, new.rule_kind
    runner = hashlib.sha256((resources.files("xlakb") / "data" / "trigger_runner.py").read_bytes()).hexdigest()[:12]
    meta["rejudged"] = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(started)),
        "candidates": len(todo),
        "probes": probes,
        "seconds": round(time.time() - started),
        "changed": len(changes),
        "runner": runner,
    }
    save_table(root, rows, meta)
    path = root / REJUDGED
    path.write_text(json.dumps({**meta["rejudged"], "changes": changes}, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return changes


def same_proof(rows: Sequence[Mined]) -> dict[str, Mined]:
    """Proved candidates that prove what another one proves: the same copy of the same test function (both
    taken from the first fixed release's tag), first passing in the same release, changed by several commits
    of that release (#6653 added the unbounded dynamism tests, #6781 then made `aten.embedding` export).
    Releases cannot tell their commits apart, so the test is one bug with one record: the one already
    written, else the latest commit's (the last change of the test before the release, usually the one that
    made it pass). Copies of different commits test different things (#7842 added fp8e4m3fn cases to #7740's
    fp8e5m2 test) and stay apart. Returns each other candidate's key with the candidate that owns the record."""
    groups: dict[tuple, list[Mined]] = {}
    for m in rows:  # oldest commit first, as found
        if m.status == "proved":
            groups.setdefault((m.path, m.test, m.fixed_in, m.test_commit or m.commit), []).append(m)
    out = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        recorded = [m for m in group if m.record and m.record.startswith("mined-")]
        owner = recorded[0] if recorded else group[-1]
        out.update({m.key: owner for m in group if m is not owner and m not in recorded})  # a written one stays
    return out


def make_record(
    root: Path,
    m: Mined,
    backend,
    *,
    progress: Progress | None = None,
    spent: list | None = None,
    results: list | None = None,
    **batch,
) -> str | None:
    """Measure a proved candidate on every release, and when its failures make one span before the fix, write
    its record, matrix and release bisection; None (with ``m.reason`` saying why) when they do not."""
    from ..bisection import Context, Options, save_report
    from ..candidates.releases import ReleaseSource
    from ..records import load_record
    from ..results import results_dir, save_matrix
    from ..runner import VerdictCache

    if results is None:  # (``results``: its 12 releases measured already, in a batch with other records)
        results = full_matrices(root, [m], backend, progress=progress, **batch).get(m.key, [])
        if spent is not None:
            spent.append(len(results))
    rows = matrix_rows(results)
    failed, why = reproduced_span(rows, m)
    if why:
        m.status, m.reason = "error", no_span(why)
        return None
    data = record_for(m, failed)
    if m.kind == "limitation":  # kept as what it is: a limitation lifted, drafted as one
        data = {"id": data["id"], "kind": "limitation", **{k: v for k, v in data.items() if k != "id"}}
    last = next((r for r in results if r.candidate == failed[-1] and r.kind == "release"), None)
    sigs = _failure_signatures(last) or []
    if sigs:  # after the symptoms, as a hand-written record has them
        data = _insert_after(data, "symptoms", "signatures", sigs)
    m.triage = "signatures" if sigs else "none"
    from ..records import FOLDERS

    if any((root / folder / f"{data['id']}.yaml").exists() for folder in FOLDERS.values()):
        data["id"] = f"{data['id'][:71]}-{m.commit[:8]}"
    write_record(root, data)
    rec = load_record(root, data["id"])
    save_matrix(root, rec, [replace(r, record=rec.id) for r in results], backend.name)
    ctx = Context(
        rec,
        backend,
        progress=progress or NullProgress(),
        cache=batch.get("cache") or VerdictCache(),
        options=Options(
            find_links=tuple(batch.get("find_links") or ()),
            index_url=batch.get("index_url"),
            command=f"xlakb mine (release bisection of {rec.id})",
        ),
    )
    source = ReleaseSource.from_options(ctx, {})
    engine = ctx.engine(source)
    try:
        reports = source.bisect(engine, *_bisect_ends(rows))
    except XlakbError as err:  # no record without its bisection: what was written of it goes again
        rec.path.unlink()
        shutil.rmtree(results_dir(root, rec.id), ignore_errors=True)
        m.status, m.reason = "error", f"proved before/after, but its release bisection failed: {err}"
        return None
    for report in reports:
        save_report(root, report)
    if spent is not None:
        spent.append(engine.probes_run)
    m.record = rec.id
    return rec.id


def _bisect_ends(rows: Sequence[dict]) -> tuple[str | None, str | None]:
    """The ends a mined record's release bisection must be given: none, unless the oldest or the newest
    release could not be judged at all (an error, e.g. a package the newest release's environment lacks),
    then the nearest release its matrix judged. (An untestable end is stepped over by the bisection itself.)"""
    order = sorted((Version(r["candidate"]), r["candidate"], r["verdict"]) for r in rows if r.get("kind", "release") == "release")
    judged = [label for _, label, verdict in order if verdict in ("reproduced", "not-reproduced")]
    if not order or not judged:
        return None, None
    start = judged[0] if order[0][2] == "error" else None
    end = judged[-1] if order[-1][2] == "error" else None
    return start, end


def add_triage_signatures(root: Path, rows: list[Mined], backend, *, progress: Progress | None = None, **batch) -> list[str]:
    """Mined records made before records carried triage signatures: run each once more on the last release
    its matrix says it fails on, and take the signatures from that log (:func:`triage_signatures`). Only
    drafts (``mined.draft: true``) are touched; a run that no longer fails changes nothing (tried again next
    time). The ids of the records that got signatures."""
    import yaml

    from ..candidates.releases import releases_between
    from ..matrix import run_batch
    from ..records import load_record
    from ..results import load_matrix

    todo = []
    for m in rows:
        path = root / "mined" / "drafts" / f"{m.record}.yaml"  # only drafts are touched
        if not m.record or m.triage or not path.exists():
            continue
        rec = load_record(root, m.record)
        if rec.source != "mined" or not rec.data.get("mined", {}).get("draft") or rec.data.get("signatures"):
            m.triage = m.triage or ("signatures" if rec.data.get("signatures") else "")
            continue
        failed = [
            r["candidate"]
            for r in (load_matrix(root, rec.id) or {}).get("results", [])
            if r.get("kind", "release") == "release" and r["verdict"] == "reproduced"
        ]
        release = max(failed, key=Version, default=None)
        cand = next((c for c in releases_between() if c.label == release), None)
        if cand is not None:
            todo.append((m, rec, cand))
    if not todo:
        return []
    (progress or NullProgress()).info(
        f"{len(todo)} mined record(s) without triage signatures: running each on "
        "its last failing release to read them from the failure"
    )
    results = run_batch([(rec, cand) for _, rec, cand in todo], backend, progress=progress, **batch)
    done = []
    for (m, rec, _), res in zip(todo, results):
        if res.verdict.value != "reproduced":
            continue
        sigs = _failure_signatures(res)
        if sigs is None:
            continue
        m.triage = "signatures" if sigs else "none"
        if sigs:
            data = yaml.safe_load(rec.path.read_text("utf-8"))
            write_record(root, _insert_after(data, "symptoms", "signatures", sigs))
            done.append(rec.id)
    return done


PROOFS = "proofs.json"


def add_proof(root: Path, record_id: str, proof: dict) -> None:
    """Keep one more proof of a record (``bisect/<id>/proofs.json``: upstream tests that show the same failure
    fixed by the same change), replacing an earlier proof by the same test."""
    from ..results import read_json, results_dir, write_json

    path = results_dir(root, record_id) / PROOFS
    kept = (read_json(path) or {}).get("proofs", [])
    test = proof["trigger"]["test"], proof["trigger"]["path"]
    kept = [p for p in kept if (p["trigger"]["test"], p["trigger"]["path"]) != test] + [proof]
    kept.sort(key=lambda p: (p.get("pr") or 0, p["trigger"]["test"]))
    write_json(path, {"record": record_id, "kind": "proofs", "proofs": kept})


def attach_proof(root: Path, rec: Record, m: Mined) -> str:
    """Keep a mined proof beside an existing record (``bisect/<id>/proofs.json``) and compare it with the
    record's own matrix: "agrees", or the disagreement."""
    from ..results import load_matrix

    own = {r["candidate"]: r["verdict"] for r in (load_matrix(root, rec.id) or {}).get("results", [])}
    notes = []
    for version, (verdict, _) in sorted(m.verdicts.items(), key=lambda kv: Version(kv[0])):
        theirs = own.get(version)
        if theirs is not None and theirs != verdict:
            notes.append(f"on {version} the upstream test is {verdict}, the record's reproducer {theirs}")
    fixed = rec.fixed_in
    if fixed and m.fixed_in and fixed != m.fixed_in:
        notes.append(f"the record says fixed in {fixed}, the fix first shipped in {m.fixed_in}")
    verdict = "agrees" if not notes else "; ".join(notes)
    add_proof(
        root,
        rec.id,
        {
            "trigger": m.trigger,
            "pr": m.pr,
            "subject": m.subject,
            "fixed_in": m.fixed_in,
            "before": m.before,
            "verdicts": m.verdicts,
            "failure": m.failure,
            "agreement": verdict,
        },
    )
    m.record = rec.id
    return verdict
