"""Triage: which known records a pasted log or traceback shows, weighed by how specific the evidence is.

A record's ``signatures`` carry a kind (see :data:`KINDS`): ``message`` (a regex on the error text; a
plain string in a record is a message), ``check`` (a C++ CHECK/RET_CHECK text or a source location),
``frame`` (a Python frame: ``file`` base name and optionally ``function``), ``call`` (the API call in
the user's code) and ``env`` (an environment variable the bug needs).

The rules, in one place (:func:`triage`), mirrored by the site's paste box
(``site/assets/javascripts/triage.js``, tested against this module on both corpora):

1. A paste is normalised first (:func:`normalize`): line endings, HTML entities, ``>`` quote marks, a
   traceback whose line breaks the tracker lost.
2. Signs of torch_xla: a torch_xla frame, import, version, XLA/PJRT log line, a C++ frame in
   ``torch_xla::``, or a line the message catalog (:mod:`xlakb.catalog`) knows only torch_xla (or torch's
   lazy core, reached through it) prints.
3. Each signature that matches is a hit, and a hit is **generic** when it cannot name one bug: it is
   shared with another record that is not a declared look-alike (in this paste, or in that record's
   symptoms), it matches an unrelated log (``data/background/``), it is in the lists of
   ``data/triage_generic.yaml`` (entry frames such as ``mark_step``; texts such as ``list index out of
   range``), or the catalog says the message is printed by a helper that many places call (a check in a
   header's accessor, or a function with :data:`~xlakb.catalog.HELPER_CALL_SITES` call sites or more).
   A generic error raised in a frame that is the record's own (the innermost frame before the error
   line, entry frames skipped) is specific again: the error *there* names the bug, as a crash title does.
4. A record's error evidence is its ``message`` and ``check`` hits (what failed, and where); its trigger
   evidence is its ``frame``, ``call`` and ``env`` hits (how the program got there). Without a sign of
   torch_xla a record still matches on its own specific error (a record's message is a sign of it),
   unless the paste shows another accelerator stack.
5. **strong**: a specific error and a specific trigger (a frame that made a generic error specific is part
   of that error, not its trigger); **possible**: a specific error alone, or a generic error with a
   specific trigger; **related** (listed apart, never a match): generic evidence only. Strong matches of
   records that are not declared look-alikes of one another are all demoted to possible (the paste is
   ambiguous): one paste never names two unrelated bugs strongly. Look-alikes matched together are shown
   as one group, with what tells them apart.
6. Score: the weights (:data:`WEIGHTS`) of specific hits plus 1 per generic hit; ``env`` adds its weight.
   Matches are ranked strong first, then by score, then by record id.

Versions come from the log (``pip freeze``/``pip list``, ``torch_xla.__version__``, wheel or dist-info
paths) or from the caller; the advice comes from the record's measured matrix. When nothing matches, the
answer still says where each error line comes from (catalog: file, function, releases) and gives an
upstream issue search for the message.

Library code: pure functions over plain data (the JSON the site exports); reading a log, with its
limits, is :func:`read_log`.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from .errors import XlakbError
from .signatures import KINDS, MESSAGE_KINDS, TRIGGER_KINDS, Signature, signatures_of
from .upstream.signature import NOTEBOOK_FRAME, error_lines, last_lines  # as the reported tier reads them

WEIGHTS = {"message": 3, "check": 4, "frame": 2, "call": 2, "env": 1}


class BadInput(XlakbError):
    """The log cannot be triaged at all (empty, binary, unreadable): the CLI exits 2."""


# -- reading a log --------------------------------------------------------------------------
WHOLE_LIMIT = 64 << 20  # logs up to this size are read whole
KEPT_LIMIT = 16 << 20  # larger ones: the head, the tail and the lines that matter, up to this much
HEAD_TAIL = 2 << 20
#: lines of a streamed log that can carry evidence (on bytes: no decoding of what is skipped)
_INTERESTING = re.compile(
    rb"Error|error|Exception|FAILED|[Ff]ailed|Check|CHECK|assert|Assert|abort|Abort|Traceback|File \"|"
    rb"torch[_-]xla|XLA|PJRT|pjrt|xla/|Killed|signal|version|==|Warning|^[FE]\d{4} ",
    re.M,
)


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
        raise BadInput(
            f"{source}: binary data, not a text log (a NUL byte in its first 64 KiB)",
            hint="pass the text log or traceback, not a core dump or archive",
        )
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
        kept.append(b"\n" + tail_text[tail_text.find(b"\n") + 1 :])  # from a line start
        head = b"".join(kept)
        notes.append(
            f"{source} is {size >> 20} MiB: read as a stream, keeping its first and last 2 MiB and the lines "
            f"that can carry evidence"
        )
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


# -- normalising a paste ----------------------------------------------------------------------------
#: (pattern, replacement, flags), applied in order; the site's engine applies the same list
def _paste_rules() -> tuple[tuple[str, str, str], ...]:
    """(pattern, replacement, flags): what is undone in a paste before reading it, each rule with its reason in
    ``data/normalise.yaml`` (``paste``); the reported tier reads the same file."""
    from .upstream.signature import RULES

    return tuple((r["pattern"], r["replace"], r.get("flags", "")) for r in RULES["paste"])


NORMALIZE = _paste_rules()


def _python_repl(repl: str) -> str:
    return re.sub(r"\$(\d)", r"\\\1", repl)


_NORMALIZE = tuple((re.compile(p, re.M if "m" in f else 0), _python_repl(r)) for p, r, f in NORMALIZE)


def normalize(text: str) -> str:
    for rx, repl in _NORMALIZE:
        text = rx.sub(repl, text)
    return text


# -- what a log shows -----------------------------------------------------------------------------
# The patterns below are data: the site's paste box reads the same strings (see :func:`export_records`).
#: a Python traceback frame: path, function, and the source line printed under it
#: (a frame that shows no source line, such as importlib's frozen ones, is followed by the next frame, not its source)
FRAME_PATTERN = r'^[ \t]*File "([^"]+)", line \d+, in (\S+)[^\n]*\n(?:(?![ \t]*File ")([^\n]*)\n)?'
#: (what, pattern, flags): the signs that a log comes from a torch_xla program
TORCH_XLA_SIGNS = (
    ("a torch_xla frame or path", r"[/\\]torch_xla[/\\]", ""),
    ("a torch_xla import", r"^\s*(?:import torch_xla|from torch_xla[\w.]* import)", "m"),
    ("a torch_xla version", r"torch[_-]xla(?:==|-|\s+)\d+\.\d+|torch_xla\.__version__", "i"),
    (
        "an XLA/PJRT log line or IR dump",
        r"external/xla/|xla/(?:service|pjrt|hlo)/|torch_xla/csrc|pjrt_computation_client|"
        r"\bPJRT_DEVICE\b|XLA_[A-Z_]+=|_XLAC\b|TfrtCpuClient|PjRt|pjrt_c_api|\bxla::[a-z_]+\(",
        "",
    ),
    ("a C++ frame of torch_xla", r"\btorch_xla::\w+", ""),
    # a script of a pytorch/xla checkout run by hand (its tests, benchmarks, examples): ``xla/test/test_x.py``
    # (openxla's own tree is C++ and names its folder ``tests``)
    ("a script of a pytorch/xla checkout", r"(?:^|[\s\"'/])xla/(?:test|benchmarks|examples|scripts)/[\w/.-]+\.py\b", "m"),
)
#: (layer, what, pattern, flags): lines that torch_xla's layers printed although the paste shows nothing of
#: torch_xla itself (a user who cut the traceback): XLA's own C++ log lines and torch's messages about the XLA
#: backend. With the catalog's own placing of a message (torch_xla, torch's lazy core, XLA), they say which
#: layer printed a line; a paste with none of them, and no sign of torch_xla, is "not a torch_xla problem".
LAYER_SIGNS = (
    ("torch_xla", "the name torch_xla gives its graphs", r"\bSyncTensorsGraph\b|\bIrToHlo\b", ""),
    (
        "xla",
        "a log line of XLA's C++, or its HLO",
        r"\b(?:hlo_\w+|\w*sharding\w*|spmd_\w+|mesh_service|pjrt_\w+|xla_\w+|tpu_\w+|\w*computation_client)\.(?:cc|h)(?::\d+)?\b"
        r"|\bHLO\b|\bHloModule\b",
        "",
    ),
    (
        "xla",
        "absl's C++ logging, fatal-signal handler or StatusOr, which XLA's runtime (TSL) uses and torch does not "
        "(torch's C++ log lines are bracketed, its Python ones name .py files); TSL's own fatal log line "
        "(``2023-06-27 04:35:24.456016: F tensorflow/tsl/...cc:33]``) and its older StatusOr wording",
        r"^[FEWI]\d{4} [\d:.]+\s+\d+\s+[\w/.-]+\.(?:cc|h):\d+\]|(?:^|\] )RAW: |"
        r"^\*\*\* SIG[A-Z]+ received by PID \d+ \(TID \d+\) on cpu \d+|\bBad StatusOr access\b|\btsl::\w+|"
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: F [\w/.-]*\btsl/[\w/.-]+\.(?:cc|h):\d+\]|"
        r"\bAttempting to fetch value instead of handling error\b",
        "m",
    ),
    ("tpu", "the TPU runtime, its memory or its device files", r"\blibtpu\b|\bHBM\b|/job:tpu_worker|\bTPU\b|/dev/accel\d", ""),
    (
        "torch",
        "torch's message names the XLA backend or device",
        r"\b[Bb]ackend\s*['\"]?XLA\b|\bXLA(?:TensorId)?['\"]?\s+backend\b|device(?:\.type)?\s*(?:=|==)\s*['\"]?xla\b|\bxla:\d+\b|"
        r"DispatchKey\.XLA\b|\bXLATensor\b|\btorch\.xla\b|\b[A-Z]\w*XLA\b",
        "",
    ),
)
#: lines that can hold an error message (the catalog is matched on these and the line after each; a
#: paste of at most SHORT_PASTE lines is matched whole)
ERROR_LINE = (
    r"Error|Exception|Warning|error:|warning:|Check failed|CHECK failed|RET_CHECK|INTERNAL ASSERT|"
    r"Non-OK-status|Bad StatusOr|INVALID_ARGUMENT|INTERNAL:|UNIMPLEMENTED|RESOURCE_EXHAUSTED|"
    r"FAILED_PRECONDITION|NOT_FOUND|Segmentation fault|SIGSEGV|SIGABRT|Aborted|Fatal|FATAL|"
    r"^\s*[FEW]\d{4} |Expect|[Ff]ailed|must be|not supported|[Uu]nsupported|[Ii]nvalid"
)
SHORT_PASTE = 40
#: a line of a printed native stack: gdb's ``#3 0x.. in fn (``, glog's and absl's ``@ 0x..``, torch's ``frame #3:``,
#: absl's header (a Python frame is :data:`FRAME_PATTERN`'s)
STACK_LINE = r"^[ \t]*(?:#\d+[ \t]+(?:0x[0-9a-fA-F]+ in |[A-Za-z_~]\w*::)|@[ \t]+0x[0-9a-fA-F]+[ \t]|frame #\d+: )|\*\*\* Begin stack trace \*\*\*"
_V = r"(\d+\.\d+(?:\.\d+)?(?:[.+][\w.]+)?)"
_NAMES = {"torch_xla": r"torch[_-]xla", "torch": r"(?<![\w-])torch(?![_-]xla)(?!\w)"}
#: (where, pattern with {name}, flags): a package's version in a log, first match wins
VERSION_PATTERNS = (
    ("pip freeze", r"^\s*{name}\s*==\s*" + _V + r"\s*$", "im"),  # torch-xla==2.5.1
    ("pip list", r"^\s*{name}\s+" + _V + r"\s*$", "im"),  # torch-xla   2.5.1
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
_NOTEBOOK_FRAME = re.compile(NOTEBOOK_FRAME)
_SIGNS = tuple((what, _compile(p, f)) for what, p, f in TORCH_XLA_SIGNS)
_LAYERS = tuple((layer, _compile(p, f)) for layer, _what, p, f in LAYER_SIGNS)
_ERROR_LINE = re.compile(ERROR_LINE, re.M)
_STACK_LINE = re.compile(STACK_LINE, re.M)
#: a Python file of torch_xla itself (a frame's path, with forward slashes)
TORCH_XLA_PATH = r"(?:^|/)torch_xla/[^/]+(?:/[^/]+)*\.py$"
_TORCH_XLA_PATH = re.compile(TORCH_XLA_PATH)
#: a comprehension's frame: part of the function it is written in (Python 3.12 no longer shows it)
COMPREHENSION = r"<(?:listcomp|dictcomp|setcomp|genexpr)>"
_COMPREHENSION = re.compile(COMPREHENSION)
#: an exception raised with no message (``AssertionError`` alone on its line): the error line of its traceback
BARE_EXCEPTION = r"^[ \t]*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)[ \t]*$"
_BARE_EXCEPTION = re.compile(BARE_EXCEPTION, re.M)
_VERSIONS = {
    name: tuple((where, _compile(p.format(name=rx), f)) for where, p, f in VERSION_PATTERNS) for name, rx in _NAMES.items()
}
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
class Frame:
    path: str
    base: str
    function: str
    source: str
    pos: int


@dataclass(frozen=True)
class Origin:
    """A line of the paste the message catalog knows: what prints it, where, in which releases."""

    line: int
    start: int
    end: int
    excerpt: str
    row: dict  # the catalog row (see export_catalog)


@dataclass(frozen=True)
class Facts:
    """What a log shows, extracted once for all records."""

    text: str  # the normalised paste
    frames: tuple[Frame, ...]
    torch_xla: tuple[str, ...]  # which signs of torch_xla it has
    torch_xla_version: str | None
    torch_version: str | None
    version_source: str | None
    origins: tuple[Origin, ...] = ()
    other_backends: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()  # which of torch_xla's layers printed lines of it (layers_of)
    stack_only: bool = False  # frames of a printed stack and no error line (shows_stack_only)

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


def candidate_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of the lines the catalog is matched on: every line of a short paste, else the error
    lines and the line after each."""
    if text.count("\n") < SHORT_PASTE:
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        return [(s, e if (e := text.find("\n", s)) >= 0 else len(text)) for s in starts]
    keep: set[tuple[int, int]] = set()
    for m in _ERROR_LINE.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        if end < 0:
            keep.add((start, len(text)))
            continue
        keep.add((start, end))
        after = text.find("\n", end + 1)
        keep.add((end + 1, len(text) if after < 0 else after))
    return sorted(keep)


class CatalogIndex:
    """The exported catalog rows, looked up by their key word (the same lookup in both engines), and the
    C++ helpers whose checks fire in many bugs ([qualified function, why], see :func:`export_helpers`)."""

    def __init__(self, rows: list[dict], helpers: list | None = None):
        self.rows = rows
        self.helpers = [tuple(h) for h in helpers or ()]
        self.by_key: dict[str, list[dict]] = {}
        for row in rows:
            self.by_key.setdefault(row["key"], []).append(row)

    def match(self, text: str) -> list[Origin]:
        out: list[Origin] = []
        for start, end in candidate_lines(text):
            line = text[start:end]
            if not line.strip():
                continue
            for word in sorted(set(re.findall(r"[A-Za-z0-9_]+", line)) & self.by_key.keys()):
                for row in self.by_key[word]:
                    m = _rx(row["pattern"]).search(line)
                    if m:
                        out.append(
                            Origin(text.count("\n", 0, start) + 1, start + m.start(), start + m.end(), m.group(0)[:160], row)
                        )
        # the most literal text first on each line; a row whose match lies inside a longer one's is dropped
        out.sort(key=lambda o: (o.line, -o.row["literal"], o.start, o.row["pattern"]))
        kept: list[Origin] = []
        for o in out:
            if any(
                k.line == o.line and k.start <= o.start and o.end <= k.end and k.row["literal"] > o.row["literal"] for k in kept
            ):
                continue
            kept.append(o)
        return kept


EMPTY_CATALOG = CatalogIndex([])


def facts(log: Log | str, catalog: CatalogIndex = EMPTY_CATALOG, generic: dict | None = None) -> Facts:
    text = normalize(log.text if isinstance(log, Log) else log)
    # (path, function, source line, where): a script's frames and a notebook's (IPython 7 and 8 print no source
    # line under the frame's line), in the order shown
    shown = [(m.group(1), m.group(2), (m.group(3) or "").strip(), m.start()) for m in _FRAME.finditer(text)]
    shown += [(m.group(1), m.group(2), "", m.start(1)) for m in _NOTEBOOK_FRAME.finditer(text)]
    frames = tuple(
        Frame(path, re.split(r"[/\\]", path)[-1], fn, source, pos) for path, fn, source, pos in sorted(shown, key=lambda f: f[3])
    )
    near_signs = _lines_with(text, _SIGN_NEEDLES)
    signs = [what for what, pattern in _SIGNS if pattern.search(near_signs)]
    origins = tuple(catalog.match(text))
    for o in origins:
        if o.row["sign"]:
            signs.append("a message only torch_xla prints")
            break
    near_versions = _lines_with(text, _VERSION_NEEDLES)
    xla, where = _version(near_versions, "torch_xla")
    torch, _ = _version(near_versions, "torch")
    others = tuple(
        b["name"]
        for b in (generic or GENERIC)["other_backends"]
        if not _absent(b["pattern"], text) and _rx(b["pattern"]).search(text)
    )
    return Facts(
        text,
        frames,
        tuple(signs),
        xla,
        torch,
        where,
        origins,
        others,
        layers_of(text, origins, signs),
        shows_stack_only(text, frames),
    )


def shows_stack_only(text: str, frames: tuple) -> bool:
    """A paste that shows a printed stack (its Python or notebook ``frames``, a native stack's line) and, in its
    last lines, no error line the reported tier knows nor an exception raised without a message: the message that
    says which bug it is was left out (the line after a Python traceback, the check or log line above a C++ stack)."""
    if not (frames or _STACK_LINE.search(text)):
        return False
    tail = "\n".join(last_lines(text))  # read as bare messages are: a long log stays fast
    return not _BARE_EXCEPTION.search(tail) and not error_lines(tail)


#: the layers, in the order they are named
LAYERS = ("torch_xla", "lazy", "xla", "tpu", "torch")


def layers_of(text: str, origins, signs) -> tuple[str, ...]:
    """Which of torch_xla's layers printed lines of the paste (torch_xla, lazy, xla, torch), in that order:
    from torch_xla's own signs, the catalog's placing of its messages, and :data:`LAYER_SIGNS`."""
    found = {"torch_xla"} if signs else set()
    for o in origins:
        found.update(o.row["origins"])
    for layer, pattern in _LAYERS:
        if layer not in found and not _absent(pattern.pattern, text, pattern.flags) and pattern.search(text):
            found.add(layer)
    return tuple(x for x in LAYERS if x in found)


# -- what is generic ---------------------------------------------------------------------------------------
def _load_generic() -> dict:
    from importlib import resources

    import yaml

    text = (resources.files("xlakb") / "data" / "triage_generic.yaml").read_text("utf-8")
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # read at every start: the C loader
    return {
        "frames": [{"file": f["file"], "function": f.get("function", ""), "why": f["why"]} for f in data["frames"]],
        "messages": [dict(m) for m in data["messages"]],
        "other_backends": [dict(b) for b in data["other_backends"]],
    }


GENERIC = _load_generic()


def background_logs() -> list[tuple[str, str]]:
    """The unrelated logs evidence is weighed against (``data/background/*.log``): (name, text)."""
    from importlib import resources

    folder = resources.files("xlakb") / "data" / "background"
    return sorted((p.name, p.read_text("utf-8")) for p in folder.iterdir() if p.name.endswith(".log"))


def _generic_frame(base: str, function: str, generic: dict) -> str:
    for g in generic["frames"]:
        if _rx(g["file"]).fullmatch(base) and (not g["function"] or _rx(g["function"]).fullmatch(function)):
            return g["why"]
    return ""


def _alternatives(pattern: str) -> list[str]:
    """The plain names a simple alternation regex stands for (``a\\.py|b\\.py`` -> a.py, b.py)."""
    return [re.sub(r"\\(.)", r"\1", p) for p in pattern.split("|") if re.fullmatch(r"(?:[\w<>~\-]|\\.)+", p)]


def annotate(records: list[dict], background: list[tuple[str, str]] | None = None, generic: dict | None = None) -> list[dict]:
    """Each signature's ``generic`` reason, measured across the knowledge base. An error (message or
    check) is generic when another record that is not a declared look-alike has it too (the same
    signature, or its symptoms show it); any signature is generic when an unrelated log shows it
    (``data/background``); a frame is generic when it is an entry frame of the generic list. Triggers
    (frames, calls, settings) two records share stay specific: the error tells those records apart."""
    generic = generic or GENERIC
    background = background_logs() if background is None else background
    bg_facts = [(name, facts(text)) for name, text in background]
    out = []
    for rec in records:
        group = set(rec.get("lookalikes", [])) | {rec["id"]}
        others = [r for r in records if r["id"] not in group]
        sigs = []
        for s in rec["signatures"]:
            s = dict(s)
            s["generic"] = ""
            if s["kind"] in MESSAGE_KINDS:
                rx = _rx(s["pattern"], re.M)
                for other in others:
                    if any(rx.search(t) for t in other.get("reference", ())) or any(
                        o["kind"] == s["kind"] and o["pattern"] == s["pattern"] for o in other["signatures"]
                    ):
                        s["generic"] = f"also evidence of {other['id']}"
                        break
            if not s["generic"] and s["kind"] in ("message", "check", "call"):
                rx = _rx(s["pattern"], re.M)
                for name, f in bg_facts:
                    if rx.search(f.text):
                        s["generic"] = f"also in an unrelated log ({name})"
                        break
            if s["kind"] == "frame":
                files, functions = _alternatives(s["file"]), _alternatives(s["function"]) if s["function"] else []
                why = next(
                    (
                        _generic_frame(f, fn, generic)
                        for f in files
                        for fn in (functions or [""])
                        if _generic_frame(f, fn, generic)
                    ),
                    "",
                )
                if why:
                    s["generic"] = f"an entry frame ({why})"
                else:
                    sig = _signature("frame", "", s["file"], s["function"], "")
                    for name, f in bg_facts:
                        if any(_at(sig, fr) for fr in f.frames):
                            s["generic"] = f"also in an unrelated log ({name})"
                            break
            sigs.append(s)
        out.append({**rec, "signatures": sigs})
    return out


# -- judging ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Hit:
    signature: Signature
    excerpt: str
    line: int
    start: int = 0
    end: int = 0
    generic: str = ""  # why this hit cannot name one bug in this paste ("" when it can)
    anchor: int = -1  # a generic error made specific by the frame it was raised in (that frame's position)

    def overlaps(self, other: Hit) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass
class Match:
    record: dict  # the record's triage data (see export_record)
    strength: str  # "strong" | "possible" | "related"
    score: int
    hits: list[Hit] = field(default_factory=list)
    advice: dict = field(default_factory=dict)
    group: list[str] = field(default_factory=list)  # look-alikes matched with it, itself included

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
    related: list[Match] = field(default_factory=list)
    origins: tuple[Origin, ...] = ()
    ambiguous: bool = False
    other_backends: tuple[str, ...] = ()
    search: str = ""
    layers: tuple[str, ...] = ()
    stack_only: bool = False
    #: records whose specific frame the stack of a stack-only paste stops in (:func:`stacked`): not a match,
    #: the code the message would come from
    stacked: list[Match] = field(default_factory=list)

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


#: needles worked out when the compiled index was built (:func:`needles_of`), so a command does not parse
#: every pattern again: pattern -> needles, for patterns read without flags
_KNOWN_NEEDLES: dict[str, tuple[str, ...]] = {}


def needles_of(data: dict) -> dict[str, list[str]]:
    """The needles of every pattern exported data makes triage search a whole log with (record signatures,
    layer signs, other backends), for the compiled index to keep."""
    patterns = {
        s["pattern"]
        for r in data["records"]
        for s in r["signatures"]
        if s["pattern"] and s["kind"] in ("message", "check", "call")
    }
    patterns |= {b["pattern"] for b in GENERIC["other_backends"]}
    return {p: list(_needles(p)) for p in sorted(patterns)}


def remember_needles(known: dict[str, list[str]]) -> None:
    """Take the needles the compiled index kept (:func:`needles_of`)."""
    _KNOWN_NEEDLES.update((p, tuple(n)) for p, n in known.items())


def _needles(pattern: str, flags: int = 0) -> tuple[str, ...]:
    """:func:`_parse_needles`, or what the compiled index kept of it."""
    if not flags and pattern in _KNOWN_NEEDLES:
        return _KNOWN_NEEDLES[pattern]
    return _parse_needles(pattern, flags)


@lru_cache(maxsize=65536)
def _parse_needles(pattern: str, flags: int = 0) -> tuple[str, ...]:
    """Pieces of text one of which every match of ``pattern`` contains, or () when the pattern promises none
    (speed only: where none is in a text, the pattern cannot match there). Like :func:`_needle`, but an
    alternation gives one needle per alternative when each has one (``torch\\.pow\\(|\\.pow_\\(``); a pattern that
    ignores case promises no exact text."""
    try:
        from re import _parser as parser  # Python >= 3.11
    except ImportError:  # pragma: no cover
        import sre_parse as parser  # type: ignore[no-redef]
    try:
        parsed = parser.parse(pattern, flags)
    except re.error:
        return ()
    if parsed.state.flags & re.IGNORECASE:
        return ()
    return _sequence_needles(list(parsed))


def _sequence_needles(items: list) -> tuple[str, ...]:
    """The best needles of a parsed sequence: a literal run, or a group or alternation whose every
    alternative has needles; best is the one whose shortest needle is longest (at least 3 characters)."""
    best: tuple[str, ...] = ()

    def consider(candidate: tuple[str, ...]) -> None:
        nonlocal best
        if candidate and min(map(len, candidate)) >= 3 and (not best or min(map(len, candidate)) > min(map(len, best))):
            best = candidate

    run: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            continue
        consider(("".join(run),) if run else ())
        run = []
        if name == "SUBPATTERN":
            _group, add_flags, _del_flags, sub = arg
            if not add_flags & re.IGNORECASE:
                consider(_sequence_needles(list(sub)))
        elif name == "BRANCH":
            alternatives = [_sequence_needles(list(b)) for b in arg[1]]
            if all(alternatives):
                consider(tuple(dict.fromkeys(n for alt in alternatives for n in alt)))
    consider(("".join(run),) if run else ())
    return best


def _absent(pattern: str, text: str, flags: int = 0, words: frozenset[str] | None = None) -> bool:
    """``pattern`` cannot match ``text``: none of its needles is in it (speed only; False when unsure).
    ``words``: the text's words, a faster first look when every needle holds a whole word."""
    needles = _needles(pattern, flags)
    if not needles:
        return False
    if words is not None:
        keys = [_key_word(n) for n in needles]
        if all(keys) and not any(k in words for k in keys):
            return True
    return not any(n in text for n in needles)


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


def _at(sig: Signature, fr: Frame) -> bool:
    """A frame signature names this frame: its file (:func:`in_file`) and, when it gives one, its function."""
    return in_file(_rx(sig.file), fr) and (not sig.function or bool(_rx(sig.function).fullmatch(fr.function)))


def in_file(file_rx: re.Pattern, fr: Frame) -> bool:
    """A frame signature's file names the frame's file: the whole of its name, or, for a pattern with a ``/``,
    of the path's last components (``torch_xla/utils/utils\\.py`` tells one ``utils.py`` from another's)."""
    if file_rx.fullmatch(fr.base):
        return True
    if "/" not in file_rx.pattern:
        return False
    parts = re.split(r"[/\\]", fr.path)
    return any(file_rx.fullmatch("/".join(parts[i:])) for i in range(len(parts) - 2, -1, -1))


def _hit(sig: Signature, f: Facts) -> Hit | None:
    text = f.text
    if sig.pattern and sig.kind in ("message", "check", "call") and _absent(sig.pattern, text, words=f.words):
        return None
    if sig.kind in ("message", "check"):
        m = _rx(sig.pattern, re.M).search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start()), m.start(), m.end()) if m else None
    if sig.kind == "frame":
        for fr in f.frames:
            if _at(sig, fr):
                return Hit(sig, f"{fr.base} in {fr.function}", _line_of(text, fr.pos), fr.pos, fr.pos + 1)
        return None
    if sig.kind == "call":
        call_rx = _rx(sig.pattern)
        for fr in f.frames:
            if fr.source and call_rx.search(fr.source):
                pos = max(text.find(fr.source, fr.pos), 0)
                return Hit(sig, fr.source[:160], _line_of(text, pos), pos, pos + len(fr.source))
        m = _rx(sig.pattern, re.M).search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start()), m.start(), m.end()) if m else None
    if sig.kind == "env":
        if sig.name not in text:
            return None
        value = sig.pattern or r"\S*"
        m = _rx(rf"\b{re.escape(sig.name)}\b\s*[=:]\s*['\"]?({value})").search(text)
        if not m and not sig.pattern:
            m = _rx(rf"\b{re.escape(sig.name)}\b").search(text)
        return Hit(sig, m.group(0)[:160], _line_of(text, m.start()), m.start(), m.end()) if m else None
    return None


@lru_cache(maxsize=65536)
def _signature(kind: str, pattern: str, file: str, function: str, name: str, generic: str = "") -> Signature:
    return Signature(kind, pattern, file, function, name, generic)


def _text_generic(excerpt: str, generic: dict) -> str:
    core = re.sub(r"^\s*(?:[\w.]+(?:Error|Exception)\s*:\s*)", "", excerpt).strip()
    for g in generic["messages"]:
        if _rx(g["pattern"]).fullmatch(core) or _rx(g["pattern"]).fullmatch(excerpt.strip()):
            return g["why"]
    return ""


def _catalog_generic(hit: Hit, f: Facts, helpers: list | None = None) -> str:
    """A message hit on a line the catalog knows: generic when a helper prints it (see catalog.Entry.generic);
    a check naming a C++ function (a stack frame) is generic when that function is such a helper."""
    for o in f.origins:
        if o.start < hit.end and hit.start < o.end and o.row["generic"]:
            return f"printed by a helper: {o.row['generic']}"
    if hit.signature.kind == "check" and "::" in hit.excerpt:
        for name, why in helpers or ():
            if _rx(r"(?<![\w])(?:\w+::)*" + re.escape(name) + r"(?![\w])").search(hit.excerpt):
                return f"a frame of a helper: {why}"
    return ""


def _innermost_frame(f: Facts, pos: int, generic: dict) -> Frame | None:
    """The last frame before ``pos`` that is not an entry frame: where the error was raised."""
    best = None
    for fr in f.frames:
        if fr.pos >= pos:
            break
        if not _generic_frame(fr.base, fr.function, generic):
            best = fr
    return best


def _judge(record: dict, f: Facts, generic: dict, helpers: list | None = None) -> list[Hit]:
    """The record's signatures that match, each marked generic (with why) from what is known before the
    paste is compared with other records: the signature's measured genericity, the generic lists, the
    catalog's helpers."""
    hits = []
    for s in record["signatures"]:
        sig = _signature(s["kind"], s["pattern"], s["file"], s["function"], s["name"], s.get("generic", ""))
        h = _hit(sig, f)
        if h is None:
            continue
        why = sig.generic
        if not why and sig.kind in MESSAGE_KINDS:
            why = _text_generic(h.excerpt, generic) or _catalog_generic(h, f, helpers)
        if not why and sig.kind == "frame":
            fr = next((fr for fr in f.frames if fr.pos == h.start), None)
            why = _generic_frame(fr.base, fr.function, generic) if fr else ""
            why = f"an entry frame ({why})" if why else ""
        hits.append(dataclasses.replace(h, generic=why))
    return hits


def _anchor(hits: list[Hit], f: Facts, generic: dict) -> list[Hit]:
    """A generic Python error raised in the record's own frame (the innermost non-entry frame before the
    error line, hit by a specific frame signature of the record) is specific: the error *there* names the
    bug, as a crash title does. That frame then backs nothing more (it is part of the title)."""
    own = [h for h in hits if h.signature.kind == "frame" and not h.generic]
    if not own:
        return hits
    out = []
    for h in hits:
        if h.generic and h.signature.kind == "message":
            fr = _innermost_frame(f, h.start, generic)
            anchor = next((o for o in own if fr is not None and o.start == fr.pos), None)
            if anchor is not None:
                h = dataclasses.replace(h, generic="", anchor=anchor.start)
        out.append(h)
    return out


def _strength(hits: list[Hit]) -> str:
    """strong: a specific error (message or check) and a specific trigger (a frame, the call, a setting);
    possible: a specific error alone, or a generic error with a specific trigger; related: generic only."""
    errors = [h for h in hits if h.signature.kind in MESSAGE_KINDS]
    if not errors:
        return ""
    anchors = {h.anchor for h in hits if h.anchor >= 0}
    specific_error = any(not h.generic for h in errors)
    trigger = any(
        not h.generic and h.signature.kind in TRIGGER_KINDS and not (h.signature.kind == "frame" and h.start in anchors)
        for h in hits
    )
    if specific_error and trigger:
        return "strong"
    if specific_error or trigger:
        return "possible"
    return "related"


def _score(hits: list[Hit]) -> int:
    return sum(1 if h.generic else WEIGHTS[h.signature.kind] for h in hits)


def base_version(version: str | None) -> str | None:
    """ "2.5.1+cxx11" -> "2.5.1"; dev and rc versions are kept as they are (no release matrix applies)."""
    if not version:
        return None
    return version.split("+", 1)[0]


def advice(record: dict, version: str | None) -> dict:
    """What to tell a user on ``version``, from the record's measured matrix (codes, rendered per language)."""
    fixed = record.get("fixed_in")
    limitation = record.get("kind") == "limitation"  # answered as what it is: not a bug, lifted in fixed_in
    if not version:
        return {"code": "limitation" if limitation else "no-version", "fixed_in": fixed}
    v = base_version(version)
    measured = record.get("measured", {}).get(v)
    if measured == "reproduced":
        return {"code": "limitation-here" if limitation else "known-bug", "version": v, "fixed_in": fixed}
    if measured == "not-reproduced":
        return {"code": "limitation-lifted" if limitation else "measured-fixed", "version": v, "fixed_in": fixed}
    return {"code": "limitation" if limitation else "not-measured", "version": v, "fixed_in": fixed, "verdict": measured}


def own_frame(f: Facts, generic: dict) -> Frame | None:
    """The innermost frame of torch_xla's own Python code a paste shows (an entry frame aside, and a
    comprehension's, which the function it is written in stands for): where a traceback left torch_xla last."""
    for fr in reversed(f.frames):
        if _COMPREHENSION.fullmatch(fr.function):
            continue
        if _TORCH_XLA_PATH.search(fr.path.replace("\\", "/")) and not _generic_frame(fr.base, fr.function, generic):
            return fr
    return None


def stacked(judged: Iterable[tuple[dict, list[Hit]]], f: Facts, generic: dict | None = None) -> list[Match]:
    """For a paste that shows a stack and no error line (``f.stack_only``): the records with a specific frame
    signature at the paste's innermost torch_xla frame (:func:`own_frame`), each with the frame and call
    signatures it hits (specific ones); most evidence first. The stack stops in the code the record's bug fails
    in, which no message confirms: it names no bug (strength ``stack``), it says where to look. ``judged``: each
    record with its hits (:func:`_judge`), as :func:`triage` has them already."""
    generic = generic or GENERIC
    own = own_frame(f, generic) if f.stack_only else None
    if own is None:
        return []
    line = _line_of(f.text, own.pos)
    out = []
    for r, found in judged:
        hits = [h for h in found if h.signature.kind in ("frame", "call") and not h.generic]
        at_own = [h.signature for h in hits if h.signature.kind == "frame" and _at(h.signature, own)]
        if at_own:
            # the frame the stack stops in is the one shown for each signature it satisfies
            hits = [
                Hit(h.signature, f"{own.base} in {own.function}", line, own.pos, own.pos + 1) if h.signature in at_own else h
                for h in hits
            ]
            order = sorted(hits, key=lambda h: (h.line, KINDS.index(h.signature.kind), h.start))
            out.append(Match(r, "stack", _score(hits), order))
    out.sort(key=lambda m: (-m.score, m.id))
    return out


def judge(record: dict, f: Facts, generic: dict | None = None) -> Match | None:
    """One record's match against a log's facts, before the rules across records (sharing, groups)."""
    generic = generic or GENERIC
    hits = _anchor(_judge(record, f, generic), f, generic)
    strength = _strength(hits)
    if not strength:
        return None
    return Match(record, strength, _score(hits), sorted(hits, key=lambda h: (h.line, KINDS.index(h.signature.kind), h.start)))


def triage(
    log: Log | str,
    records: Iterable[dict],
    *,
    torch_xla: str | None = None,
    catalog: CatalogIndex = EMPTY_CATALOG,
    generic: dict | None = None,
) -> Result:
    """Every record whose signatures the log shows (see the rules above). ``records`` are triage data
    (:func:`export_record`, annotated by :func:`annotate`); ``torch_xla`` overrides the version in the log."""
    generic = generic or GENERIC
    f = facts(log, catalog, generic)
    version = torch_xla or f.torch_xla_version
    source = "given" if torch_xla else f.version_source
    every = [(r, _judge(r, f, generic, catalog.helpers)) for r in records]
    judged = [(r, hits) for r, hits in every if any(h.signature.kind in MESSAGE_KINDS for h in hits)]
    # evidence two records share in this paste (unless they are look-alikes) names neither
    shared: dict[int, dict[int, str]] = {}
    for i, (ri, hi) in enumerate(judged):
        group = set(ri.get("lookalikes", [])) | {ri["id"]}
        for j, (rj, hj) in enumerate(judged):
            if j == i or rj["id"] in group:
                continue
            for a, ha in enumerate(hi):
                if ha.signature.kind not in MESSAGE_KINDS or ha.generic:
                    continue
                if any(hb.signature.kind in MESSAGE_KINDS and ha.line == hb.line and ha.overlaps(hb) for hb in hj):
                    shared.setdefault(i, {})[a] = f"also evidence of {rj['id']} in this paste"
    matches: list[Match] = []
    related: list[Match] = []
    for i, (r, hits) in enumerate(judged):
        hits = [dataclasses.replace(h, generic=shared.get(i, {}).get(a, h.generic)) for a, h in enumerate(hits)]
        hits = _anchor(hits, f, generic)
        strength = _strength(hits)
        if not strength:
            continue
        if strength != "related" and not f.torch_xla and f.other_backends:
            strength = "related"  # another accelerator stack and nothing of torch_xla
        m = Match(r, strength, _score(hits), sorted(hits, key=lambda h: (h.line, KINDS.index(h.signature.kind), h.start)))
        m.advice = advice(r, version)
        (related if strength == "related" else matches).append(m)
    # one paste never names two unrelated bugs strongly; look-alikes are shown as one group
    strong = [m for m in matches if m.strength == "strong"]
    groups: list[set[str]] = []
    for m in strong:
        g = set(m.record.get("lookalikes", [])) | {m.id}
        for other in groups:
            if g & other:
                other |= g
                break
        else:
            groups.append(g)
    ambiguous = len(groups) > 1
    if ambiguous:
        for m in strong:
            m.strength = "possible"
    else:
        ids = [m.id for m in strong]
        for m in strong:
            m.group = sorted(i for i in ids if i == m.id or i in m.record.get("lookalikes", []))
    matches.sort(key=lambda m: (m.strength != "strong", -m.score, m.id))
    related.sort(key=lambda m: (-m.score, m.id))
    return Result(
        matches,
        f.torch_xla,
        version,
        f.torch_version,
        source,
        related,
        f.origins,
        ambiguous,
        f.other_backends,
        search_url(f),
        f.layers,
        f.stack_only,
        [] if matches or (f.other_backends and not f.torch_xla) else stacked(every, f, generic),
    )


# -- when nothing matches: where the error comes from, and where to look upstream --------------------------------
ISSUE_SEARCH = "https://github.com/pytorch/xla/issues?q="
_EXCEPTION_LINE = re.compile(
    r"^\s*(?:[\w.]+(?:Error|Exception|Interrupt|Exit)\b:?.*|.*Check failed:.*|.*INTERNAL ASSERT FAILED.*)$", re.M
)


def headline(f: Facts) -> list[str]:
    """The error a user would search for, as the phrases GitHub can match word for word: the pieces of the
    last line the catalog knows, else of the last exception line, with what differs between reports (paths,
    addresses, numbers, shapes, quoted names) cut out; pieces without three letters in a row are dropped,
    at most four."""
    if f.origins:
        text = f.origins[-1].row["text"]
    else:
        lines = _EXCEPTION_LINE.findall(f.text)
        if not lines:
            return []
        text = re.sub(r"^[\w.]*\.(?=\w+(?:Error|Exception))", "", lines[-1].strip())
        text = re.sub(r"\S*[/\\]\S*|0x[0-9a-fA-F]+|\b\d[\d.,:_]*\b|\[[^\]]*\]|'[^']*'|\"[^\"]*\"|<[^>]*>", "\u2026", text)
    pieces = [re.sub(r"\s+", " ", p).strip(" :,.-") for p in text.split("\u2026")]
    return [p[:120] for p in pieces if re.search(r"[A-Za-z]{3}", p)][:4]


def search_url(f: Facts) -> str:
    from urllib.parse import quote

    phrases = headline(f)
    return ISSUE_SEARCH + quote("is:issue " + " ".join(f'"{p}"' for p in phrases), safe="") if phrases else ""


def releases_note(origin: Origin, version: str | None) -> str:
    """ "" when the user's release prints this message (or is unknown), else the code for a note."""
    v = base_version(version)
    if not v or not origin.row["releases"]:
        return ""
    return "" if v in origin.row["release_list"] else "not-in-release"


# -- the data both engines read ---------------------------------------------------------------------------
def export_record(data: dict, matrix: dict | None) -> dict:
    """What triage needs of one record, as plain JSON (also written for the site's paste box)."""
    measured = {}
    for row in (matrix or {}).get("results", []):
        if row.get("kind", "release") == "release":
            measured[row["candidate"]] = row["verdict"]
    out = {
        "id": data["id"],
        "kind": data.get("kind", "bug"),
        "title": dict(data["title"]),
        "status": data["status"],
        "fixed_in": data["versions"].get("fixed_in"),
        "affected": data["versions"]["affected"],
        "workaround": dict(data["workaround"]),
        "signatures": [{k: v for k, v in dataclasses.asdict(s).items() if k != "generic"} for s in signatures_of(data)],
        "measured": measured,
        "lookalikes": list(data.get("lookalikes", {}).get("ids", [])),
        "reference": [data["title"]["en"], *data.get("symptoms", {}).get("en", [])],
    }
    if data.get("lookalikes"):
        out["tells_apart"] = dict(data["lookalikes"]["tells_apart"])
    return out


def export_catalog(cat) -> list[dict]:
    """The catalog as the engines match it: one row per message template (its places merged), with its key
    word, whether it is a sign of torch_xla and whether it is generic (why)."""
    from .catalog import ORIGINS, PLACEHOLDER

    rows: dict[str, dict] = {}
    for e in cat.entries:
        pattern = e.pattern
        words = [w for p in e.pieces for w in re.findall(r"[A-Za-z_]\w{2,}", p)]
        if not words or e.literal < 12:
            continue
        row = rows.get(pattern)
        if row is None:
            row = rows[pattern] = {
                "pattern": pattern,
                "key": max(words, key=lambda w: (len(w), w)),
                "text": e.text,
                "literal": e.literal,
                "origins": [],
                "places": [],
                "releases": set(),
                "kinds": set(),
                "sign": False,
                "generic": "",
            }
        if e.origin not in row["origins"]:
            row["origins"].append(e.origin)
        row["kinds"].add(e.kind)
        row["releases"] |= set(e.releases)
        if e.file:
            row["places"].append(
                {"file": e.file, "function": e.function, "releases": cat.releases_text(e.releases), "callers": e.callers}
            )
        if e.generic and not row["generic"]:
            row["generic"] = (
                f"{e.file} {e.function} ({e.callers} call sites)"
                if e.callers >= 10
                else f"{e.file} {e.function} (an accessor in a header)"
            )
        cond = e.template[len("Check failed: ") :] if e.template.startswith("Check failed: ") else ""
        if (
            e.origin in ("torch_xla", "lazy")
            and (e.origin == "lazy" or not e.torch)
            and (len(cond.strip(PLACEHOLDER)) >= 5 or (e.literal >= 20 and len(words) >= 3))
        ):
            row["sign"] = True
    out = []
    for row in rows.values():
        row["origins"].sort(key=ORIGINS.index)
        if row["origins"] == ["xla"]:
            row["sign"] = False
        if len({(p["file"], p["function"]) for p in row["places"]}) >= 3 and not row["generic"]:
            row["generic"] = f"printed from {len(row['places'])} places"
        rel = [r for r in cat.releases if r in row["releases"]]
        row["release_list"] = rel
        row["releases"] = cat.releases_text(rel)
        row["kinds"] = sorted(row["kinds"])
        row["places"].sort(key=lambda p: (p["file"], p["function"]))
        out.append(row)
    out.sort(key=lambda r: r["pattern"])
    return out


def export_records(records: list[dict], cat=None, background: list[tuple[str, str]] | None = None) -> dict:
    """What both engines read: the rules' data (weights, kinds, normalisation, the patterns of signs,
    versions and error lines, the generic lists, the advice texts), the records' triage data with each
    signature's measured genericity (:func:`annotate`), and the message catalog (:func:`export_catalog`)."""
    from . import catalog as catalog_mod

    cat = cat if cat is not None else catalog_mod.Catalog((), [])
    return {
        "weights": WEIGHTS,
        "message_kinds": list(MESSAGE_KINDS),
        "trigger_kinds": list(TRIGGER_KINDS),
        "normalize": [list(x) for x in NORMALIZE],
        "frame_pattern": FRAME_PATTERN,
        "notebook_frame": NOTEBOOK_FRAME,
        "torch_xla_signs": [list(x) for x in TORCH_XLA_SIGNS],
        "layer_signs": [list(x) for x in LAYER_SIGNS],
        "layers": list(LAYERS),
        "error_line": ERROR_LINE,
        "stack_line": STACK_LINE,
        "bare_exception": BARE_EXCEPTION,
        "torch_xla_path": TORCH_XLA_PATH,
        "comprehension": COMPREHENSION,
        "short_paste": SHORT_PASTE,
        "version_patterns": {
            name: [[where, p.format(name=rx), f] for where, p, f in VERSION_PATTERNS] for name, rx in _NAMES.items()
        },
        "generic": GENERIC,
        "advice": ADVICE,
        "issue_search": ISSUE_SEARCH,
        "records": annotate(records, background),
        "catalog": export_catalog(cat),
        "helpers": export_helpers(cat),
        "catalog_releases": list(cat.releases),
    }


#: the inexact matches of the reported tier that share only part of a message (upstream.index.match_cut, and a
#: title the pasted line starts with: match_titles; the same catalog template with other values: match_templates; an import a stack stops at:
#: match_imports)
PARTIAL = ("cut", "cause", "sentence", "title-cut", "template", "import")


def reported_hits(result: Result, text: str, clusters: list) -> list:
    """The stored upstream reports a paste matches (:func:`xlakb.upstream.index.match`), or none when the
    paste shows another accelerator stack and no sign of torch_xla: as with the records, the same words from
    another backend are not this project's bug (the site's paste box does the same). A match on part of a
    message needs a sign of torch_xla or of a layer below it. The paste is read as the records' engine reads it
    (:func:`normalize`)."""
    from .upstream.index import match, template_text

    if result.other_backends and not result.torch_xla_signs:
        return []
    text = normalize(text)  # what a copy undoes (entities, quotes, lost line breaks), as for records
    lines = text.split("\n")
    # the lines the catalog places at a template, whole (the origin is only the template's part of it)
    templates = [(t, lines[o.line - 1].strip()) for o in result.origins if (t := template_text(o.row))]
    hits = match(text, clusters, templates)
    if not result.torch_xla_signs and not result.layers:
        # a cut, a cause or a first sentence is a partial match: with nothing in the paste printed by torch_xla or
        # the layers below it, the same start of torch's own words (a CUDA out-of-memory) is no evidence
        hits = [h for h in hits if h.how not in PARTIAL]
    return hits


def engine(data: dict) -> tuple[list[dict], CatalogIndex]:
    """The records and the catalog index of exported data, ready for :func:`triage`."""
    return data["records"], CatalogIndex(data["catalog"], data.get("helpers"))


def export_helpers(cat) -> list[list[str]]:
    """[qualified C++ function, why] of the catalog's generic helpers: a check naming one of them in a
    stack trace is generic evidence (its checks fire in many bugs)."""
    out: dict[str, str] = {}
    for e in cat.entries:
        if e.origin in ("torch_xla", "lazy") and e.generic and e.function and ("::" in e.function or e.callers >= 10):
            why = f"{e.function} ({e.callers} call sites)" if e.callers >= 10 else f"{e.function} (an accessor in a header)"
            out.setdefault(e.function, why)
    return [[name, why] for name, why in sorted(out.items())]


def _hit_json(h: Hit) -> dict:
    return {
        "kind": h.signature.kind,
        "signature": h.signature.describe(),
        "excerpt": h.excerpt,
        "line": h.line,
        "generic": h.generic,
    }


def result_json(result: Result) -> dict:
    """A result as JSON (``xlakb triage --json`` and the comparison with the site's engine)."""

    def match_json(m: Match) -> dict:
        return {
            "id": m.id,
            "strength": m.strength,
            "score": m.score,
            "group": m.group,
            "matched": [_hit_json(h) for h in m.hits],
            "advice": m.advice,
        }

    return {
        "torch_xla": result.torch_xla_version,
        "torch": result.torch_version,
        "version_source": result.version_source,
        "torch_xla_signs": list(result.torch_xla_signs),
        "other_backends": list(result.other_backends),
        "layers": list(result.layers),
        "stack_only": result.stack_only,
        "ambiguous": result.ambiguous,
        "matches": [match_json(m) for m in result.matches],
        "related": [match_json(m) for m in result.related],
        "stacked": [match_json(m) for m in result.stacked],
        "origins": [
            {
                "line": o.line,
                "excerpt": o.excerpt,
                "text": o.row["text"],
                "origins": o.row["origins"],
                "places": o.row["places"],
                "releases": o.row["releases"],
                "generic": o.row["generic"],
                "sign": o.row["sign"],
                "note": releases_note(o, result.torch_xla_version),
            }
            for o in result.origins
        ],
        "search": result.search,
    }


# -- words for people ----------------------------------------------------------------------------
ADVICE = {
    "en": {
        "known-bug": "torch_xla {version} shows this bug (measured: reproduced). {fix}",
        "measured-fixed": "torch_xla {version} should not show it (measured: not reproduced): a different bug or a "
        "regression; check with `xlakb repro {id} --torch-xla {version}`.",
        "not-measured": "torch_xla {version} was not measured for this record. {fix}",
        "no-version": "{fix} Your torch_xla version is not in the log: pass --torch-xla X.Y.Z for advice on your release.",
        "no-version-site": "{fix} Your torch_xla version is not in the log: give it in the “torch_xla version” field above "
        "the answer for advice on your release.",
        "fixed": "Fixed in {fixed_in}: upgrade, or use the workaround.",
        "unfixed": "No release fixes it yet: use the workaround.",
        "limitation-here": "torch_xla {version} does not support this yet (measured): a limitation of releases before "
        "{fixed_in}, not a bug. It works from {fixed_in}.",
        "limitation-lifted": "torch_xla {version} supports this (measured): what you see has another cause; check with "
        "`xlakb repro {id} --torch-xla {version}`.",
        "limitation": "A limitation of releases before {fixed_in}, not a bug: it works from {fixed_in}.",
    },
    "zh": {
        "known-bug": "torch_xla {version} 存在这个问题（实测：复现）。{fix}",
        "measured-fixed": "torch_xla {version} 不应出现这个问题（实测：未复现）：可能是另一个问题或回归；"
        "请用 `xlakb repro {id} --torch-xla {version}` 验证。",
        "not-measured": "这条记录没有在 torch_xla {version} 上实测过。{fix}",
        "no-version": "{fix}日志中没有 torch_xla 版本：加上 --torch-xla X.Y.Z 可得到针对你所用版本的建议。",
        "no-version-site": "{fix}日志中没有 torch_xla 版本：在结果上方的“torch_xla 版本”输入框中填写后，可得到针对你所用版本的建议。",
        "fixed": "已在 {fixed_in} 修复：请升级，或使用规避方法。",
        "unfixed": "还没有发布版本修复：请使用规避方法。",
        "limitation-here": "torch_xla {version} 尚不支持这一功能（实测）：这是 {fixed_in} 之前版本的限制，不是缺陷。"
        "从 {fixed_in} 起可用。",
        "limitation-lifted": "torch_xla {version} 已支持这一功能（实测）：你遇到的问题另有原因；请用 "
        "`xlakb repro {id} --torch-xla {version}` 验证。",
        "limitation": "这是 {fixed_in} 之前版本的限制，不是缺陷：从 {fixed_in} 起可用。",
    },
}


def advice_text(match: Match, lang: str = "en", surface: str = "cli") -> str:
    words = ADVICE[lang]
    a = match.advice
    fix = words["fixed"].format(fixed_in=a.get("fixed_in")) if a.get("fixed_in") else words["unfixed"]
    code = a["code"] + ("-site" if surface == "site" and a["code"] == "no-version" else "")
    return words[code].format(version=a.get("version"), id=match.id, fix=fix, fixed_in=a.get("fixed_in"))


# -- a record's signatures from a log (`xlakb new --from-log`) -------------------------------------------
def _generalise(line: str) -> str:
    """A regex of an error line that other users' pastes of the same error also match: paths, addresses,
    numbers, shapes and quoted names made into placeholders. Python's own attribute error keeps its names: in
    ``'int' object has no attribute 'device'`` they are the code's type and attribute, never a user's data,
    and without them the line is every AttributeError."""
    out, pos = [], 0
    token = re.compile(
        r"(?P<attr>(?:'[A-Za-z_][\w.]*' object|module '[\w.]+'|type object '[\w.]+') has no attribute "
        r"'[A-Za-z_]\w*')|"
        r"(?P<path>(?:[A-Za-z]:)?[\w.\-]*[/\\][\w./\\\-]+)|(?P<hex>0x[0-9a-fA-F]+)|(?P<shape>\[[\d, ]*\])|"
        r"(?P<num>\b\d+(?:\.\d+)?\b)|(?P<quoted>'[^'\n]{1,80}'|\"[^\"\n]{1,80}\")"
    )
    for m in token.finditer(line):
        out.append(re.escape(line[pos : m.start()]))
        kind = m.lastgroup
        out.append(
            re.escape(m.group(0))
            if kind == "attr"
            else {
                "path": r"\S+",
                "hex": r"0x[0-9a-fA-F]+",
                "shape": r"\[[\d, ]*\]",
                "num": r"\d+(?:\.\d+)?",
                "quoted": r"['\"][^'\"]*['\"]",
            }[kind]
        )
        pos = m.end()
    out.append(re.escape(line[pos:]))
    return "".join(out).replace(r"\ ", " ").strip()


def signatures_from_log(log: Log | str, catalog: CatalogIndex = EMPTY_CATALOG) -> list[dict]:
    """Signatures for a new record, taken from a failing run's log: its final error line (as the catalog
    knows it when it does), its checks, the innermost torch_xla frame that is not an entry frame, the
    call in the user's code, and the XLA settings it shows. A person edits them before `validate`."""
    f = facts(log, catalog)
    text = f.text
    sigs: list[dict] = []
    errors = _EXCEPTION_LINE.findall(text)
    known = {o.line: o for o in f.origins}
    if errors:
        line = errors[-1].strip()
        n = text[: text.find(errors[-1])].count("\n") + 1
        o = known.get(n)
        sigs.append({"message": o.row["pattern"] if o and o.row["literal"] >= 16 else _generalise(line)})
    for m in re.finditer(r"(?:Check failed|RET_CHECK failure)[^\n]*", text):
        n = text.count("\n", 0, m.start()) + 1
        o = known.get(n)
        check = o.row["pattern"] if o else _generalise(m.group(0)[:200])
        if {"check": check} not in sigs and not any(s.get("message") == check for s in sigs):
            sigs.append({"check": check})
        if len([s for s in sigs if "check" in s]) >= 2:
            break
    own = [
        fr for fr in f.frames if re.search(r"[/\\]torch_xla[/\\]", fr.path) and not _generic_frame(fr.base, fr.function, GENERIC)
    ]
    if own:
        fr = own[-1]
        sigs.append({"frame": {"file": re.escape(fr.base), "function": re.escape(fr.function)}})
    user = [
        fr
        for fr in f.frames
        if not re.search(r"site-packages|dist-packages|[/\\]lib[/\\]python|[/\\]torch(?:_xla)?[/\\]", fr.path) and fr.source
    ]
    for fr in user:
        m = re.search(r"([A-Za-z_][\w.]*)\s*\(", fr.source)
        if m and m.group(1).split(".")[-1] not in ("print", "len", "range", "main"):
            sigs.append({"call": re.escape(m.group(1).split(".")[-1]) + r"\("})
            break
    for m in re.finditer(r"\b(XLA_[A-Z0-9_]+|PJRT_[A-Z0-9_]+)=(\S+)", text):
        if m.group(1) not in ("PJRT_DEVICE",) and not any(s.get("env", {}).get("name") == m.group(1) for s in sigs):
            sigs.append({"env": {"name": m.group(1), "value": re.escape(m.group(2))}})
    return mark_shared(sigs)


def mark_shared(sigs: list[dict]) -> list[dict]:
    """New signatures with ``shared`` on each error an unrelated log shows too (``data/background``): it gates a
    match but is no evidence by itself, and validate asks a record to say so."""
    background = [(name, facts(t).text) for name, t in background_logs()]
    for sig in sigs:
        kind = next(iter(sig))
        if kind in MESSAGE_KINDS:
            shown = next((name for name, t in background if _rx(sig[kind], re.M).search(t)), None)
            if shown:
                sig["shared"] = f"also in an unrelated log ({shown}); only with the other signatures is it this bug"
    return sigs
