"""Error signatures of what people paste: the error lines of a report, normalised so that two reports of the
same crash (other paths, shapes, tensor names, addresses, line numbers) get the same signature, the way
Socorro and syzbot group crash reports.

Pure code over text. A signature is the error's words with placeholders, plus the guilty location when the
paste names one (the innermost torch_xla C++ function, or the source file of a ``Check failed``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The rules are data: the site's paste box (site/assets/javascripts/triage.js) runs the same strings
# (:func:`export_rules`), so both say the same of a paste.
#: (kind, pattern): lines that hold an error a user would search for, most specific kind first
KIND_PATTERNS = (
    ("check", r"(?:Check failed|CHECK failed|RET_CHECK failure)\b.*"),
    ("assert", r"\S.*INTERNAL ASSERT FAILED.*"),
    ("status", r"(?:Non-OK-status|Bad StatusOr access|(?<![A-Z_])(?:INVALID_ARGUMENT|INTERNAL|UNIMPLEMENTED|"
               r"RESOURCE_EXHAUSTED|FAILED_PRECONDITION|NOT_FOUND|UNAVAILABLE|ABORTED|OUT_OF_RANGE|"
               r"DEADLINE_EXCEEDED|UNKNOWN)(?::| error:))\s*.*"),
    ("lowering", r"(?:Error while lowering|Lowering (?:of )?\S+ (?:is )?not (?:supported|implemented)|"
                 r"Unsupported XLA type)\b.*"),
    ("exception", r"(?:^|(?<=\s)|(?<=>))(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:.*"),
    ("crash", r"(?:Segmentation fault|SIGSEGV|SIGABRT|Aborted \(core dumped\)|Fatal Python error:).*"),
)
LOG_PREFIX = (r"^\s*(?:\S+ \S+ main shadow\.py:\d+ > )?(?:[FEWI]\d{4} [\d:. ]+\s*\d*\s*\S+:\d+\]\s*|"
              r"\d{4}-\d\d-\d\d[ T][\d:.,]+:?\s*(?:[FEWI] )?(?:\S+:\d+\]\s*)?)")
CPP_FRAME = r"\btorch_xla::(?:\w+::)*(\w+)(?=\()"
SOURCE = r"(?:torch_xla/csrc|xla|tensorflow/compiler/xla)/[\w/]*?(\w+\.(?:cpp|cc|h))(?::\d+)?"
#: an inline code span of Markdown prose
CODE_SPAN = r"`([^`\n]{8,})`"
#: a quoted text that is an API name (a type, an attribute, an op) stays: it is the error
IDENTIFIER = r"^.[A-Za-z_][\w.:]{0,60}.$"
#: (pattern, replacement): what differs between reports of one error, in this order; "keep-identifier":
#: <name> unless the quoted text is an API name
PLACEHOLDERS = (
    (r"\*\*\* Begin stack trace \*\*\*.*|;?\s*stack trace:?\s*\*\*\*.*|\s\*\*\*\s*$", ""),
    # a JSON blob after the message (gRPC's debug string, with the words that introduce it)
    (r"(?:\"?\s*and grpc_error_string\s*=\s*\"?)?\{\s*\"\w+\"\s*:.*", ""),
    (r"(?:[A-Za-z]:)?(?:[\w.\-~]*[/\\])+[\w.\-]+(?::\d+)?", "<path>"),
    # the source location a C++ error starts with ("RuntimeError: torch_xla/csrc/x.cpp:12 : msg") is the
    # guilty location, kept apart: reports that leave it out (titles, retyped lines) are the same error
    (r"^((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception):\s*)<path>\s+:\s+", r"\1"),
    (r"0x[0-9a-fA-F]+", "<addr>"),
    (r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B?|bytes)\b", "<size>"),
    (r"\b(?:pred|[suf]\d{1,2}|bf16|c64|c128)\[[\d,\s]*\](?:\{[\d,\s]*\})?", "<shape>"),
    (r"\b(?:torch\.)?(?:float|bfloat|int|uint|complex)(?:8|16|32|64|128)\b|\b(?:torch\.)?(?:half|double|bool|long)\b",
     "<dtype>"),
    (r"\[[\d,\s]*\]|\([\d,\s]+\)|torch\.Size\(\[[\d,\s]*\]\)", "<dims>"),
    (r"'[^'\n]{1,120}'|\"[^\"\n]{1,120}\"|`[^`\n]{1,120}`", "keep-identifier"),
    (r"(?<![\w<])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b", "<n>"),
    (r"\b(?:xla|cpu|cuda|tpu):<n>\b", "<device>"),
    (r"(?:<n>[\s,]*){2,}", "<n> "),
    (r"\s+", " "),
)
MAX_SIGNATURE = 200
KINDS = tuple((k, re.compile(p)) for k, p in KIND_PATTERNS)
_LOG_PREFIX = re.compile(LOG_PREFIX)
_CPP_FRAME = re.compile(CPP_FRAME)
_SOURCE = re.compile(SOURCE)
_IDENTIFIER = re.compile(IDENTIFIER)
_CODE_SPAN = re.compile(CODE_SPAN)


def _keep_identifier(m: re.Match) -> str:
    return m.group(0) if _IDENTIFIER.match(m.group(0)) else "<name>"


_PLACEHOLDERS = tuple((re.compile(p), _keep_identifier if r == "keep-identifier" else r) for p, r in PLACEHOLDERS)


def export_rules() -> dict:
    """The rules as the site's paste box reads them."""
    return {"kinds": [list(k) for k in KIND_PATTERNS], "log_prefix": LOG_PREFIX, "cpp_frame": CPP_FRAME,
            "source": SOURCE, "identifier": IDENTIFIER, "code_span": CODE_SPAN, "placeholders": [list(p) for p in PLACEHOLDERS],
            "max_signature": MAX_SIGNATURE}


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
    return text.strip(" :;,.")[:MAX_SIGNATURE]


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
    lines = re.split(r"\r\n|\r|\n", text)
    for i, raw in enumerate(lines):
        line = _LOG_PREFIX.sub("", raw, count=1).strip().strip("`").strip()
        if not line or len(line) > 2000:
            continue
        # an error quoted inline in prose ("it fails with `RuntimeError: ...` when") is that code span
        spans = [sp for sp in _CODE_SPAN.findall(line) if any(rx.search(sp) for _, rx in KINDS)]
        for segment in spans or [line]:
            for kind, rx in KINDS:
                m = rx.search(segment)
                if not m:
                    continue
                found = m.group(0).strip()
                sig = normalise(_strip_wrapper(found))
                if len(sig) < 8:
                    break
                around = "\n".join(lines[i:i + 12])
                item = ErrorLine(kind, found[:500], sig, _location(segment, around))
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
