"""Error signatures of what people paste: the error lines of a report, normalised so that two reports of the
same crash (other paths, shapes, tensor names, addresses, line numbers) get the same signature, the way
Socorro and syzbot group crash reports.

Pure code over text. A signature is the error's words with placeholders, plus the guilty location when the
paste names one (the innermost torch_xla C++ function, or the source file of a ``Check failed``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: lines that hold an error a user would search for, most specific kind first
KINDS = (
    ("check", re.compile(r"(?:Check failed|CHECK failed|RET_CHECK failure)\b.*")),
    ("assert", re.compile(r"\S.*INTERNAL ASSERT FAILED.*")),
    ("status", re.compile(r"(?:Non-OK-status|Bad StatusOr access|(?<![A-Z_])(?:INVALID_ARGUMENT|INTERNAL|UNIMPLEMENTED|"
                          r"RESOURCE_EXHAUSTED|FAILED_PRECONDITION|NOT_FOUND|UNAVAILABLE|ABORTED|OUT_OF_RANGE|"
                          r"DEADLINE_EXCEEDED|UNKNOWN)(?::| error:))\s*.*")),
    ("lowering", re.compile(r"(?:Error while lowering|Lowering (?:of )?\S+ (?:is )?not (?:supported|implemented)|"
                            r"Unsupported XLA type)\b.*")),
    ("exception", re.compile(r"(?:^|(?<=\s)|(?<=>))(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:.*")),
    ("crash", re.compile(r"(?:Segmentation fault|SIGSEGV|SIGABRT|Aborted \(core dumped\)|Fatal Python error:).*")),
)
_LOG_PREFIX = re.compile(r"^\s*(?:\S+ \S+ main shadow\.py:\d+ > )?(?:[FEWI]\d{4} [\d:. ]+\s*\d*\s*\S+:\d+\]\s*|"
                         r"\d{4}-\d\d-\d\d[ T][\d:.,]+:?\s*(?:[FEWI] )?(?:\S+:\d+\]\s*)?)")
_CPP_FRAME = re.compile(r"\btorch_xla::(?:\w+::)*(\w+)(?=\()")
_SOURCE = re.compile(r"(?:torch_xla/csrc|xla|tensorflow/compiler/xla)/[\w/]*?(\w+\.(?:cpp|cc|h))(?::\d+)?")
_PLACEHOLDERS = (
    (re.compile(r"\*\*\* Begin stack trace \*\*\*.*|;?\s*stack trace:?\s*\*\*\*.*|\s\*\*\*\s*$"), ""),
    (re.compile(r"\{\s*\"\w+\"\s*:.*"), ""),  # a JSON blob after the message (gRPC's debug string)
    (re.compile(r"(?:[A-Za-z]:)?(?:[\w.\-~]*[/\\])+[\w.\-]+(?::\d+)?"), "<path>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B?|bytes)\b"), "<size>"),
    (re.compile(r"\b(?:pred|[suf]\d{1,2}|bf16|c64|c128)\[[\d,\s]*\](?:\{[\d,\s]*\})?"), "<shape>"),
    (re.compile(r"\b(?:torch\.)?(?:float|bfloat|int|uint|complex)(?:8|16|32|64|128)\b|\b(?:torch\.)?(?:half|double|bool|long)\b"), "<dtype>"),
    (re.compile(r"\[[\d,\s]*\]|\([\d,\s]+\)|torch\.Size\(\[[\d,\s]*\]\)"), "<dims>"),
    # a quoted API name stays (the type, the attribute, the op); any other quoted text is the user's
    (re.compile(r"'[^'\n]{1,120}'|\"[^\"\n]{1,120}\"|`[^`\n]{1,120}`"),
     lambda m: m.group(0) if re.fullmatch(r".[A-Za-z_][\w.:]{0,60}.", m.group(0)) else "<name>"),
    (re.compile(r"(?<![\w<])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"), "<n>"),
    (re.compile(r"\b(?:xla|cpu|cuda|tpu):<n>\b"), "<device>"),
)


@dataclass(frozen=True)
class ErrorLine:
    """One error line of a paste: its kind, the line as pasted (log prefix removed), its signature text and
    the guilty location it names (or "")."""

    kind: str
    line: str
    signature: str
    location: str

    @property
    def key(self) -> str:
        return self.signature + (f" @ {self.location}" if self.location else "")


def normalise(message: str) -> str:
    """An error message with what differs between reports made into placeholders."""
    text = message.strip()
    for rx, repl in _PLACEHOLDERS:
        text = rx.sub(repl, text)
    text = re.sub(r"(?:<n>[\s,]*){2,}", "<n> ", text)
    text = re.sub(r"\s+", " ", text).strip(" :;,.")
    return text[:200]


def _location(line: str, around: str) -> str:
    """The guilty location: the source file a check names, else the innermost torch_xla function below it."""
    m = _SOURCE.search(line)
    if m:
        return m.group(1)
    frames = _CPP_FRAME.findall(around)
    return frames[0] if frames else ""


def error_lines(text: str) -> list[ErrorLine]:
    """The error lines of a paste, in order, each once (by signature and location)."""
    out: list[ErrorLine] = []
    seen: set[str] = set()
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        line = _LOG_PREFIX.sub("", raw).strip().strip("`").strip()
        if not line or len(line) > 2000:
            continue
        for kind, rx in KINDS:
            m = rx.search(line)
            if not m:
                continue
            found = m.group(0).strip()
            if kind == "exception" and re.match(r"^(?:Traceback|During handling)", found):
                break
            sig = normalise(_strip_wrapper(found))
            if len(sig) < 8 or sig.endswith(("Error", "Exception")) and ":" not in found:
                break
            around = "\n".join(lines[i:i + 12])
            item = ErrorLine(kind, found[:500], sig, _location(line, around))
            if item.key not in seen:
                seen.add(item.key)
                out.append(item)
            break
    return out


def _strip_wrapper(line: str) -> str:
    """``RuntimeError: torch_xla/csrc/x.cpp:12 : Check failed: a == b`` is the check, not the RuntimeError."""
    for kind, rx in KINDS[:3]:
        m = rx.search(line)
        if m and m.start() > 0:
            return m.group(0)
    return line


def primary(lines: list[ErrorLine]) -> ErrorLine | None:
    """The line a report is grouped by: the most specific kind, the last of it (the final error)."""
    order = {k: i for i, (k, _) in enumerate(KINDS)}
    return min(reversed(lines), key=lambda e: order[e.kind]) if lines else None
