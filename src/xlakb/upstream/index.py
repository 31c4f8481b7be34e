"""Clusters of upstream reports with the same error signature, and what a paste matches among them.

A cluster knows its issues (states, labels, dates), the pull requests that say they fix one of them, the
proven records that name one, and the first release with a fix when a record or a mined proof gives it.
Pure code over the stored reports and the records' data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .signature import (
    IMPORT_ERROR,
    MAX_CUT_LINES,
    MIN_BARE,
    MIN_CUT,
    MIN_TAIL,
    SPECIFIC_FRAME,
    TITLE_SEPARATORS,
    ErrorLine,
    bare_lines,
    error_lines,
    guilty_frames,
    import_stop,
    kept_frames,
    literal_length,
    message_of,
    title_line,
)
from .store import Report


@dataclass
class Cluster:
    key: str
    signature: str
    location: str
    kind: str
    helper: str = ""  # the error comes out of this helper; location is its caller (see signature.ErrorLine)
    #: only a fatal signal with no guilty place (signature.ErrorLine.consequence): the reports may be any crashes
    generic: bool = False
    #: of those, only a failing test's verdict (signature.ErrorLine.verdict): the reports may be any failing tests
    test: bool = False
    issues: list[Report] = field(default_factory=list)
    fixed_by: list[int] = field(default_factory=list)
    first_fixed: str | None = None
    records: list[str] = field(default_factory=list)
    #: reports stored as open that a commit of the clone says it fixes: the stored state is stale
    stale: list[int] = field(default_factory=list)
    #: the guilty frames its reports show (signature.guilty_frames), each once
    frames: list[str] = field(default_factory=list)
    #: what its reports' threads say was the cause, where a developer said it (upstream.causes, as JSON)
    causes: list[dict] = field(default_factory=list)
    #: the message catalog's templates its error (or title) instantiates, those that say enough without their
    #: values (:func:`template_text`): a pasted line of the same template with other values is the same message
    templates: list[str] = field(default_factory=list)

    @property
    def pulls_only(self) -> bool:
        """Its reports are all pull requests: a pull request quotes an error no stored issue shows (its fix, or a
        test that fails with it)."""
        return bool(self.issues) and all(r.pull_request for r in self.issues)

    @property
    def listed(self) -> bool:
        """An error issues show, as lists of reported errors show it: not a title, nor an error only pull
        requests quote (both are matched by triage, never listed)."""
        return self.kind != "title" and not self.pulls_only

    @property
    def open(self) -> list[Report]:
        return [r for r in self.issues if r.state == "open"]

    @property
    def since(self) -> str | None:
        dates = sorted(r.created_at for r in self.issues if r.created_at)
        return dates[0] if dates else None

    @property
    def labels(self) -> list[str]:
        return sorted({label for r in self.issues for label in r.labels})

    @classmethod
    def from_json(cls, data: dict) -> Cluster:
        """A cluster as :meth:`to_json` wrote it (the compiled index keeps clusters this way)."""
        issues = [
            Report(
                number=i["number"],
                title=i["title"],
                state=i["state"],
                url=i["url"],
                labels=list(i.get("labels") or []),
                created_at=i.get("created_at"),
                seeded=bool(i.get("seeded")),
                pull_request=bool(i.get("pull_request")),
            )
            for i in data.get("issues", [])
        ]
        fields = (
            "key",
            "signature",
            "location",
            "kind",
            "helper",
            "generic",
            "test",
            "fixed_by",
            "first_fixed",
            "records",
            "stale",
            "frames",
            "causes",
            "templates",
        )
        return cls(**{k: data[k] for k in fields if k in data}, issues=issues)

    def to_json(self) -> dict:
        """The cluster as JSON; empty lists and unknown values are left out (the compiled index and the paste
        box's data carry every cluster: most have no fix, record, frame or cause)."""
        return _lean(
            {
                "key": self.key,
                "signature": self.signature,
                "location": self.location,
                "kind": self.kind,
                "helper": self.helper,
                "generic": self.generic,
                "test": self.test,
                "issues": [
                    {
                        "number": r.number,
                        "title": r.title,
                        "state": r.state,
                        "url": r.url,
                        "created_at": r.created_at,
                        "labels": r.labels,
                        "seeded": r.seeded,
                        "pull_request": r.pull_request,
                    }
                    for r in self.issues
                ],
                "fixed_by": self.fixed_by,
                "first_fixed": self.first_fixed,
                "records": self.records,
                "stale": self.stale,
                "frames": self.frames,
                "causes": self.causes,
                "templates": self.templates,
            }
        )


def _lean(data: dict) -> dict:
    """``data`` without its empty lists, ``None`` and ``False`` values (a reader takes the default), the reports
    in its ``issues`` too. Texts stay, empty or not: an empty location is a fact the matcher compares."""
    out = {k: v for k, v in data.items() if v is not None and v is not False and v != []}
    if "issues" in out:
        out["issues"] = [_lean(i) for i in out["issues"]]
    return out


def build(
    reports: Mapping[int, Report],
    records: Iterable[Mapping] = (),
    fixes: Mapping[int, str] | None = None,
    linked: Mapping[int, list[dict]] | None = None,
    causes: Mapping[int, object] | None = None,
) -> list[Cluster]:
    """Every cluster: the issues (not pull requests) grouped by each error signature they show (an issue
    with two different errors is in two clusters), with the pull requests closing them, the records naming
    them and ``fixes`` (fix PR -> first release with it, from records and mined proofs), and the commits a
    clone says fix them (``linked``: issue -> [{pr, commit, release}], :mod:`xlakb.upstream.links`; a report
    stored as open that one of them fixes is ``stale``), and what their threads say was the cause
    (``causes``: issue -> :class:`xlakb.upstream.causes.Cause`). A report showing guilty frames and no error line is in
    a ``stack`` cluster of its innermost frame (no signature: only its frames match). A title that may be the
    error (:func:`~xlakb.upstream.signature.title_line`) makes a ``title`` cluster, matched only by
    :func:`match_titles`. Most reported first.

    A fatal-signal line with no guilty place (ErrorLine.consequence) is what the crash printed last: a report
    that shows the error it came of is grouped by that error only; a report that shows nothing but the
    signal is grouped with the other bare signals in a ``generic`` cluster, listed after the errors."""
    fixes = dict(fixes or {})
    by_key: dict[str, Cluster] = {}
    for r in sorted(reports.values(), key=lambda r: r.number):
        if r.pull_request:
            continue
        frames = kept_frames(r.frames)
        for e in _titles(r.error_lines()):
            c = by_key.get(e.key)
            if c is None:
                c = by_key[e.key] = Cluster(e.key, e.signature, e.location, e.kind, e.helper, e.consequence, e.verdict)
            if r not in c.issues:
                c.issues.append(r)
            c.frames.extend(f for f in frames if f not in c.frames)
        if not r.errors and frames:
            # a thread that shows a stack and no error line (the message cut off) is known by its innermost
            # guilty frame: a paste of the same stack finds it (match_frames)
            key = f"stack @ {frames[0]}"
            c = by_key.get(key)
            if c is None:
                c = by_key[key] = Cluster(key, "", frames[0], "stack")
            c.issues.append(r)
            c.frames.extend(f for f in frames if f not in c.frames)
        if t := title_line(r.title):
            # the title, when it may be the error (match_titles): reports titled alike are one cluster
            key = f"title: {t.signature.lower()}"
            c = by_key.get(key)
            if c is None:
                c = by_key[key] = Cluster(key, t.signature, "", "title")
            c.issues.append(r)
    _fold_unlocated(by_key)
    _fold_titles(by_key)
    _add_pulls(reports, by_key)
    closing: dict[int, set[int]] = {}
    for pr in reports.values():
        if pr.pull_request and (pr.merged or pr.state == "closed"):
            for n in pr.closes:
                closing.setdefault(n, set()).add(pr.number)
    for n, commits in (linked or {}).items():
        for f in commits:
            if f.get("pr"):
                closing.setdefault(int(n), set()).add(int(f["pr"]))
                if f.get("release"):
                    fixes.setdefault(int(f["pr"]), f["release"])
    fixed_issues = {int(n) for n, commits in (linked or {}).items() if commits}
    naming: dict[int, set[str]] = {}
    record_fixes: dict[str, list[int]] = {}
    for data in records:
        up = data.get("upstream", {})
        for n in up.get("issues", []):
            naming.setdefault(int(n), set()).add(data["id"])
        record_fixes[data["id"]] = [int(n) for n in up.get("fixed_by", [])]
        fixed_in = data.get("versions", {}).get("fixed_in")
        for n in up.get("fixed_by", []):
            if fixed_in:
                fixes.setdefault(int(n), fixed_in)
    for c in by_key.values():
        numbers = {r.number for r in c.issues}
        if c.pulls_only:  # the records whose fix is one of these pull requests
            c.records = sorted(rid for rid, prs in record_fixes.items() if numbers & set(prs))
            continue
        c.records = sorted({rid for n in numbers for rid in naming.get(n, ())})
        c.fixed_by = sorted(
            {p for n in numbers for p in closing.get(n, ())} | {p for rid in c.records for p in record_fixes.get(rid, [])}
        )
        shipped = sorted((fixes[p] for p in c.fixed_by if p in fixes), key=lambda v: tuple(int(x) for x in v.split(".")))
        c.first_fixed = shipped[0] if shipped else None
        c.stale = sorted(r.number for r in c.issues if r.state == "open" and r.number in fixed_issues)
        c.causes = [causes[n].to_json() for n in sorted(numbers) if n in (causes or {})]
    # most reported first; clusters of a bare fatal signal (any crashes) after every error
    return sorted(by_key.values(), key=lambda c: (c.generic, -len(c.issues), c.key))


def _titles(lines: list[ErrorLine]) -> list[ErrorLine]:
    """The lines a report or paste is known by: a fatal signal with no guilty place is left out when the paste
    shows the error the crash came of (ErrorLine.consequence)."""
    if any(not e.consequence for e in lines):
        return [e for e in lines if not e.consequence]
    return lines


def _add_pulls(reports: Mapping[int, Report], by_key: dict[str, Cluster]) -> None:
    """Pull requests that quote an error no stored issue shows (neither its signature nor its key), in clusters
    of their own: a paste of that error finds the pull request (its fix, or a test that fails with it) when no
    issue matches (:func:`match`). A bare fatal signal says nothing of which error: left out."""
    shown = {c.signature for c in by_key.values() if c.kind != "title"}
    for r in sorted(reports.values(), key=lambda r: r.number):
        if not r.pull_request:
            continue
        for e in _titles(r.error_lines()):
            if e.consequence or e.signature in shown:
                continue
            c = by_key.get(e.key)
            if c is None:
                c = by_key[e.key] = Cluster(e.key, e.signature, e.location, e.kind, e.helper, issues=[r])
            elif c.pulls_only and r not in c.issues:
                c.issues.append(r)


def _fold_titles(by_key: dict[str, Cluster]) -> None:
    """A title that states context before an error another report's title states alone ("Runs on GPU, error on
    TPU: Computation requires more parameters ...") is that error: its reports go with that title's cluster."""
    alone = {c.signature.lower(): c for c in by_key.values() if c.kind == "title"}
    for c in [c for c in by_key.values() if c.kind == "title"]:
        tails = _tails(c.signature.lower(), TITLE_SEPARATORS)[1:]
        target = next((alone[t] for t in tails if t in alone and literal_length(t) >= MIN_TAIL), None)
        if target is None or target is c:
            continue
        target.issues.extend(r for r in c.issues if r not in target.issues)
        target.issues.sort(key=lambda r: r.number)
        del by_key[c.key]
        alone.pop(c.signature.lower(), None)


def _fold_unlocated(by_key: dict[str, Cluster]) -> None:
    """Reports of an error without its guilty location go with the one cluster of that error that has one
    (when several have, the paste could be any of them: it stays apart). An error that comes out of a
    helper is never folded: its text is every caller's, so one known caller says nothing of the next report."""
    by_sig: dict[str, list[Cluster]] = {}
    for c in by_key.values():
        if c.kind != "title":
            by_sig.setdefault(c.signature, []).append(c)
    for sig, group in by_sig.items():
        if any(c.helper for c in group):
            continue
        located = [c for c in group if c.location]
        bare = [c for c in group if not c.location]
        if len(located) == 1 and bare:
            target = located[0]
            for c in bare:
                for r in c.issues:
                    if r not in target.issues:
                        target.issues.append(r)
                target.frames.extend(f for f in c.frames if f not in target.frames)
                del by_key[c.key]
            target.issues.sort(key=lambda r: r.number)


@dataclass(frozen=True)
class Reported:
    """A cluster a paste matches: by one of its error lines, or (``line`` None) by the guilty frames it shares
    with the cluster's reports (``frames``)."""

    cluster: Cluster
    line: ErrorLine | None
    exact: bool  # the guilty locations agree too (or neither names one)
    frames: tuple[str, ...] = ()
    #: how an inexact line matched, when not by its signature or message: "alone" (a message pasted alone),
    #: "cut" (one line starts the other), "cause" (a status's cause under other context), "sentence" (the same
    #: first sentence, other explanations after it)
    how: str = ""


_KIND_ORDER = ("check", "assert", "status", "lowering", "exception", "crash")


def _elsewhere(e: ErrorLine, c: Cluster) -> bool:
    """Both name a guilty place and they differ: a look-alike from another function is another bug (a helper's
    own place names no function: it agrees with every caller)."""
    return e.specific and bool(c.location) and c.location != c.helper and e.location != c.location


_IMPORT_ERROR = re.compile(IMPORT_ERROR)

#: catalog kinds whose lines are not errors (a warning says nothing of which bug failed)
_NOT_ERRORS = {"warn"}


def template_text(row: Mapping) -> str:
    """The text of a message catalog row (see :func:`xlakb.triage.export_catalog`) when two lines that
    instantiate it are the same message whatever values it was given: it inserts a value (``…``), what it says
    around its values is at least ``MIN_TAIL`` characters, and it can be an error (not only a warning); else ""."""
    kinds = set(row.get("kinds") or ())
    if "\u2026" not in row["text"] or row["literal"] < MIN_TAIL or (kinds and kinds <= _NOT_ERRORS):
        return ""
    return row["text"]


def _ranked(found: dict[str, tuple[int, Reported]], seen: set[str]) -> list[Reported]:
    """Hits found as {cluster key: (how much they share, hit)}, best first: the most shared, then the most
    reported; their clusters are added to ``seen``."""
    ranked = sorted(found.values(), key=lambda t: (-t[0], -len(t[1].cluster.issues), t[1].cluster.key))
    seen.update(r.cluster.key for _, r in ranked)
    return [r for _, r in ranked]


def match_templates(templates: Iterable[tuple[str, str]], clusters: Iterable[Cluster], seen: set[str]) -> list[Reported]:
    """The clusters whose error (or title) instantiates a catalog template a pasted line instantiates too
    (``templates``: [template text, the pasted line], from the catalog's origins of the paste): the same
    message printed with other values (a type, a size, a name torch_xla inserts), as the catalog knows the
    message's fixed words. Inexact (how ``template``); clusters in ``seen`` are left out and those found added.
    Best first: the longest template, then the most reported."""
    found: dict[str, tuple[int, Reported]] = {}
    for text, line in templates:
        said = literal_length(text.replace("\u2026", ""))
        for c in clusters:
            if c.key in seen or c.generic or text not in c.templates:
                continue
            if c.key not in found or found[c.key][0] < said:
                found[c.key] = (said, Reported(c, ErrorLine("template", line, text, ""), exact=False, how="template"))
    return _ranked(found, seen)


def match_imports(stop: tuple[str, list[str]] | None, clusters: Iterable[Cluster], seen: set[str]) -> list[Reported]:
    """The clusters of an import error that names what a traceback stops importing (``stop``:
    :func:`~xlakb.upstream.signature.import_stop`): a paste of the stack alone, its message cut off, failed
    there. A name counts as a whole module or name (``_XLAC`` in ``_XLAC.so: undefined symbol``, never
    ``torch`` in ``torch._six``). Inexact (how ``import``); clusters in ``seen`` are left out and those found
    added. Best first: the most reported."""
    if stop is None:
        return []
    code, names = stop
    wanted = [re.compile(r"(?<![\w.])" + re.escape(n) + r"(?:\.so)?(?![\w.])") for n in names]
    found = [
        c
        for c in clusters
        if c.key not in seen
        and not c.generic
        and _IMPORT_ERROR.match(c.signature)
        and any(rx.search(c.signature) for rx in wanted)
    ]
    found.sort(key=lambda c: (-len(c.issues), c.key))
    seen.update(c.key for c in found)
    return [Reported(c, ErrorLine("import", code, code, ""), exact=False, how="import") for c in found]


def match(text: str, clusters: Iterable[Cluster], templates: Iterable[tuple[str, str]] = ()) -> list[Reported]:
    """The clusters whose signature a paste shows: same words after normalisation, or the same message under
    another exception type or none (:func:`~xlakb.upstream.signature.message_of`; inexact); where both name a
    guilty location it must be the same (a look-alike from another function is another bug; a helper's own
    place names no function: it agrees with every caller, inexactly). Best first: the most specific kind, then
    the most reported. Messages compare in any letter case. A paste whose error lines match no cluster is tried,
    inexactly and in this order, by a line that is a message pasted alone (:func:`~xlakb.upstream.signature.
    bare_lines`) or a report's title (:func:`match_titles`), by a line cut short or a status's cause
    (:func:`match_cut`) or a title the line starts with, by a message catalog template a line and the cluster's
    error both instantiate (``templates``, :func:`match_templates`), then a stack alone by the import
    statement it stops at (:func:`match_imports`) and by its guilty frames (:func:`match_frames`: it
    shows only a stack, or a reworded message). A hit of pull requests only (an error no issue shows,
    :func:`_add_pulls`) lets the next stage look for an issue, and comes after it."""
    clusters = list(clusters)
    lines = _titles(error_lines(text))
    by_sig: dict[str, list[Cluster]] = {}
    by_message: dict[str, list[Cluster]] = {}
    for c in clusters:
        if c.kind == "title":
            continue  # a title is matched only by match_titles
        by_sig.setdefault(c.signature, []).append(c)
        if message := message_of(c.signature):
            by_message.setdefault(message.lower(), []).append(c)  # the same words in other letter case
    out: list[Reported] = []
    seen = set()
    for e in lines:
        message = message_of(e.signature)
        same = by_sig.get(e.signature, [])
        for c in [*same, *(c for c in by_message.get(message.lower(), ()) if message and c not in same)]:
            if _elsewhere(e, c):
                continue
            if c.key in seen:
                continue
            seen.add(c.key)
            out.append(Reported(c, e, exact=e.location == c.location and c.signature == e.signature))
    out.sort(
        key=lambda h: (
            h.cluster.generic,
            _KIND_ORDER.index(h.cluster.kind) if h.cluster.kind in _KIND_ORDER else 9,
            not h.exact,
            -len(h.cluster.issues),
        )
    )
    if not _answered(out):
        # a message pasted alone, without its type or a log's prefix, is known by its words (inexactly)
        bare = bare_lines(text)
        alone = []
        for e in bare:
            for c in by_message.get(e.signature.lower(), ()):
                if c.key not in seen:
                    seen.add(c.key)
                    alone.append(Reported(c, e, exact=False, how="alone"))
        # a report titled by the error, which its thread does not show as an error line
        mine = [*(e for e in lines if not e.consequence), *bare]
        out = [*alone, *match_titles(mine, clusters, seen), *out]
        # a line cut short (a terminal, a copied excerpt) is the start of the stored one, or the stored one of it
        if not _answered(out):
            cut = [h for h in match_cut(mine, clusters) if h.cluster.key not in seen]  # a pull request's is there
            out = [*cut, *match_titles(mine, clusters, seen, cut=True), *out]
        # the same catalog message with other values inserted (the catalog knows which words are fixed)
        if not _answered(out):
            out = [*match_templates(templates, clusters, seen), *out]
    if not _answered(out):
        # a paste that shows its own error must share its innermost guilty frame (the same function failed,
        # its message reworded); a paste of a stack alone, any specific frame, after the import errors of the
        # import statement it stops at
        shown = any(not e.consequence for e in lines)
        imported = [] if shown else match_imports(import_stop(text), clusters, seen)
        framed = [h for h in match_frames(guilty_frames(text), clusters, innermost=shown) if h.cluster.key not in seen]
        out = [*imported, *framed, *out]
    # issues first, then pull requests, then a bare fatal signal's reports
    return sorted(out, key=lambda h: (h.cluster.generic, h.cluster.pulls_only))


def _answered(hits: list[Reported]) -> bool:
    """A hit names an issue: neither a bare fatal signal's (any crash) nor only pull requests' (the next stage
    may find the issue; a pull request's hit comes after it)."""
    return any(not h.cluster.generic and not h.cluster.pulls_only for h in hits)


#: the kinds of error whose message is a chain of ``context: cause``
CHAINED = ("status", "check")


def _tails(message: str, separators: tuple[str, ...] = (": ",)) -> list[str]:
    """A message and each tail of it that starts after a ``": "``: outer layers prefix their context to an
    error (``TPU initialization failed: ``, a status code, ``Failed to import x because of ...: ``). A title's
    are also after a reporter's dash (``TITLE_SEPARATORS``); in order of where they start."""
    starts = sorted({m.end() for sep in separators for m in re.finditer(re.escape(sep), message)})
    return [message, *(message[at:] for at in starts)]


def _line_tails(lines: list[ErrorLine]) -> list[tuple[ErrorLine, list[str]]]:
    """The last ``MAX_CUT_LINES`` lines of a paste, each with the tails of its message in lower case."""
    return [(e, _tails((message_of(e.signature) or e.signature).lower())) for e in lines[-MAX_CUT_LINES:]]


def _sentence(message: str) -> str:
    """A message's first sentence when more follow (up to the first ``". "``), else ""."""
    at = message.find(". ")
    return message[:at] if at > 0 else ""


def match_cut(lines: list[ErrorLine], clusters: Iterable[Cluster]) -> list[Reported]:
    """The clusters whose message and a pasted line's message agree but for a cut: one starts with the other
    (a terminal's width, an excerpt, a stored line cut by its thread, maybe mid-word; the shorter says at least
    ``MIN_CUT`` characters; a bare line, which says nothing of being an error, only as the cut one); weaker, a
    tail of one after an outer layer's ``context: `` starts with a tail of the other, or both say the same first
    sentence and then go on differently (at least ``MIN_TAIL``). Inexact. Best first: cuts before the weaker, the most shared,
    then the most support (the reports of every candidate whose message agrees with this one, one of the two
    cut shorter: stored lines of one bug cut at different places support each other), then the most reported."""
    found: dict[str, tuple[bool, int, str, Reported]] = {}
    mine = _line_tails(lines)
    for c in clusters:
        if c.generic or c.kind in ("stack", "title"):
            continue
        theirs = (message_of(c.signature) or c.signature).lower()
        their_tails = _tails(theirs)
        for e, tails in mine:
            if _elsewhere(e, c):
                continue
            # a status is a chain of contexts (absl and TensorFlow prefix each layer's own): a tail of one is
            # the same error; an exception's words after a colon are its own (a list, a value), not a cause
            chained = e.kind in CHAINED or c.kind in CHAINED
            for i, a in enumerate(tails):
                for j, b in enumerate(their_tails):
                    short, long = sorted((a, b), key=len)
                    tail = i > 0 or j > 0
                    if tail and not chained:
                        break
                    if long.startswith(short) and (tail or short != long):
                        if e.kind == "message" and short is not a:  # a bare line is no error by itself: only it is cut
                            continue
                        weak, shared, how = tail, literal_length(short), "cause" if tail else "cut"
                    elif not tail and (first := _sentence(a)) and first == _sentence(b):
                        # the same first sentence, then other explanations (the dispatcher lists backends, a
                        # release adds a hint): the first sentence states the error
                        weak, shared, how = True, literal_length(first), "sentence"
                    else:
                        continue
                    if shared < (MIN_TAIL if weak else MIN_CUT):
                        continue
                    best = found.get(c.key)
                    if best is None or (best[0], -best[1]) > (weak, -shared):
                        found[c.key] = (weak, shared, theirs, Reported(c, e, exact=False, how=how))
    support = {
        key: sum(len(r.cluster.issues) for _, _, other, r in found.values() if other.startswith(m) or m.startswith(other))
        for key, (_, _, m, _) in found.items()
    }
    ranked = sorted(
        found.values(),
        key=lambda t: (t[0], -t[1], -support[t[3].cluster.key], -len(t[3].cluster.issues), t[3].cluster.key),
    )
    out, shown = [], set()
    for *_, r in ranked:  # a report whose stored lines were cut at two places is in two clusters: named once
        numbers = {i.number for i in r.cluster.issues}
        if numbers <= shown:
            continue
        shown |= numbers
        out.append(r)
    return out


def _goes_on(line: str, start: str) -> bool:
    """``line`` is ``start`` and more, from a word's end on (a title that stops before the details)."""
    return len(line) > len(start) and line.startswith(start) and not (line[len(start)].isalnum() or line[len(start)] == "_")


def match_titles(lines: list[ErrorLine], clusters: Iterable[Cluster], seen: set[str], cut: bool = False) -> list[Reported]:
    """The ``title`` clusters whose title states a pasted line's error: the line's message, or a tail of it after
    an outer layer's ``context: ``, is the title or a tail of it after the reporter's own context ("Runs on
    GPU, error on TPU: ..."), in any letter case. What is shared must say ``MIN_BARE`` characters, ``MIN_TAIL``
    when a tail is involved (a title is prose until it proves otherwise). With ``cut``, an error line (not a
    bare one) goes on after the title at a word's end (a title that stops before the details; ``MIN_CUT``, or ``MIN_TAIL`` with a
    tail). Inexact (how ``title`` or ``title-cut``); clusters in ``seen`` are left out and those found added.
    Best first: the most said, then the most reported."""
    found: dict[str, tuple[int, Reported]] = {}
    mine = _line_tails(lines)
    for c in clusters:
        if c.kind != "title" or c.key in seen:
            continue
        theirs = _tails(c.signature.lower(), TITLE_SEPARATORS)
        for e, tails in mine:
            if cut and e.kind == "message":
                continue  # a bare line is no error by itself: any prose may start with a title's words
            for i, a in enumerate(tails):
                for j, b in enumerate(theirs):
                    least = MIN_TAIL if i or j else (MIN_CUT if cut else MIN_BARE)
                    said = literal_length(b)
                    if said < least:
                        continue
                    if a == b if not cut else _goes_on(a, b):
                        if c.key not in found or found[c.key][0] < said:
                            found[c.key] = (said, Reported(c, e, exact=False, how="title-cut" if cut else "title"))
    return _ranked(found, seen)


def frame_weights(clusters: Iterable[Cluster]) -> dict[str, int]:
    """How many clusters show each guilty frame: a frame many bugs pass through says little of one."""
    df: dict[str, int] = {}
    for c in clusters:
        for f in c.frames:
            df[f] = df.get(f, 0) + 1
    return df


def match_frames(frames: list[str], clusters: Iterable[Cluster], innermost: bool = False) -> list[Reported]:
    """The clusters whose reports show the same guilty frames as a paste: at least one shared frame must be
    specific (in at most ``SPECIFIC_FRAME`` clusters), and with ``innermost`` the paste's innermost frame must be
    shared; best first by the specificity of what is shared (the sum of 1/clusters over shared frames), then
    the most reported."""
    clusters = [c for c in clusters if c.frames and not c.generic]
    if not frames or not clusters:
        return []
    df = frame_weights(clusters)
    scored = []
    for c in clusters:
        shared = tuple(f for f in frames if f in c.frames)
        if not any(df[f] <= SPECIFIC_FRAME for f in shared) or (innermost and frames[0] not in shared):
            continue
        scored.append((sum(1 / df[f] for f in shared), c, shared))
    scored.sort(key=lambda t: (-t[0], -len(t[1].issues), t[1].key))
    return [Reported(c, None, exact=False, frames=shared) for _, c, shared in scored]
