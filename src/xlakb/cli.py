"""The xlakb command line: the only place that prints or exits."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import io
import os
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path

from . import __version__
from .errors import XlakbError
from .published import command as published_command

EXIT_ERROR, EXIT_BAD_INPUT, EXIT_BUG, EXIT_INTERRUPT = 1, 2, 3, 130


# -- output helpers -----------------------------------------------------------------
class ConsoleProgress:
    """Progress on stderr: steps with how many are left, downloads, notes."""

    def __init__(self, stream=None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._last_download = 0.0
        self._lock = threading.Lock()  # lines come from the prepare-ahead thread too

    def _line(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream, flush=True)

    def step(self, done: int, total: int, message: str) -> None:
        if not self.quiet:
            self._line(f"[{done}/{total}] {message}")

    def info(self, message: str) -> None:
        if not self.quiet:
            self._line(f"  {message}")

    def download(self, name: str, done_bytes: int, total_bytes: int | None) -> None:
        now = time.monotonic()
        finished = total_bytes is not None and done_bytes >= total_bytes
        if self.quiet or (now - self._last_download < 1.0 and not finished):
            return
        self._last_download = now
        size = f"{done_bytes / 1e6:.1f}/{total_bytes / 1e6:.1f} MB" if total_bytes else f"{done_bytes / 1e6:.1f} MB"
        self._line(f"  downloading {name}: {size}")


def find_root(explicit: str | None) -> Path:
    if explicit:
        root = Path(explicit).resolve()
        if not (root / "issues").is_dir():
            raise XlakbError(f"{root}: no issues/ folder here", hint="--root must be an xlakb checkout")
        return root
    env = os.environ.get("XLAKB_ROOT")
    if env:
        return find_root(env)
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / "issues").is_dir() and (candidate / "reproducers").is_dir():
            return candidate
    raise XlakbError(
        f"{here}: not inside an xlakb checkout (no issues/ and reproducers/ above it)",
        hint="cd into the repository or pass --root",
    )


def _backend(args):
    from .envs import choose_backend

    backend, why = choose_backend(args.runner)
    if args.runner == "auto":
        print(f"runner: {backend.name} (auto{': ' + why if why else ''})", file=sys.stderr)
    return backend


def _links(args) -> tuple[str, ...]:
    """--find-links as given: a folder made absolute (probes run elsewhere), a URL kept (e.g. Google's libtpu index)."""
    return tuple(p if "://" in p else str(Path(p).resolve()) for p in (args.find_links or []))


# -- commands ---------------------------------------------------------------------
def cmd_validate(args) -> int:
    from .knowledge import validate

    root = find_root(args.root)
    records, problems = validate(root)
    for p in problems:
        print(p)
    if problems:
        print(
            f"{len(problems)} problem(s) in {len({p.path for p in problems})} file(s); {len(records)} record(s) valid",
            file=sys.stderr,
        )
        return EXIT_ERROR
    print(f"{len(records)} record(s) valid")
    return 0


def cmd_list(args) -> int:
    from .records import load_records

    # bugs by default; limitations lifted and drafts (mined proofs nobody wrote up yet) only when asked
    kinds = {"bugs": ("bug",), "limitations": ("limitation",), "drafts": ("draft",)}[args.kind]
    records = load_records(find_root(args.root), kinds)
    rows = [
        r
        for r in records
        if (not args.status or r.status == args.status)
        and (not args.tag or args.tag in r.tags)
        and (not args.component or r.component == args.component)
    ]
    if not rows:
        print("no records match", file=sys.stderr)
        return 0
    width = max(len(r.id) for r in rows)
    for r in rows:
        state = f"lifted {r.fixed_in}" if r.kind == "limitation" else r.status  # a limitation is never a bug's status
        print(f"{r.id:<{width}}  {state:<15}  {r.text('title', args.lang)}")
    return 0


def _ui(lang: str) -> dict:
    """The interface words of ``lang`` (data/ui.yaml, shared with the site)."""
    from .words import ui

    return ui()[lang]


def cmd_show(args) -> int:
    from .records import load_record
    from .results import load_matrix

    root = find_root(args.root)
    rec = load_record(root, args.id)
    lang = args.lang
    zh = lang == "zh"

    def label(en: str, z: str) -> str:
        return z if zh else en

    ui = _ui(lang)
    colon = ui["colon"]
    print(f"{rec.id} — {rec.text('title', lang)}")
    if rec.kind == "limitation":
        print(ui["limitation_note"].format(fixed_in=rec.fixed_in or "?").strip())
    elif rec.kind == "draft":
        print(label("A draft: mined, not written up yet, not published.", "草稿：由挖掘得到，尚未撰写，不发布。"))
    print(
        f"{label('status', '状态')}{colon}{ui['status'].get(rec.status, rec.status) if zh else rec.status}   {label('component', '组件')}{colon}"
        f"{rec.component}   {label('tags', '标签')}{colon}{', '.join(rec.tags)}"
    )
    print()
    print(rec.text("summary", lang).strip())
    print(f"\n{label('Symptoms', '症状')}{colon}")
    for s in rec.text("symptoms", lang):
        print(f"  - {s}")
    print(f"\n{label('Root cause', '根本原因')}{colon}\n  {rec.text('root_cause', lang).strip()}")
    print(f"\n{label('Workaround', '规避方法')}{colon}\n  {rec.text('workaround', lang).strip()}")
    versions = rec.data["versions"]
    print(
        f"\n{label('Affected (claimed)', '受影响版本（记录所称）')}{colon}torch_xla  {versions['affected']}"
        + (f"; {label('fixed in', '修复于')} {versions['fixed_in']}" if versions.get("fixed_in") else "")
    )
    matrix = load_matrix(root, rec.id)
    if matrix:
        from .candidates.releases import all_releases
        from .results import affected_range_text

        floor = affected_range_text(rec.data, matrix["results"], all_releases(), lang)
        if floor:
            print(floor)
        cells = ", ".join(f"{r['candidate']}={ui['verdict'].get(r['verdict'], r['verdict'])}" for r in matrix["results"])
        print(f"{label('Measured', '实测')}{colon}{cells}")
    up = rec.data["upstream"]
    links = [rec.upstream_url(n) for n in up.get("issues", [])] + [rec.upstream_url(n, "pull") for n in up.get("fixed_by", [])]
    if links:
        print(f"\n{label('Upstream', '上游')}{colon}" + " ".join(links))
    env = " ".join(f"{k}={v}" for k, v in rec.env_vars.items())
    if rec.trigger:
        print(
            f"\n{label('Reproduce', '复现')}{colon}{label('upstream test', '上游测试')} {rec.reproducer_label} "
            f"(XLAKB_XLA_REPO={label('a pytorch/xla clone', 'pytorch/xla 的克隆')})"
        )
    else:
        print(
            f"\n{label('Reproduce', '复现')}{colon}PJRT_DEVICE=CPU CPU_NUM_DEVICES={rec.devices} {env + ' ' if env else ''}python {rec.reproducer['path']}"
        )
    print(f"  xlakb repro {rec.id} --torch-xla <version>")
    return 0


def _log_signatures(root: Path, log) -> list[dict]:
    """Triage signatures taken from a failing run's log, with the compiled catalog's knowledge."""
    from . import compiled
    from .triage import engine, signatures_from_log

    _records, catalog = engine(compiled.load(root)["triage"])
    return signatures_from_log(log, catalog)


def cmd_new(args) -> int:
    from .scaffold import scaffold

    root = find_root(args.root)
    signatures = draft = None
    if args.from_log and args.from_bisect:
        raise XlakbError("--from-log and --from-bisect: give one", hint="--from-bisect takes signatures from its failing log")
    if args.from_log:
        from .triage import BadInput

        try:
            log = _read_log_arg(args.from_log)
        except BadInput as err:
            print(f"xlakb: error: {err}", file=sys.stderr)
            return EXIT_BAD_INPUT
        signatures = _log_signatures(root, log)
        if not signatures:
            raise XlakbError(
                f"{log.source}: no error line, check, frame or call found to take signatures from",
                hint="pass the log of the failing run, with its traceback",
            )
    if args.from_report is not None:
        if args.from_log or args.from_bisect:
            raise XlakbError("--from-report and --from-log/--from-bisect all name where the draft comes from: pass one")
        from . import compiled
        from .candidates.releases import release_table
        from .upstream.draft import from_report
        from .upstream.index import Cluster

        clusters = [Cluster.from_json(c) for c in compiled.load(root)["clusters"]]
        draft = from_report(root, args.id, args.from_report, args.component, clusters, release_table())
        print(f"created {draft.record.relative_to(root)} and {draft.reproducer.relative_to(root)} from #{draft.number}")
        print(f"linked reports: {', '.join(f'#{n}' for n in draft.issues)}")
        print("next: write the reproducer (what the user saw is in its header), the record in both languages, then")
        print(f"  xlakb repro {args.id} --torch-xla {draft.release}   # the reporter's release: expect reproduced")
        print(f"  xlakb matrix {args.id}                 # all releases")
        print("  xlakb validate")
        return 0
    if args.from_bisect:
        draft = _draft_from_bisect(root, args.from_bisect)
    record, repro = scaffold(root, args.id, args.component, signatures, draft=draft)
    print(f"created {record.relative_to(root)} and {repro.relative_to(root)}")
    if draft is not None:
        print(
            f"from {args.from_bisect}: reproducer, signatures, environment and versions (affected {draft.affected}"
            f"{', fixed in ' + draft.fixed_in if draft.fixed_in else ''}); read the notes at the top of the record"
        )
    print("next: fill in both languages, make the reproducer show the bug, then")
    print(f"  xlakb repro {args.id} --torch-xla <affected release>   # expect: reproduced")
    print(f"  xlakb repro {args.id} --torch-xla <fixed release>      # expect: not-reproduced")
    print("  xlakb validate")
    return 0


def _draft_from_bisect(root: Path, given: str):
    import json

    from .scaffold import draft_from_bisect
    from .triage import read_log

    path = Path(given)
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as err:
        raise XlakbError(f"--from-bisect {given}: cannot be read ({err.strerror or err})") from None
    except ValueError as err:
        raise XlakbError(f"--from-bisect {given}: not JSON ({err})", hint="pass the .json report, not the .md one") from None
    excerpt = ((data.get("failing_log") or {}).get("excerpt") or "") if isinstance(data, dict) else ""
    signatures = _log_signatures(root, read_log(io.BytesIO(excerpt.encode()), given)) if excerpt.strip() else None
    return draft_from_bisect(data, given, signatures)


def _script_record(args):
    """The record made for ``--script`` (and its script), after the flags were checked together."""
    from .scripts import Script

    if args.id and args.script:
        raise XlakbError(f"a record id ({args.id}) and --script {args.script}: give one", hint="a script needs no record")
    if not args.script:
        given = [flag for flag, dest in SCRIPT_ONLY.items() if getattr(args, dest, None)]
        if given:
            raise XlakbError(f"{given[0]} is for --script FILE", hint="a record's reproducer carries its own rule and settings")
        if not args.id:
            raise XlakbError("which record? name an id, or --script FILE to run a script without one")
        return None
    return Script.from_options(vars(args)).record()


def cmd_repro(args) -> int:
    from .candidates.releases import release
    from .records import load_record
    from .runner import VerdictCache, probe
    from .scripts import WORDS

    rec = _script_record(args)
    if rec is not None and args.expect:
        raise XlakbError("--expect is for records", hint="a script's verdict is bad or good under its --regress rule")
    rec = rec or load_record(find_root(args.root), args.id)
    name = rec.script.path.name if rec.regress else rec.id
    cand = release(args.torch_xla)
    backend = _backend(args)
    progress = ConsoleProgress(quiet=args.quiet)
    progress.step(0, 1, f"{name} on torch_xla {cand.label} (torch {cand.torch}, runner {backend.name})")
    cache = VerdictCache(refresh=not args.cached)  # without --cached: run it, and keep what it measured
    res = probe(rec, cand, backend, progress=progress, cache=cache, find_links=_links(args), index_url=args.index_url)
    verdict = WORDS.get(res.verdict.value, res.verdict.value) if rec.regress else res.verdict.value
    progress.step(1, 1, f"{cand.label}: {verdict}")
    print(f"{name} on torch_xla {cand.label}: {verdict} ({res.detail})")
    print(f"time: {res.duration_s:.1f} s{' (cached verdict)' if res.cached else ''}")
    print(f"log: {res.log}")
    if args.expect:
        expected = args.expect
        if expected == "claim":
            claim = rec.claims(cand.label)
            if claim is None:
                raise XlakbError(
                    f"{rec.id} makes no claim about torch_xla {cand.label}", hint="pass --expect reproduced or not-reproduced"
                )
            expected = "reproduced" if claim else "not-reproduced"
        if res.verdict.value != expected:
            print(f"expected {expected}, measured {res.verdict.value}", file=sys.stderr)
            return EXIT_ERROR
    return 0


def cmd_matrix(args) -> int:
    from .candidates.releases import release, releases_between
    from .executors import get_executor
    from .matrix import measure
    from .records import select_records
    from .runner import VerdictCache

    root = find_root(args.root)
    records = select_records(root, args.ids, every=args.all, component=args.component, tag=args.tag)
    cands = [release(v) for v in args.versions] if args.versions else releases_between()
    backend = _backend(args)
    progress = ConsoleProgress(quiet=args.quiet)
    executor = get_executor(args.cluster, args.jobs)
    try:
        if executor.name != "local":
            progress.info(
                f"executor: {executor.name} at {args.cluster or os.environ.get('RAY_ADDRESS')} "
                f"({executor.slots} CPU(s) in the cluster)"
            )
        got = measure(
            root,
            records,
            cands,
            backend,
            variants=args.variants,
            save=not args.no_save,
            executor=executor,
            progress=progress,
            cache=VerdictCache(refresh=args.fresh),
            find_links=_links(args),
            index_url=args.index_url,
        )
    finally:
        executor.close()
    if len(records) == 1:
        rec = records[0]
        print(f"\n{rec.id}: torch_xla releases, as measured ({backend.name} runner)")
        print(f"{'torch_xla':<10} {'torch':<8} {'verdict':<15} {'time':>7}  detail")
        for r in got.bug[rec.id]:
            print(f"{r.candidate:<10} {r.torch:<8} {r.verdict.value:<15} {r.duration_s:6.1f}s  {r.detail[:70]}")
        if got.workaround[rec.id]:
            print(
                f"\nits workaround ({' '.join(rec.workaround.get('args', []))} "
                f"{' '.join(f'{k}={v}' for k, v in rec.workaround.get('env', {}).items())}): not-reproduced = it holds"
            )
            for r in got.workaround[rec.id]:
                print(f"{r.candidate:<10} {r.torch:<8} {r.verdict.value:<15} {r.duration_s:6.1f}s  {r.detail[:70]}")
    else:
        letter = {"reproduced": "R", "not-reproduced": "N", "untestable": "U", "error": "E"}
        print(
            f"\n{len(records)} records x {len(cands)} releases ({cands[0].label} .. {cands[-1].label}, {backend.name} runner):"
            f" R reproduced, N not reproduced, U untestable, E error"
        )
        width = max(len(r.id) for r in records)
        for rec in records:
            line = f"{rec.id:<{width}}  {''.join(letter[x.verdict.value] for x in got.bug[rec.id])}"
            if got.workaround[rec.id]:
                line += f"  workaround: {''.join(letter[x.verdict.value] for x in got.workaround[rec.id])}"
            print(line)
    for rec in records:
        if not args.no_save and got.bug[rec.id]:
            print(f"written: bisect/{rec.id}/matrix.json")
        if not args.no_save and got.workaround[rec.id]:
            print(f"written: bisect/{rec.id}/workaround.json")
    for rec in records:
        for where, line in got.disagree[rec.id]:
            print(f"warning: {rec.id}: {where}: {line}", file=sys.stderr)
    return 0


def cmd_mine(args) -> int:
    from .executors import get_executor
    from .mining.mine import run
    from .runner import VerdictCache

    root = find_root(args.root)
    os.environ.setdefault("XLAKB_XLA_REPO", str(Path(args.repo).resolve()))  # where probes take the tests from
    backend = _backend(args) if not args.find_only else None
    progress = ConsoleProgress(quiet=args.quiet)
    executor = get_executor(args.cluster, args.jobs) if not args.find_only else None
    if args.rejudge:
        from .mining.mine import REJUDGED, rejudge

        try:
            changes = rejudge(
                root,
                args.repo,
                backend,
                progress=progress,
                executor=executor,
                cache=VerdictCache(),
                find_links=_links(args),
                index_url=args.index_url,
            )
        finally:
            executor.close()
        for c in changes:
            lost = f" (record {c['record']} loses this proof)" if c["record"] and c["was"] == "proved" else ""
            print(f"{c['was']} -> {c['now']}: {c['key']}{lost}: {c['why']}")
        print(f"{len(changes)} outcome(s) changed; listed in {REJUDGED}")
        return 0
    try:
        out = run(
            root,
            args.repo,
            args.start,
            args.end,
            backend,
            progress=progress,
            limit=args.limit,
            find_only=args.find_only,
            records=not args.no_records,
            executor=executor,
            cache=VerdictCache(),
            find_links=_links(args),
            index_url=args.index_url,
            retry=tuple(args.retry or ()),
        )
    finally:
        if executor is not None:
            executor.close()
    counts: dict[str, int] = {}
    for m in out.rows:
        counts[m.status] = counts.get(m.status, 0) + 1
    print(
        f"\n{len(out.rows)} candidates from {args.start} to {args.end}: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    )
    for rid in out.written:
        print(
            f"draft written: mined/drafts/{rid}.yaml, bisect/{rid}/ (write it up, then move it to issues/ "
            f"or, for a limitation, limitations/)"
        )
    for rid, agreement in out.attached:
        print(f"another proof of {rid}: {agreement} (bisect/{rid}/proofs.json)")
    for key, why in out.left:
        print(f"no record for {key}: {why}")
    for rid in out.signed:
        print(f"triage signatures from its measured failure: mined/drafts/{rid}.yaml")
    print(f"table: {out.table.relative_to(root)}")
    return 0


def cmd_upstream(args) -> int:
    import json

    from .upstream import store

    root = find_root(args.root)
    if args.action == "link":
        from .upstream import links

        if not args.clone:
            raise XlakbError("xlakb upstream link needs a pytorch/xla clone", hint="--clone ../xla")
        progress = ConsoleProgress(quiet=args.quiet)
        reports = store.load(root)
        fixes = links.find(args.clone, [r.number for r in reports.values() if not r.pull_request], progress)
        path = links.save(root, fixes, "git log of master and the release branches of a pytorch/xla clone")
        shipped = sum(1 for fs in fixes.values() if any(f.get("release") for f in fs))
        print(
            f"{len(fixes)} stored report(s) named as fixed by a commit ({shipped} with a release holding it); "
            f"{path.relative_to(root)}"
        )
        return 0
    if args.action == "import":
        if not args.file:
            raise XlakbError("xlakb upstream import needs a file", hint="a JSON array or JSON lines of GitHub issue objects")
        path = Path(args.file)
        new = store.combine(
            store.report_from_github(o, o.get("comments") or (), seeded=args.seeded, source=f"{path}")
            for o in store.read_objects(path)
        )
        merged, added, changed = store.merge(store.load(root), new)
        out = store.save(root, merged)
        with_errors = sum(1 for r in new if r.errors)
        print(
            f"{len(new)} read ({with_errors} with error lines): {added} added, {changed} changed; "
            f"{len(merged)} in {out.relative_to(root)}"
        )
        return 0
    if args.action == "fetch":
        from .upstream.github import API, Client, harvest, token_from_environment

        token = token_from_environment()
        progress = ConsoleProgress(quiet=args.quiet)
        if not token:
            progress.info("no GITHUB_TOKEN or GH_TOKEN: GitHub allows 60 requests an hour without one")
        client = Client(api=args.api or os.environ.get("XLAKB_GITHUB_API") or API, token=token, progress=progress)
        done = harvest(root, args.repo, client, since=args.since)
        if done.not_modified:
            print(f"{args.repo}: nothing new since the last fetch (1 request)")
            return 0
        print(
            f"{args.repo}: {done.seen} issue(s) and pull request(s) read, {done.added} added, {done.changed} changed"
            f" ({done.requests} requests)" + (f"; gone meanwhile: {', '.join(f'#{n}' for n in done.gone)}" if done.gone else "")
        )
        return 0
    if args.action == "table":
        return _upstream_table(root, args)
    from .knowledge import upstream_clusters

    clusters = [c for c in upstream_clusters(root) if c.listed]
    shown = clusters[: args.limit]
    if args.json:
        print(json.dumps([c.to_json() for c in shown], indent=1, ensure_ascii=False))
        return 0
    for c in shown:
        states = f"{len(c.open)} open" if c.open else "all closed"
        proven = f"; record {', '.join(c.records)}" if c.records else ""
        fix = f"; fixed by {', '.join(f'#{p}' for p in c.fixed_by)}" if c.fixed_by else ""
        if c.generic:
            proven += (
                "; only a test's verdict: may be any failing tests" if c.test else "; only a fatal signal: may be any crashes"
            )
        print(f"{len(c.issues):3d}  {c.key[:100]}\n     {' '.join(f'#{r.number}' for r in c.issues[:8])} ({states}{fix}{proven})")
    print(f"{len(clusters)} clusters from {sum(1 for _ in store.load(root))} stored reports")
    return 0


def _upstream_table(root: Path, args) -> int:
    """``xlakb upstream table``: the reproducibility table's funnel, what it has not covered yet, and the reports
    reproduced on CPU (with the releases measured and the record proving each)."""
    import json

    from .candidates.releases import all_releases
    from .results import candidate_order
    from .upstream import store, table

    entries = table.load(root, all_releases())
    missing = table.missing(entries, store.load(root))
    steps = table.funnel(entries)
    if args.json:
        print(
            json.dumps(
                {
                    "funnel": [{"step": k, "reports": n} for k, n in steps],
                    "missing": missing,
                    "reproduced": [
                        {"number": e.number, "component": e.component, "releases": e.releases, "record": e.record}
                        for e in entries
                        if e.outcome == "reproduced"
                    ],
                },
                indent=1,
            )
        )
        return 0
    width = max(len(k) for k, _ in steps)
    for k, n in steps:
        print(f"{k:<{width}}  {n:4d}")
    if missing:
        print(f"not in the table yet (stored, filed from {table.COVERS_FROM} on): {len(missing)}")
    for e in entries:
        if e.outcome == "reproduced":
            runs = ", ".join(f"{r} {v}" for r, v in sorted(e.releases.items(), key=lambda kv: candidate_order(kv[0])))
            print(f"  #{e.number} [{e.component}] {runs}" + (f" -> {e.record}" if e.record else ""))
    return 0


def cmd_warm(args) -> int:
    """``xlakb warm scan``: measure, per release, the variables torch and torch_xla read while imported."""
    from .candidates.releases import release, releases_between
    from .envs.warm import write_import_time
    from .runner import scan_releases

    cands = [release(v) for v in args.versions] if args.versions else releases_between()
    found = scan_releases(
        cands, _backend(args), progress=ConsoleProgress(quiet=args.quiet), find_links=_links(args), index_url=args.index_url
    )
    path = write_import_time(found)
    print(f"wrote {path}: {', '.join(f'{v} ({len(n)})' for v, n in found.items())}")
    return 0


def _read_log_arg(file: str | None):
    from .triage import BadInput, read_log, read_log_file

    if file in (None, "-"):
        if sys.stdin.isatty():
            raise BadInput("no log given", hint="pass a file, or pipe a log: xlakb triage - < crash.log")
        return read_log(sys.stdin.buffer, "standard input")
    return read_log_file(Path(file))


def cmd_triage(args) -> int:
    import json

    from . import compiled
    from .triage import BadInput, engine, remember_needles, reported_hits, result_json, triage
    from .triage_report import generic_hit, message_history, report
    from .upstream.index import Cluster

    root = find_root(args.root)
    try:
        log = _read_log_arg(args.file)
    except BadInput as err:
        print(f"xlakb: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for note in log.notes:
        print(f"note: {note}", file=sys.stderr)
    index = compiled.load(root)  # built once from the records, catalog and reports; rebuilt when they change
    remember_needles(index["needles"])
    records, catalog = engine(index["triage"])
    result = triage(log, records, torch_xla=args.torch_xla, catalog=catalog)
    reported = reported_hits(result, log.text, [Cluster.from_json(c) for c in index["clusters"]])
    if args.json:
        data = result_json(result)
        data["upstream"] = [
            {
                "cluster": h.cluster.to_json(),
                "line": h.line.line if h.line else None,
                "frames": list(h.frames),
                "exact": h.exact,
                "how": h.how,
                "generic": generic_hit(h, result),
            }
            for h in reported
        ]
        print(json.dumps(data, indent=1, ensure_ascii=False))
        return 0 if result.strong else EXIT_ERROR
    history = message_history(args.repo, result) if args.repo else None
    print("\n".join(report(result, source=log.source, lang=args.lang, history=history, reported=reported)))
    return 0 if result.strong else EXIT_ERROR


def cmd_catalog(args) -> int:
    from . import catalog
    from .candidates.releases import release_table

    out = Path(args.out) if args.out else Path(__file__).resolve().parent / "data" / catalog.DATA_FILE
    progress = ConsoleProgress(quiet=getattr(args, "quiet", False))
    cat = catalog.build(
        wheels=Path(args.wheels),
        repo=Path(args.repo),
        torch_wheels=Path(args.torch_wheels) if args.torch_wheels else None,
        lazy_src=Path(args.lazy_src) if args.lazy_src else None,
        releases=args.releases or None,
        torch_of={v: r["torch"] for v, r in release_table().items()},
        progress=lambda line: progress.info(line),
    )
    catalog.write(cat, out)
    by_origin = {o: sum(1 for e in cat.entries if e.origin == o) for o in catalog.ORIGINS}
    print(
        f"wrote {out}: {len(cat.entries)} entries ({', '.join(f'{n} {o}' for o, n in by_origin.items())}) "
        f"for torch_xla {cat.releases_text(cat.releases)}"
    )
    return 0


def cmd_bisect(args) -> int:
    from .bisection import Context, Options
    from .executors import get_executor
    from .records import load_record
    from .scripts import WORDS

    rec = _script_record(args)
    root = None
    if rec is None:
        root = find_root(args.root)
        rec = load_record(root, args.id)
    elif args.no_save:
        raise XlakbError("--no-save is for records: a script's bisection writes only its --report files")
    if args.report and rec.regress is None:
        raise XlakbError(f"--report {args.report[0]} is for --script", hint="a record's reports go to bisect/<id>/")
    if args.report:
        from .script_report import target

        for given in args.report:
            target(given)  # bad names are refused before any probe runs
    options = Options(
        repeat=args.repeat,
        jobs=args.jobs,
        prepare_ahead=not args.no_prepare,
        find_links=_links(args),
        index_url=args.index_url,
        command="xlakb " + published_command(args.argv),
        words=dict(WORDS) if rec.regress else {},
    )
    ctx = Context(rec, _backend(args), progress=ConsoleProgress(quiet=args.quiet), options=options)
    ctx.executor = get_executor(args.cluster, 1)  # -j is how many candidates each step probes at once
    try:
        return _bisect(ctx, root, args)
    finally:
        ctx.executor.close()


def _bisect(ctx, root: Path, args) -> int:
    from .runner import VerdictCache

    if args.fresh:  # no verdict measured before this run, no saved progress; what it measures is kept
        import tempfile

        ctx.cache = VerdictCache(refresh=True)
        ctx.state_root = Path(tempfile.mkdtemp(prefix="xlakb-fresh-state-"))
        try:
            return _bisect_run(ctx, root, args)
        finally:
            shutil.rmtree(ctx.state_root, ignore_errors=True)
    return _bisect_run(ctx, root, args)


def _bisect_run(ctx, root: Path, args) -> int:
    from .bisection import save_report
    from .bisection.narrow import NarrowStopped, narrow
    from .candidates import get_source

    opts = vars(args)
    stopped = None
    if args.narrow:
        if args.source != "releases":
            raise XlakbError(
                f"--narrow starts from releases, not {args.source}", hint="drop --source; --start/--end name releases"
            )
        try:
            reports = narrow(ctx, opts, start=args.start, end=args.end, direction=args.direction)
        except NarrowStopped as err:
            reports, stopped = err.reports, err
    else:
        source = get_source(args.source).from_options(ctx, opts)
        reports = source.bisect(ctx.engine(source), args.start, args.end, args.direction)
    if ctx.record.regress is not None:  # a script: one report of every stage, printed and saved where asked
        from .script_report import ScriptReport, save

        whole = ScriptReport(ctx.record.script, reports, command=ctx.options.command)
        print()
        print(whole.text())
        for path in save(whole, args.report or []):
            print(f"\nwritten: {path}")
    else:
        for report in reports:
            print()
            print(report.summary())
            for line in report.listing():
                print(line)
            if not args.no_save:
                print(f"\nwritten: {save_report(root, report).relative_to(root)}")
    if stopped is not None:
        print(f"xlakb: {stopped}", file=sys.stderr)
        return EXIT_ERROR
    if args.narrow and not args.repo:
        print("\nno --repo given: narrowing stopped at nightlies (pass --repo <pytorch/xla clone> to go on to commits)")
    return 0


def cmd_verify(args) -> int:
    from .candidates.releases import release
    from .records import PUBLISHED, id_hint, load_records
    from .runner import probe
    from .verify import changed_record_ids, claimed_pair

    root = find_root(args.root)
    records = {r.id: r for r in load_records(root, PUBLISHED)}  # bugs and limitations: both claim ranges
    ids = list(args.ids)
    if args.changed_since:
        ids += [i for i in changed_record_ids(root, args.changed_since, list(records.values())) if i not in ids]
    unknown = [i for i in ids if i not in records]
    if unknown:
        raise XlakbError(f"unknown record id {unknown[0]!r}", hint=id_hint(unknown[0], list(records)))
    if not ids:
        print("no records to verify")
        return 0
    backend = _backend(args)
    progress = ConsoleProgress(quiet=args.quiet)
    failures = 0
    for rid in ids:
        rec = records[rid]
        affected, fixed = claimed_pair(rec)
        for version, expected in ((affected, "reproduced"), (fixed, "not-reproduced")):
            if version is None:
                print(
                    f"{rid}: no release is claimed {'affected' if expected == 'reproduced' else 'fixed'}; nothing to check there"
                )
                continue
            res = probe(rec, release(version), backend, progress=progress, find_links=_links(args), index_url=args.index_url)
            ok = res.verdict.value == expected
            failures += not ok
            print(
                f"{rid} on torch_xla {version}: {res.verdict.value} (claimed {expected}) {'ok' if ok else 'MISMATCH'}  [{res.duration_s:.1f} s, log {res.log}]"
            )
    if failures:
        print(f"{failures} reproducer run(s) did not behave as their records claim", file=sys.stderr)
        return EXIT_ERROR
    return 0


def cmd_releases(args) -> int:
    from .candidates.releases import DEFAULT_INDEX, published_versions, release_table

    table = release_table()
    for version, entry in table.items():
        pins = ", ".join(entry.get("pins", [])) or "-"
        print(f"torch_xla {version:<7} torch {entry['torch']:<7} pins: {pins}")
    if args.check:
        published = published_versions(args.index_url or DEFAULT_INDEX)
        missing = [v for v in published if v not in table]
        if missing:
            print(f"not in the release table (add them to src/xlakb/data/releases.yaml): {', '.join(missing)}", file=sys.stderr)
            return EXIT_ERROR
        print(f"the table covers all {len(published)} published releases")
    return 0


def _env_backends(which: str) -> list:
    """The backends whose caches `xlakb env` looks at (Docker's only when asked or when a daemon answers)."""
    from .envs import backend_class

    names = ["uv", "docker"] if which == "all" else [which]
    out = []
    for name in names:
        backend = backend_class(name)()
        if name == "docker" and which == "all" and backend.available() is not None:
            continue  # no daemon: nothing of Docker's to list here
        out.append(backend)
    return out


def _ago(stamp: float) -> str:
    if not stamp:
        return "never"
    seconds = max(0.0, time.time() - stamp)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit} ago"
    return "just now"


def cmd_env(args) -> int:
    from .envs import cache_dir
    from .envs.cache import human_size, list_entries, parse_age, parse_size, plan_prune, remove_entries

    backends = _env_backends(args.runner)
    entries, notes = list_entries(backends)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.action == "list":
        if args.json:
            import json

            print(json.dumps([dataclasses.asdict(e) for e in entries], indent=1))
            return 0
        rows = sorted(entries, key=lambda e: -e.last_used)
        for e in rows:
            flag = "  [in use]" if e.in_use else ""
            print(f"{e.runner:<6} {e.key:<20} {e.kind:<8} {human_size(e.size):>10}  {_ago(e.last_used):<12} {e.holds}{flag}")
        total = sum(e.size for e in entries)
        print(
            f"{len(entries)} environment(s), {human_size(total)} on disk (hard links counted once) under {cache_dir() / 'envs'}"
        )
        return 0
    if not (args.max_size or args.older_than or args.all):
        raise XlakbError("say what to prune", hint="--max-size SIZE (e.g. 40G), --older-than AGE (e.g. 30d), or --all")
    chosen = plan_prune(
        entries,
        max_size=parse_size(args.max_size) if args.max_size else None,
        older_than=parse_age(args.older_than) if args.older_than else None,
        remove_all=args.all,
    )
    if args.dry_run:
        for e in chosen:
            print(f"would remove {e.runner} {e.key} ({e.kind}, {human_size(e.size)}, last used {_ago(e.last_used)}): {e.holds}")
        print(f"{len(chosen)} environment(s), {human_size(sum(e.size for e in chosen))} would be freed")
        return 0
    removed, skipped = remove_entries(backends, chosen)
    for e in removed:
        print(f"removed {e.runner} {e.key} ({e.kind}, {human_size(e.size)}, last used {_ago(e.last_used)}): {e.holds}")
    for e in skipped:
        print(f"kept {e.runner} {e.key}: in use")
    in_use = [e for e in entries if e.in_use]
    left = sum(e.size for e in entries) - sum(e.size for e in removed)
    print(
        f"removed {len(removed)} environment(s), {human_size(sum(e.size for e in removed))} freed; "
        f"{human_size(left)} left" + (f" ({len(in_use)} in use, never removed)" if in_use else "")
    )
    return 0


def cmd_merge(args) -> int:
    from .results import merge_matrix

    root = find_root(args.root)
    files = []
    for where in args.folders:
        folder = Path(where)
        if not folder.is_dir():
            raise XlakbError(f"{folder}: no such folder", hint="pass folders holding bisect/<id>/matrix.json files")
        files += sorted(folder.rglob("matrix.json"))
    if not files:
        raise XlakbError(f"no matrix.json under {', '.join(args.folders)}")
    for path in files:
        rid, taken = merge_matrix(root, path)
        print(f"{rid}: {taken} row(s) from {path}")
    return 0


def cmd_drift(args) -> int:
    import json

    from .candidates.releases import all_releases
    from .matrix import drift, unmeasured
    from .records import load_records
    from .results import load_matrix

    root = find_root(args.root)
    releases = all_releases()
    measured = [(rec, (load_matrix(root, rec.id) or {}).get("results", [])) for rec in load_records(root)]
    if args.unmeasured_releases:
        wanted = {v for _, rows in measured for v in unmeasured(rows, releases)}
        print(json.dumps([v for v in releases if v in wanted]))
        return 0
    order = {"regression": 0, "claim": 1, "unmeasured": 2}
    found = sorted(
        ((kind, rec.id, message) for rec, rows in measured for kind, message in drift(rec, rows, releases)),
        key=lambda f: (order[f[0]], f[1]),
    )
    if args.json:
        print(json.dumps([{"kind": k, "record": r, "message": m} for k, r, m in found], indent=1))
        return EXIT_ERROR if found else 0
    for kind, rid, message in found:
        print(f"{kind.upper():<10} {rid}: {message}")
    if found:
        counts = {k: sum(1 for f in found if f[0] == k) for k in order}
        print(
            ", ".join(f"{n} {k}" for k, n in counts.items() if n) + f" over {len({f[1] for f in found})} record(s)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    print("no drift: every record's claims agree with its matrix, measured on every known release")
    return 0


def cmd_gc(args) -> int:
    from .envs.docker import gc

    counts = gc(base=args.all)
    print(", ".join(f"{n} {what}" for what, n in counts.items()) + " removed")
    return 0


def cmd_site(args) -> int:
    from .sitegen.build import build_site, serve_site

    root = find_root(args.root)
    if args.action == "build":
        out = build_site(root, Path(args.out) if args.out else root / "build" / "site", strict=True, progress=ConsoleProgress())
        print(f"site built: {out}")
    else:
        serve_site(root, host=args.host, port=args.port)
    return 0


# -- parser -----------------------------------------------------------------------
def cluster_opt(sp) -> None:
    sp.add_argument(
        "--cluster",
        metavar="ADDR",
        help="where probes run: local (default, unless RAY_ADDRESS is set), "
        "a Ray cluster (ray://HOST:PORT or HOST:PORT; each probe a task asking the record's resources), "
        "or local-ray (a Ray cluster of this machine, started for the run); needs pip install 'xlakb[ray]'",
    )


#: the options that only a script takes, by flag: their argparse names
SCRIPT_ONLY = {
    "--regress": "regress",
    "--match": "match",
    "--with": "with_packages",
    "--timeout": "timeout",
    "--report": "report",
}


def script_opts(sp, *, settings: bool = False) -> None:
    """A script without a record: the file, what counts as bad, its environment (``settings``: the command has
    no settings source declaring --setting and --settings-file already)."""
    from .regress import REGRESS

    sp.add_argument(
        "--script",
        metavar="FILE",
        help="run FILE instead of a record's reproducer: a .py file with the probe environment's python, any other "
        "file (test.sh) as a program with that python first on PATH; the script's arguments go after --",
    )
    sp.add_argument(
        "--regress",
        metavar="RULE",
        help=f"--script: what makes a run bad: {', '.join(REGRESS)} (default error: a non-zero exit; crash: killed by a "
        "signal, e.g. a fatal check failure's abort, not a Python exception; hang: past --timeout); exit 125 is untestable",
    )
    sp.add_argument("--match", metavar="REGEX", help="--script: a run is bad only when its output also shows REGEX")
    sp.add_argument("--timeout", type=int, metavar="SECONDS", help="--script: kill a run after SECONDS (default 300)")
    sp.add_argument(
        "--with",
        dest="with_packages",
        action="append",
        metavar="PKG",
        help="--script: a package to add to its environment (repeatable)",
    )
    if settings:
        sp.add_argument("--setting", action="append", metavar="NAME=VALUE", help="--script: a variable it runs with (repeatable)")
        sp.add_argument("--settings-file", metavar="FILE", help="--script: a file of NAME=VALUE lines it runs with")


def build_parser(sources: bool = True) -> argparse.ArgumentParser:
    """The command line; ``sources=False`` leaves out the candidate sources' own bisect options, whose
    modules (git, the runner, the package index) other commands need not import to start."""
    from .candidates import SOURCES, source_arguments

    p = argparse.ArgumentParser(prog="xlakb", description="A knowledge base of PyTorch/XLA bugs that proves its own claims.")
    p.add_argument("--version", action="version", version=f"xlakb {__version__}")
    p.add_argument("--root", help="the xlakb checkout (default: found from the current directory, or $XLAKB_ROOT)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def runner_opts(sp):
        sp.add_argument(
            "--runner",
            choices=["auto", "uv", "docker"],
            default="auto",
            help="where probes run (auto: Docker when a daemon answers and its image is there, else uv)",
        )
        sp.add_argument("--find-links", action="append", metavar="DIR", help="a local wheelhouse to install from (repeatable)")
        sp.add_argument("--index-url", help="package index to install torch_xla/torch from (default: PyPI)")
        sp.add_argument("-q", "--quiet", action="store_true", help="no progress lines")

    sp = sub.add_parser("validate", help="check every record: schema, ids, reproducers, both languages, links")
    sp.set_defaults(func=cmd_validate)

    sp = sub.add_parser("list", help="list records")
    sp.add_argument("--status", choices=["open", "fixed", "regressed", "workaround-only", "wontfix"])
    sp.add_argument("--tag")
    sp.add_argument("--component")
    sp.add_argument(
        "--kind",
        choices=["bugs", "limitations", "drafts"],
        default="bugs",
        help="bugs (default); limitations releases lifted; drafts: mined proofs nobody has written up yet",
    )
    sp.add_argument("--lang", choices=["en", "zh"], default="en")
    sp.set_defaults(func=cmd_list)

    sp = sub.add_parser("show", help="show one record")
    sp.add_argument("id")
    sp.add_argument("--lang", choices=["en", "zh"], default="en")
    sp.set_defaults(func=cmd_show)

    sp = sub.add_parser("new", help="scaffold a record and its reproducer")
    sp.add_argument("id")
    sp.add_argument("--component", default="misc")
    sp.add_argument("--from-log", metavar="FILE", help="take the record's triage signatures from this log (- for standard input)")
    sp.add_argument(
        "--from-report",
        type=int,
        metavar="N",
        help="a draft from stored upstream report #N: its error lines as symptoms and signatures, the reports of its "
        "cluster linked, the reporter's release first to measure, a CPU reproducer skeleton",
    )
    sp.add_argument(
        "--from-bisect",
        metavar="REPORT",
        help="draft the record from a script bisection's JSON report (xlakb bisect --script F --report R.json): "
        "the script as reproducer, signatures from the failing probe's log, versions from the verdicts",
    )
    sp.set_defaults(func=cmd_new)

    sp = sub.add_parser(
        "repro",
        help="run a record's reproducer (or a script: --script FILE) once on one torch_xla release",
        description="Runs a record's reproducer, or a script without a record (--script FILE, arguments after --), "
        "once on one release, as a probe of a bisection runs it, and prints the verdict.",
    )
    sp.add_argument("id", nargs="?", help="the record (or --script FILE instead)")
    script_opts(sp, settings=True)
    sp.add_argument("--torch-xla", required=True, metavar="VERSION")
    sp.add_argument(
        "--expect",
        choices=["reproduced", "not-reproduced", "claim"],
        help="exit 1 unless the verdict is this ('claim': what the record claims for this release)",
    )
    sp.add_argument("--cached", action="store_true", help="reuse a cached verdict for the same reproducer and environment")
    runner_opts(sp)
    sp.set_defaults(func=cmd_repro)

    sp = sub.add_parser("matrix", help="run reproducers across releases and record the affected-versions tables")
    sp.add_argument("ids", nargs="*", metavar="ID")
    sp.add_argument("--all", action="store_true", help="every record")
    sp.add_argument("--component", help="every record of this component")
    sp.add_argument("--tag", help="every record with this tag")
    sp.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="probes to run at once on this machine (default 1)")
    cluster_opt(sp)
    sp.add_argument("--versions", nargs="+", metavar="VERSION", help="releases to run (default: all published)")
    sp.add_argument("--fresh", action="store_true", help="ignore cached verdicts")
    sp.add_argument("--no-save", action="store_true", help="do not write bisect/<id>/matrix.json")
    sp.add_argument(
        "--variants",
        choices=["both", "bug", "workaround"],
        default="both",
        help="the bug, the workaround variant a record declares (reproducer.workaround), or both (default)",
    )
    runner_opts(sp)
    sp.set_defaults(func=cmd_matrix)

    sp = sub.add_parser(
        "mine",
        help="prove bugs from pytorch/xla's own fixes: tests that fail before a fix, pass after",
        description="Reads a pytorch/xla clone: the commits changing a test between two releases, "
        "sorted by src/xlakb/data/mine_rules.yaml; runs each test function a fix changed "
        "(taken from the clone, never copied here) on the release before the fix and the "
        "first with it; a test that fails before and passes after becomes a record (draft "
        "text, 12-release matrix, release bisection), or a second proof of the record of "
        "that fix. Every candidate and its outcome is kept in mined/candidates.json; a "
        "second run goes on where the first stopped.",
    )
    sp.add_argument(
        "--repo",
        required=True,
        metavar="CLONE",
        help="a pytorch/xla clone (bare or not) with its tags and release branches; probes take the tests from it",
    )
    sp.add_argument("--from", dest="start", default="2.1.0", metavar="VERSION", help="oldest release (default 2.1.0)")
    sp.add_argument("--to", dest="end", default="2.9.0", metavar="VERSION", help="newest release (default 2.9.0)")
    sp.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="probes to run at once on this machine")
    cluster_opt(sp)
    sp.add_argument("--limit", type=int, metavar="N", help="prove at most N pending candidates this run")
    sp.add_argument("--find-only", action="store_true", help="list and classify the candidates, run nothing")
    sp.add_argument(
        "--rejudge",
        action="store_true",
        help="after a change of the runner or the rules: run every measured candidate again and list "
        "what changed (mined/rejudged.json)",
    )
    sp.add_argument("--no-records", action="store_true", help="prove candidates but write no record")
    sp.add_argument(
        "--retry",
        action="append",
        choices=("error", "untestable", "fails-after", "passes-before", "proved"),
        help="prove the candidates with this outcome again (repeatable), e.g. after the runner changed; "
        "proved: only those no record was made of yet",
    )
    runner_opts(sp)
    sp.set_defaults(func=cmd_mine)

    sp = sub.add_parser(
        "upstream",
        help="the reported tier: upstream's issues grouped by error signature",
        description="fetch: read pytorch/xla's issues, pull requests and comments through the GitHub "
        "REST API (token from GITHUB_TOKEN or GH_TOKEN; resumable; incremental) into "
        "upstream/issues.jsonl. import: read GitHub issue objects from a file (a JSON array "
        "or JSON lines). link: the commits of a clone that say they fix a stored report, and the first release "
        "with each. list: the clusters, most reported first. table: the reproducibility table of the stored reports "
        "(upstream/reproducibility.yaml): the funnel from a report to a proven record.",
    )
    sp.add_argument("action", choices=["fetch", "import", "link", "list", "table"])
    sp.add_argument("file", nargs="?", help="import: the file of GitHub issue objects")
    sp.add_argument(
        "--clone",
        metavar="DIR",
        help="link: a pytorch/xla clone; the commits that say they fix a stored report, with the first release of "
        "each (upstream/fixes.json)",
    )
    sp.add_argument("--repo", default="pytorch/xla", help="fetch: owner/name (default pytorch/xla)")
    sp.add_argument("--since", help="fetch: only what was updated since this ISO date (default: where the last fetch stopped)")
    sp.add_argument("--api", default=None, help="fetch: the API's address (default https://api.github.com, or $XLAKB_GITHUB_API)")
    sp.add_argument(
        "--seeded",
        action="store_true",
        help="import: the objects come from the stored search corpus (marked seeded until a harvest replaces them)",
    )
    sp.add_argument("--limit", type=int, default=30, help="list: how many clusters (default 30)")
    sp.add_argument("--json", action="store_true", help="list, table: as JSON")
    sp.add_argument("-q", "--quiet", action="store_true")
    sp.set_defaults(func=cmd_upstream)

    sp = sub.add_parser(
        "triage",
        help="name the known records a log or traceback shows, weighed by evidence",
        description="Matches a log against every record's signatures (message, check, frame, call, env). "
        "A strong match needs the message and context; a message alone is only 'possible'. "
        "Exit 0: a strong match; 1: none; 2: the log cannot be read (empty, binary).",
    )
    sp.add_argument("file", nargs="?", help="a log file, or - for standard input")
    sp.add_argument("--torch-xla", metavar="VERSION", help="your torch_xla release, when the log does not say")
    sp.add_argument("--json", action="store_true", help="the result as JSON, for tools")
    sp.add_argument("--lang", choices=["en", "zh"], default="en")
    sp.add_argument(
        "--repo",
        metavar="CLONE",
        help="a pytorch/xla clone: also list the commits since your release that touched each error message (git log -S)",
    )
    sp.set_defaults(func=cmd_triage)

    sp = sub.add_parser(
        "warm",
        help="warm starts: measure which variables each release reads at import",
        description="scan: for each release, import torch and torch_xla in its environment with a "
        "getenv shim (built with gcc) and a watched os.environ, and write the variables "
        "read to src/xlakb/data/import_time.yaml (a warm server is started with the "
        "probe's values of these). Warm starts are on by default; XLAKB_WARM=0 turns "
        "them off for everything.",
    )
    sp.add_argument("action", choices=["scan"])
    sp.add_argument("--versions", nargs="+", metavar="VERSION", help="releases (default: all published)")
    runner_opts(sp)
    sp.set_defaults(func=cmd_warm)

    sp = sub.add_parser(
        "catalog",
        help="build the catalog of messages torch_xla can print, per release",
        description="Reads each release's torch_xla wheel (Python raise/warn strings, the compiled "
        "extension's strings) and the torch_xla/csrc sources at its tag of a pytorch/xla "
        "clone (checks, errors, with file and function); optionally torch wheels and "
        "torch's lazy-core sources. Writes src/xlakb/data/catalog.jsonl.",
    )
    sp.add_argument("action", choices=["build"])
    sp.add_argument("--wheels", required=True, metavar="DIR", help="torch_xla-X.Y.Z-*.whl, one per release")
    sp.add_argument("--repo", required=True, metavar="CLONE", help="a pytorch/xla clone with the release tags")
    sp.add_argument("--torch-wheels", metavar="DIR", help="torch-X.Y.Z-*.whl for the releases' torch")
    sp.add_argument("--lazy-src", metavar="DIR", help="a folder holding torch/csrc/lazy/... of PyTorch")
    sp.add_argument("--releases", nargs="+", metavar="VERSION", help="default: every wheel in --wheels")
    sp.add_argument("--out", metavar="FILE", help="default: the catalog shipped with xlakb")
    sp.set_defaults(func=cmd_catalog)

    sp = sub.add_parser("verify", help="run records' reproducers on one claimed-affected and one claimed-fixed release")
    sp.add_argument("ids", nargs="*", metavar="ID")
    sp.add_argument(
        "--changed-since", metavar="GIT_REF", help="also every record whose YAML or reproducer changed since this ref"
    )
    runner_opts(sp)
    sp.set_defaults(func=cmd_verify)

    sp = sub.add_parser("releases", help="the torch_xla releases xlakb knows, with their torch")
    sp.add_argument("--check", action="store_true", help="compare with the package index")
    sp.add_argument("--index-url")
    sp.set_defaults(func=cmd_releases)

    sp = sub.add_parser(
        "env",
        help="cached environments: list them, or prune them (least recently used first)",
        description="Environments of every runner in the cache: key, what it holds, size on disk "
        "(hard links counted once), last use. Pruning never removes one in use. "
        "Set XLAKB_CACHE_MAX_SIZE (e.g. 40G) and the cache keeps itself under that size.",
    )
    sp.add_argument("action", choices=["list", "prune"])
    sp.add_argument("--runner", choices=["all", "uv", "docker"], default="all", help="whose environments (default: all)")
    sp.add_argument(
        "--max-size", metavar="SIZE", help="prune: remove the least recently used until the cache is at most SIZE (40G, 500M)"
    )
    sp.add_argument("--older-than", metavar="AGE", help="prune: remove what was not used for AGE (30d, 12h, 2w)")
    sp.add_argument("--all", action="store_true", help="prune: remove every environment not in use")
    sp.add_argument("--dry-run", action="store_true", help="prune: only say what would be removed")
    sp.add_argument("--json", action="store_true", help="list, table: as JSON")
    sp.set_defaults(func=cmd_env)

    sp = sub.add_parser(
        "drift",
        help="records whose claims disagree with their measured matrix, regressions first, "
        "and releases not measured yet (exit 1 when there is any)",
    )
    sp.add_argument("--json", action="store_true", help="the list as JSON")
    sp.add_argument(
        "--unmeasured-releases",
        action="store_true",
        help="print the releases some record was not measured on, as a JSON list (for a CI job matrix)",
    )
    sp.set_defaults(func=cmd_drift)

    sp = sub.add_parser(
        "merge-matrices",
        help="merge matrix.json files measured elsewhere (CI jobs) into bisect/; the newer measurement of each release wins",
    )
    sp.add_argument("folders", nargs="+", metavar="FOLDER")
    sp.set_defaults(func=cmd_merge)

    sp = sub.add_parser("gc", help="remove the Docker containers, volumes and images xlakb made")
    sp.add_argument("--all", action="store_true", help="also the local base image")
    sp.set_defaults(func=cmd_gc)

    sp = sub.add_parser("site", help="build or serve the knowledge-base site")
    sp.add_argument("action", choices=["build", "serve"])
    sp.add_argument("--out", help="output folder (default: build/site)")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=int, default=8000)
    sp.set_defaults(func=cmd_site)

    sp = sub.add_parser(
        "bisect",
        help="find the release, nightly or commit that introduced or fixed a bug",
        description="Bisect a record's reproducer over releases (default), nightly wheels by date, "
        "commits of a local pytorch/xla clone, or the settings of a failing configuration. Interrupted runs resume where they stopped. "
        "With --script FILE (arguments after --) a script is bisected without a record: bad is what --regress "
        "and --match say (default: a non-zero exit), exit 125 is untestable, and the report is printed and "
        "written where --report says.",
    )
    sp.add_argument("id", nargs="?", help="the record (or --script FILE instead)")
    script_opts(sp)
    sp.add_argument(
        "--report",
        action="append",
        metavar="FILE",
        help="--script: also write the report here, .json or .md by the suffix (repeatable); never under bisect/",
    )
    sp.add_argument(
        "--source",
        choices=list(SOURCES),
        default="releases",
        help="releases (default), nightlies, commits, or settings (which environment variables and "
        "XLA_FLAGS entries of a failing configuration make the bug appear, on one release)",
    )
    sp.add_argument(
        "--start",
        help="release, date YYYY-MM-DD (nightlies), or commit/tag/date/#PR (commits); "
        "releases default: the oldest release the reproducer runs on",
    )
    sp.add_argument(
        "--end", help="likewise; releases default: the newest release it runs on (only --end given: walks back to find a start)"
    )
    sp.add_argument("--direction", choices=["introduced", "fixed"], help="default: inferred from the ends")
    sp.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="run each probe N times; disagreeing runs are reported as flaky"
    )
    sp.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="probes to run in parallel")
    sp.add_argument("--no-prepare", action="store_true", help="do not build the next midpoints' environments ahead")
    cluster_opt(sp)
    for arg in source_arguments() if sources else ():  # each source's own options
        sp.add_argument(*arg.flags, **dict(arg.kwargs))
    sp.add_argument(
        "--narrow",
        action="store_true",
        help="releases, then the nightlies between the two releases found, then (with --repo) the commits "
        "between those nightlies; one report per stage",
    )
    sp.add_argument("--fresh", action="store_true", help="ignore cached verdicts and saved progress")
    sp.add_argument("--no-save", action="store_true", help="do not write bisect/<id>/bisect-<source>.json")
    runner_opts(sp)
    sp.set_defaults(func=cmd_bisect)
    return p


def _split_script_args(given: list[str]) -> tuple[list[str], list[str]]:
    """xlakb's own arguments and, after ``--`` in a command with ``--script``, the script's (as ``cargo run --``)."""
    if "--" in given and any(a == "--script" or a.startswith("--script=") for a in given[: given.index("--")]):
        cut = given.index("--")
        return given[:cut], given[cut + 1 :]
    return given, []


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    ours, script_args = _split_script_args(list(given))
    parser = build_parser(sources="bisect" in ours)
    args, extra = parser.parse_known_args(ours)
    # argparse fills an optional positional (``upstream import [file]``) before it reads the options between the
    # two, so ``import --seeded FILE`` leaves FILE over: it is that positional
    if len(extra) == 1 and not extra[0].startswith("-") and getattr(args, "file", "") is None:
        args.file = extra[0]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.argv = list(given)  # the exact command, for reports
    args.script_args = script_args
    try:
        return args.func(args)
    except XlakbError as err:
        print(f"xlakb: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("xlakb: interrupted (run the same command again to resume; finished work is kept)", file=sys.stderr)
        return EXIT_INTERRUPT
    except BrokenPipeError:
        return 0
    except Exception:  # noqa: BLE001 - anything unexpected: exit 3 with a log to paste into a bug report
        from .envs import cache_dir

        stamp = _dt.datetime.now().strftime("%Y%m%dT%H%M%S")
        log = cache_dir() / f"crash-{stamp}.log"
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(f"xlakb {__version__}\nargv: {sys.argv}\n\n{traceback.format_exc()}")
            where = f"details in {log}"
        except OSError:
            where = "traceback follows"
            traceback.print_exc()
        print(f"xlakb: internal error ({where}); please report it with that file", file=sys.stderr)
        return EXIT_BUG
    finally:
        from .envs.warm import close_pool

        close_pool()  # the warm servers this command started end with it


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
