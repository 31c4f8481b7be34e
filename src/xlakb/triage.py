"""Triage: which known records a log or traceback shows, weighed by evidence.

A record's ``signatures`` carry a kind (see :data:`KINDS`):

* ``message`` — a regex on the error text (a plain string in a record is a message);
* ``check``   — a C++ CHECK/RET_CHECK text or a source location (``Check failed: has_sharding()``,
  ``tensor_methods.cpp``);
* ``frame``   — a Python stack frame: ``file`` (base name, regex) and optionally ``function`` (regex);
* ``call``    — an API call as written in the user's code (a regex on traceback source lines and the log);
* ``env``     — an environment variable the bug needs (``name``, optionally a ``value`` regex).

The rules, in one place (:func:`judge`), mirrored by the site's paste box
(``site/assets/javascripts/triage.js``, tested against this module on the same corpus):

1. A log with no sign of torch_xla (no torch_xla frame, import, version, or XLA/PJRT log line) matches
   nothing.
2. A record matches when at least one of its ``message``/``check`` signatures matches; the message is a
   ``message`` hit when there is one, else the first ``check`` hit.
3. It is **strong** when, besides, context matched: a ``frame``, a ``call`` or a ``check`` signature other
   than the one taken as the message. Otherwise it is **possible** (shown after the strong ones).
4. Score: the sum of the weights (:data:`WEIGHTS`) of the distinct signatures that matched; ``env``
   only adds to the score. Matches are ranked strong first, then by score, then by record id.

Versions come from the log (``pip freeze``/``pip list`` lines, ``torch_xla.__version__`` printed, wheel or
dist-info paths) or from the caller, and the advice from the record's measured matrix.

Library code: pure functions over plain data (the same JSON the site exports); reading a log, with its
limits, is :func:`read_log`.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Iterable

from .errors import XlakbError

KINDS = ("message", "check", "frame", "call", "env")
MESSAGE_KINDS = ("message", "check")
CONTEXT_KINDS = ("frame", "call", "check")
WEIGHTS = {"message": 3, "check": 4, "frame": 2, "call": 2, "env": 1}

class BadInput(XlakbError):
    """The log cannot be triaged at all (empty, binary, unreadable): the CLI exits 2."""


# -- reading a log --------------------------------------------------------------------------
WHOLE_LIMIT = 64 << 20      # logs up to this size are read whole
KEPT_LIMIT = 16 << 20       # larger ones: the head, the tail and the lines that matter, up to this much
HEAD_TAIL = 2 << 20
#: lines of a streamed log that can carry evidence (on bytes: no decoding of what is skipped)
_INTERESTING = re.compile(
    rb"Error|error|Exception|FAILED|[Ff]ailed|Check|CHECK|assert|Assert|abort|Abort|Traceback|File \"|"
    rb"torch[_-]xla|XLA|PJRT|pjrt|xla/|Killed|signal|version|==|Warning|^[FE]\d{4} ", re.M)


@dataclass(frozen=True)
class Log:
    """A log as triage sees it: its (possibly reduced) text and how it was read."""

    text: str
    source: str
    size: int
    notes: tuple[str, ...] = ()


def read_log(stream: BinaryIO, source: str) -> Log:
    """Read a log from a binary stream: XlakbError for an empty log or binary data; invalid UTF-8 is
    replaced (noted); a log over 64 MiB is streamed, keeping its head, tail and the lines that can
    carry evidence (up to 16 MiB)."""
    head = stream.read(WHOLE_LIMIT + 1)
    notes: list[str] = []
    if b"\x00" in head[:65536]:
        raise BadInput(f"{source}: binary data, not a text log (a NUL byte in its first 64 KiB)",
                         hint="pass the text log or traceback, not a core dump or archive")
    size = len(head)
    if size > WHOLE_LIMIT:
        kept = [head[:HEAD_TAIL]]
        budget = KEPT_LIMIT - 2 * HEAD_TAIL
        tail = bytearray()
        carry = b""
        chunk = head[HEAD_TAIL:]
        while chunk:
            buf = carry + chunk
            cut = buf.rfind(b"\n") + 1
            body, carry = buf[:cut], buf[cut:]
            pos = 0
            while budget > 0:  # whole lines around each hit, one scan of the chunk in C
                m = _INTERESTING.search(body, pos)
                if m is None:
                    break
                start = body.rfind(b"\n", 0, m.start()) + 1
                end = body.find(b"\n", m.end())
                end = len(body) if end < 0 else end + 1
                kept.append(body[start:end])
                budget -= end - start
                pos = end
            tail += chunk
            if len(tail) > 2 * HEAD_TAIL:
                del tail[:-HEAD_TAIL]
            chunk = stream.read(8 << 20)
            size += len(chunk)
        tail_text = bytes(tail[-HEAD_TAIL:])
        kept.append(b"\n" + tail_text[tail_text.find(b"\n") + 1:])  # from a line start
        head = b"".join(kept)
        notes.append(f"{source} is {size >> 20} MiB: read as a stream, keeping its first and last 2 MiB and the lines "
                     f"that can carry evidence")
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd") - head.decode("utf-8", "ignore").count("\ufffd")
    if bad:
        notes.append(f"{source}: {bad} byte(s) of invalid UTF-8 replaced")
    if not text.strip():
        raise BadInput(f"{source}: the log is empty", hint="pass the log or traceback of the failing run")
    return Log(text, source, size, tuple(notes))


def read_log_file(path: Path) -> Log:
    try:
        with open(path, "rb") as f:
            return read_log(f, str(path))
    except IsADirectoryError:
        raise BadInput(f"{path}: is a folder, not a log file") from None
    except OSError as err:
        raise BadInput(f"{path}: cannot read ({err.strerror})") from None


def log_from_text(text: str, source: str = "text") -> Log:
    return read_log(io.BytesIO(text.encode("utf-8")), source)


# -- what a log shows -----------------------------------------------------------------------------
# The patterns below are data: the site's paste box reads the same strings (see :func:`export`).
#: a Python traceback frame: path, function, and the source line printed under it
FRAME_PATTERN = r'^[ \t]*File "([^"]+)", line \d+, in (\S+)[^\n]*\n(?:([^\n]*)\n)?'
#: (what, pattern, flags): the signs that a log comes from a torch_xla program
TORCH_XLA_SIGNS = (
    ("a torch_xla frame or path", r"[/\\]torch_xla[/\\]", ""),
    ("a torch_xla import", r"^\s*(?:import torch_xla|from torch_xla[\w.]* import)", "m"),
    ("a torch_xla version", r"torch[_-]xla(?:==|-|\s+)\d+\.\d+|torch_xla\.__version__", "i"),
    ("an XLA/PJRT log line or IR dump", r"external/xla/|xla/(?:service|pjrt|hlo)/|torch_xla/csrc|pjrt_computation_client|"
                             r"\bPJRT_DEVICE\b|XLA_[A-Z_]+=|_XLAC\b|TfrtCpuClient|PjRt|pjrt_c_api|\bxla::[a-z_]+\(", ""),
)
_V = r"(\d+\.\d+(?:\.\d+)?(?:[.+][\w.]+)?)"
_NAMES = {"torch_xla": r"torch[_-]xla", "torch": r"(?<![\w-])torch(?![_-]xla)(?!\w)"}
#: (where, pattern with {name}, flags): a package's version in a log, first match wins
VERSION_PATTERNS = (
    ("pip freeze", r"^\s*{name}\s*==\s*" + _V + r"\s*$", "im"),                       # torch-xla==2.5.1
    ("pip list", r"^\s*{name}\s+" + _V + r"\s*$", "im"),                               # torch-xla   2.5.1
    ("printed version", r"{name}(?:\.__version__)?\s*(?:version)?\s*[:=]?\s*['\"]?(\d+\.\d+\.\d+(?:[.+][\w.]+)?)['\"]?", "i"),
    ("wheel or install path", r"{name}-(\d+\.\d+\.\d+(?:[.+]\w+)?)(?:[-.](?:cp|dist-info|py|whl))", "i"),
    ("pip install", r"Successfully installed[^\n]*?{name}-(\d+\.\d+\.\d+(?:\+\w+)?)(?![\w.])", "i"),
)
_FLAGS = {"i": re.I, "m": re.M, "s": re.S}


def _compile(pattern: str, flags: str = "") -> re.Pattern:
    value = 0
    for f in flags:
        value |= _FLAGS[f]
    return re.compile(pattern, value)


_FRAME = re.compile(FRAME_PATTERN, re.M)
_SIGNS = tuple((what, _compile(p, f)) for what, p, f in TORCH_XLA_SIGNS)
_VERSIONS = {name: tuple((where, _compile(p.format(name=rx), f)) for where, p, f in VERSION_PATTERNS)
             for name, rx in _NAMES.items()}
# Speed only (the site's engine runs the patterns on the whole text, with the same results): the
# lines that can hold a sign or a version, found with str.find, which is far faster than a regex.
_SIGN_NEEDLES = ("torch", "xla", "pjrt", "tfrtcpuclient")  # every sign holds one of these, in any case
_VERSION_NEEDLES = ("torch",)


def _lines_with(text: str, needles: tuple[str, ...]) -> str:
    """The lines of ``text`` holding any of ``needles`` (lower case, matched in any case), each with the
    line after it, in order."""
    folded = text.lower()
    if len(folded) != len(text):  # a character whose lower case is longer: positions would drift
        return text
    spans = []
    for needle in needles:
        i = folded.find(needle)
        while i != -1:
            start = text.rfind("\n", 0, i) + 1
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            after = text.find("\n", end + 1) if end < len(text) else -1
            spans.append((start, len(text) if after < 0 else after))
            i = folded.find(needle, end)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return "\n".join(text[a:b] for a, b in merged)


@dataclass(frozen=True)
class Facts:
    """What a log shows, extracted once for all records."""

    text: str
    frames: tuple[tuple[str, str, str, str], ...]   # (path, base name, function, source line)
    torch_xla: tuple[str, ...]                  # which signs of torch_xla it has
    torch_xla_version: str | None
    torch_version: str | None
    version_source: str | None

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Every word of the log (speed only: a signature whose key word is missing cannot match)."""
        return frozenset(re.findall(r"\w+", self.text))


def _version(text: str, name: str) -> tuple[str | None, str | None]:
    for where, pattern in _VERSIONS[name]:
        m = pattern.search(text)
        if m:
            return m.group(1), where
    return None, None


def facts(log: Log | str) -> Facts:
    text = log.text if isinstance(log, Log) else log
    frames = tuple((m.group(1), re.split(r"[/\\]", m.group(1))[-1], m.group(2), (m.group(3) or "").strip())
                   for m in _FRAME.finditer(text))
    near_signs = _lines_with(text, _SIGN_NEEDLES)
    signs = tuple(what for what, pattern in _SIGNS if pattern.search(near_signs))
    near_versions = _lines_with(text, _VERSION_NEEDLES)
    xla, where = _version(near_versions, "torch_xla")
    torch, _ = _version(near_versions, "torch")
    return Facts(text, frames, signs, xla, torch, where)


# -- signatures -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Signature:
    kind: str
    pattern: str = ""          # message, check, call: a regex; env: the value regex (optional)
    file: str = ""             # frame
    function: str = ""         # frame
    name: str = ""             # env

    def describe(self) -> str:
        if self.kind == "frame":
            return f"frame {self.file}" + (f" in {self.function}" if self.function else "")
        if self.kind == "env":
            return f"env {self.name}" + (f"={self.pattern}" if self.pattern else "")
        return f"{self.kind} {self.pattern}"


def parse_signature(item) -> Signature:
    """A record's signature: a plain string (a message) or a mapping with one kind as its key."""
    if isinstance(item, str):
        return Signature("message", item)
    kind = next(iter(item))
    value = item[kind]
    if kind == "frame":
        return Signature("frame", file=value["file"], function=value.get("function", ""))
    if kind == "env":
        if isinstance(value, str):
            name, _, val = value.partition("=")
            return Signature("env", name=name, pattern=re.escape(val) if val else "")
        return Signature("env", name=value["name"], pattern=value.get("value", ""))
    return Signature(kind, value)


def signatures_of(data: dict) -> list[Signature]:
    return [parse_signature(s) for s in data.get("signatures", [])]


def generic_only(sigs: list[Signature]) -> bool:
    """A record whose signatures are messages only: a generic error string alone is no evidence."""
    return bool(sigs) and all(s.kind == "message" for s in sigs)


#: what JavaScript's RegExp cannot read (the site's paste box runs the same patterns)
_NOT_PORTABLE = re.compile(r"\(\?P|\(\?[aiLmsux]+\)|\\A|\\Z|\(\?#")


def portability_problem(pattern: str) -> str | None:
    m = _NOT_PORTABLE.search(pattern)
    return f"{m.group(0)!r} is Python-only regex syntax (the site's paste box runs it in JavaScript)" if m else None


# -- judging ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Hit:
    signature: Signature
    excerpt: str
    line: int


@dataclass
class Match:
    record: dict                  # the record's triage data (see export_record)
    strength: str                 # "strong" | "possible"
    score: int
    hits: list[Hit] = field(default_factory=list)
    advice: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.record["id"]


@dataclass
class Result:
    matches: list[Match]
    torch_xla_signs: tuple[str, ...]
    torch_xla_version: str | None
    torch_version: str | None
    version_source: str | None

    @property
    def strong(self) -> list[Match]:
        return [m for m in self.matches if m.strength == "strong"]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


@lru_cache(maxsize=65536)
def _needle(pattern: str) -> str:
    """A piece of text every match of ``pattern`` contains (its longest literal run outside groups and
    alternatives), or "" when there is none: a signature whose needle is absent cannot match."""
    try:
        from re import _parser as parser  # Python >= 3.11
    except ImportError:  # pragma: no cover
        import sre_parse as parser  # type: ignore[no-redef]
    try:
        items = list(parser.parse(pattern))
    except re.error:
        return ""
    best, run = "", []
    for op, arg in items:
        if str(op) == "LITERAL":
            run.append(chr(arg))
            continue
        if len(run) > len(best):  # a repeat, class or group ends the run: what follows is not adjacent
            best = "".join(run)
        run = []
    if len(run) > len(best):
        best = "".join(run)
    return best if len(best) >= 3 else ""


@lru_cache(maxsize=65536)
def _key_word(needle: str) -> str:
    """The longest whole word inside ``needle`` (a non-word character on both sides of it, within the needle):
    any text holding the needle holds that word as a token of its own."""
    words = [m.group(0) for m in re.finditer(r"\w+", needle) if m.start() > 0 and m.end() < len(needle)]
    return max(words, key=len, default="")


@lru_cache(maxsize=65536)
def _rx(pattern: str, flags: int = 0) -> re.Pattern:
    """Compiled once per process: a thousand records' patterns overflow the re module's own cache."""
    return re.compile(pattern, flags)


def _hit(sig: Signature, f: Facts) -> Hit | None:
    text = f.text
    if sig.pattern and sig.kind in ("message", "check", "call"):
        needle = _needle(sig.pattern)
        if needle:
            word = _key_word(needle)
            if (word and word not in f.words) or needle not in text:
                return None
    if sig.kind in ("message", "check"):
        m = _rx(sig.pattern, re.M).search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start())) if m else None
    if sig.kind == "frame":
        file_rx = _rx(sig.file)
        function_rx = _rx(sig.function) if sig.function else None
        for path, base, function, _src in f.frames:
            if file_rx.fullmatch(base) and (function_rx is None or function_rx.fullmatch(function)):
                pos = text.find(f'"{path}"')
                return Hit(sig, f"{base} in {function}", _line_of(text, max(pos, 0)))
        return None
    if sig.kind == "call":
        call_rx = _rx(sig.pattern)
        for _path, _base, _function, source in f.frames:
            if source and call_rx.search(source):
                pos = text.find(source)
                return Hit(sig, source[:160], _line_of(text, max(pos, 0)))
        m = _rx(sig.pattern, re.M).search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start())) if m else None
    if sig.kind == "env":
        if sig.name not in text:
            return None
        value = sig.pattern or r"\S*"
        m = _rx(rf"\b{re.escape(sig.name)}\b\s*[=:]\s*['\"]?({value})").search(text)
        if not m and not sig.pattern:
            m = _rx(rf"\b{re.escape(sig.name)}\b").search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start())) if m else None
    return None


@lru_cache(maxsize=65536)
def _signature(kind: str, pattern: str, file: str, function: str, name: str) -> Signature:
    return Signature(kind, pattern, file, function, name)


def judge(record: dict, f: Facts) -> Match | None:
    """The rules (see the module docstring) for one record's triage data against a log's facts."""
    sigs = [_signature(**s) for s in record["signatures"]]
    hits = [h for h in (_hit(s, f) for s in sigs) if h is not None]
    messages = [h for h in hits if h.signature.kind in MESSAGE_KINDS]
    if not messages:
        return None
    # the message: an error-message hit when there is one (a check can then be context), else the first check
    first = min(messages, key=lambda h: (h.signature.kind != "message", h.line, KINDS.index(h.signature.kind)))
    context = [h for h in hits if h.signature.kind in CONTEXT_KINDS and h is not first]
    strength = "strong" if context else "possible"
    score = sum(WEIGHTS[h.signature.kind] for h in hits)
    return Match(record, strength, score, sorted(hits, key=lambda h: (h.line, KINDS.index(h.signature.kind))))


def base_version(version: str | None) -> str | None:
    """"2.5.1+cxx11" -> "2.5.1"; dev and rc versions are kept as they are (no release matrix applies)."""
    if not version:
        return None
    return version.split("+", 1)[0]


def advice(record: dict, version: str | None) -> dict:
    """What to tell a user on ``version``, from the record's measured matrix (codes, rendered per language)."""
    fixed = record.get("fixed_in")
    if not version:
        return {"code": "no-version", "fixed_in": fixed}
    v = base_version(version)
    measured = record.get("measured", {}).get(v)
    if measured == "reproduced":
        return {"code": "known-bug", "version": v, "fixed_in": fixed}
    if measured == "not-reproduced":
        return {"code": "measured-fixed", "version": v, "fixed_in": fixed}
    return {"code": "not-measured", "version": v, "fixed_in": fixed, "verdict": measured}


def triage(log: Log | str, records: Iterable[dict], *, torch_xla: str | None = None) -> Result:
    """Every record whose signatures the log shows, strong matches first (see the rules above).
    ``records`` are triage data (:func:`export_record`); ``torch_xla`` overrides the version in the log."""
    f = facts(log)
    version = torch_xla or f.torch_xla_version
    source = "given" if torch_xla else f.version_source
    if not f.torch_xla:
        return Result([], (), version, f.torch_version, source)
    matches = [m for m in (judge(r, f) for r in records) if m is not None]
    for m in matches:
        m.advice = advice(m.record, version)
    matches.sort(key=lambda m: (m.strength != "strong", -m.score, m.id))
    return Result(matches, f.torch_xla, version, f.torch_version, source)


# -- the data both engines read ---------------------------------------------------------------------------
def export_record(data: dict, matrix: dict | None) -> dict:
    """What triage needs of one record, as plain JSON (also written for the site's paste box)."""
    measured = {}
    for row in (matrix or {}).get("results", []):
        if row.get("kind", "release") == "release":
            measured[row["candidate"]] = row["verdict"]
    return {
        "id": data["id"],
        "title": dict(data["title"]),
        "status": data["status"],
        "fixed_in": data["versions"].get("fixed_in"),
        "affected": data["versions"]["affected"],
        "workaround": dict(data["workaround"]),
        "signatures": [dataclasses.asdict(s) for s in signatures_of(data)],
        "measured": measured,
    }


def export(root: Path) -> dict:
    """Triage data of every record under ``root`` with its measured matrix (see :func:`export_records`)."""
    from .records import load_records
    from .results import load_matrix

    return export_records([export_record(r.data, load_matrix(root, r.id)) for r in load_records(root)])


def export_records(records: list[dict]) -> dict:
    """What both engines read: the rules' data (weights, kinds, the patterns of signs and versions, the
    advice texts) and the records' triage data (:func:`export_record`)."""
    return {
        "weights": WEIGHTS,
        "message_kinds": list(MESSAGE_KINDS),
        "context_kinds": list(CONTEXT_KINDS),
        "frame_pattern": FRAME_PATTERN,
        "torch_xla_signs": [list(x) for x in TORCH_XLA_SIGNS],
        "version_patterns": {name: [[where, p.format(name=rx), f] for where, p, f in VERSION_PATTERNS]
                             for name, rx in _NAMES.items()},
        "advice": ADVICE,
        "records": records,
    }


def result_json(result: Result) -> dict:
    """A result as JSON (``xlakb triage --json`` and the comparison with the site's engine)."""
    return {
        "torch_xla": result.torch_xla_version,
        "torch": result.torch_version,
        "version_source": result.version_source,
        "torch_xla_signs": list(result.torch_xla_signs),
        "matches": [{
            "id": m.id, "strength": m.strength, "score": m.score,
            "matched": [{"kind": h.signature.kind, "signature": h.signature.describe(), "excerpt": h.excerpt, "line": h.line}
                        for h in m.hits],
            "advice": m.advice,
        } for m in result.matches],
    }


# -- words for people ----------------------------------------------------------------------------
ADVICE = {
    "en": {
        "known-bug": "torch_xla {version} shows this bug (measured: reproduced). {fix}",
        "measured-fixed": "torch_xla {version} should not show it (measured: not reproduced): a different bug or a "
                          "regression; check with `xlakb repro {id} --torch-xla {version}`.",
        "not-measured": "torch_xla {version} was not measured for this record. {fix}",
        "no-version": "{fix} Your torch_xla version is not in the log: pass --torch-xla X.Y.Z for advice on your release.",
        "fixed": "Fixed in {fixed_in}: upgrade, or use the workaround.",
        "unfixed": "No release fixes it yet: use the workaround.",
    },
    "zh": {
        "known-bug": "torch_xla {version} 存在这个问题（实测：复现）。{fix}",
        "measured-fixed": "torch_xla {version} 不应出现这个问题（实测：未复现）：可能是另一个问题或回归；"
                          "请用 `xlakb repro {id} --torch-xla {version}` 验证。",
        "not-measured": "这条记录没有在 torch_xla {version} 上实测过。{fix}",
        "no-version": "{fix}日志中没有 torch_xla 版本：加上 --torch-xla X.Y.Z 可得到针对你所用版本的建议。",
        "fixed": "已在 {fixed_in} 修复：请升级，或使用临时解决办法。",
        "unfixed": "还没有发布版本修复：请使用临时解决办法。",
    },
}


def advice_text(match: Match, lang: str = "en") -> str:
    words = ADVICE[lang]
    a = match.advice
    fix = words["fixed"].format(fixed_in=a.get("fixed_in")) if a.get("fixed_in") else words["unfixed"]
    return words[a["code"]].format(version=a.get("version"), id=match.id, fix=fix)
