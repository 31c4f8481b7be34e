"""The catalog of messages torch_xla can print, per release, and where each comes from.

A pasted ``Check failed: xtensor`` has no frame, but only one program prints it: torch_xla, from
``torch_xla/csrc/aten_xla_bridge.cpp`` in ``GetXlaTensor``. The catalog knows that, for every release:

* ``torch_xla`` — what torch_xla's own code prints: Python ``raise``/``warn``/``assert``/logging strings
  read from each release's wheel, and C++ checks, errors, statuses and log lines read from the
  ``torch_xla/csrc`` sources at each release tag of a pytorch/xla clone (file, function, and how many
  call sites that function has: a helper called from everywhere is generic evidence);
* ``lazy`` — torch's lazy-tensor core (``torch/csrc/lazy``), compiled into torch but reached only
  through a lazy backend such as torch_xla; located in its sources, its releases read from the
  strings of each torch wheel's ``libtorch_cpu.so``;
* ``xla`` — XLA's own format strings (``Operands to %s must be real-valued ...``) as compiled into each
  wheel's ``_XLAC`` extension: they say where a message comes from, but JAX prints them too, so they
  are never by themselves a sign of torch_xla.

An entry is a message template: literal pieces with placeholders between them, kept as a regex that
both triage engines (Python here, JavaScript in the site's paste box) run on a line. The catalog is
data (``data/catalog.jsonl``, one entry a line, sorted, so a refresh makes a readable diff), built by
``xlakb catalog build`` (:func:`build`) and read by :func:`load`.

Library code: no printing; progress goes through a callback.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .errors import XlakbError

ORIGINS = ("torch_xla", "lazy", "xla")
#: words about where a message comes from, per origin
ORIGIN_WORDS = {
    "torch_xla": {"en": "torch_xla", "zh": "torch_xla"},
    "lazy": {"en": "torch's lazy-tensor core (reached through torch_xla)", "zh": "torch 的惰性张量核心（经由 torch_xla 调用）"},
    "xla": {
        "en": "XLA, compiled into torch_xla's _XLAC extension (JAX prints it too)",
        "zh": "XLA（编译在 torch_xla 的 _XLAC 扩展中；JAX 也会打印）",
    },
}
#: an entry needs this much literal text to be matched at all (shorter ones say nothing)
MIN_LITERAL = 12
#: a C++ function called from at least this many places is a generic helper (its checks fire in many bugs)
HELPER_CALL_SITES = 10
PLACEHOLDER = "\x00"


class CatalogError(XlakbError):
    pass


@dataclass(frozen=True)
class Entry:
    """One message template at one place."""

    origin: str  # torch_xla | lazy | xla
    kind: str  # check | raise | warn | log | error | assert | assert-internal | format
    template: str  # literal text with PLACEHOLDER where a value is inserted
    file: str = ""  # path in its repository ("" for xla)
    function: str = ""  # enclosing function, qualified by its class when there is one
    exc: str = ""  # the Python exception type raised, when known
    callers: int = -1  # call sites of `function` in its release's sources (C++ only; -1 unknown)
    releases: tuple[str, ...] = ()
    torch: bool = False  # torch itself holds the same text: not a sign of torch_xla

    @property
    def pieces(self) -> list[str]:
        return [p for p in self.template.split(PLACEHOLDER) if p.strip()]

    @property
    def literal(self) -> int:
        return sum(len(p.strip()) for p in self.pieces)

    @property
    def text(self) -> str:
        """The template for people: placeholders shown as …"""
        return re.sub(r"\s+", " ", self.template.replace(PLACEHOLDER, "…")).strip()

    @property
    def pattern(self) -> str:
        return template_pattern(self.template, self.kind)

    @property
    def where(self) -> str:
        return f"{self.file} {self.function}".strip() if self.file else ""

    @property
    def generic(self) -> bool:
        """A check in a helper that many places call (or in a header's inline accessor): it fires in many
        unrelated bugs, so it says where, not which bug (syzkaller skips such frames the same way)."""
        if self.origin == "xla":
            return False
        return self.callers >= HELPER_CALL_SITES or (self.file.endswith(".h") and self.kind == "check")

    def key(self) -> tuple:
        return (self.origin, self.kind, self.template, self.file, self.function, self.exc)


def template_pattern(template: str, kind: str = "") -> str:
    """A regex (also valid JavaScript) matching what the template prints on one line: each literal piece
    escaped, placeholders as short runs; a check's condition must end where the printed condition ends."""
    parts = template.split(PLACEHOLDER)
    out = []
    for i, part in enumerate(parts):
        piece = re.sub(r"\s+", " ", part)
        rx = re.escape(piece).replace(r"\ ", r"\s+").replace(" ", r"\s+")
        out.append(rx)
    pattern = "[^\\n]*?".join(p for p in out)
    pattern = pattern.strip()
    # trailing and leading whitespace of a piece is not required
    pattern = re.sub(r"^(?:\\s\+)+|(?:\\s\+)+$", "", pattern)
    if kind == "check" and re.search(r"[\w)\]]$", template):  # a condition ends here, not inside a longer one
        pattern += r"(?=\s|$|[,;'\"\]])"
    return pattern


# -- reading C++ -----------------------------------------------------------------------------------
_CONTROL = {
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "sizeof",
    "decltype",
    "do",
    "else",
    "try",
    "static_assert",
    "defined",
    "alignof",
    "new",
    "delete",
    "throw",
}
_CMP = {"EQ": "==", "NE": "!=", "LE": "<=", "LT": "<", "GE": ">=", "GT": ">"}
#: statements that print: checks, errors, statuses, exceptions, warnings, log lines
_CPP_START = re.compile(
    r"\b(?P<macro>(?:XLA_|TF_|ABSL_|TORCH_)?(?:D?CHECK)(?:_(?P<cmp>EQ|NE|LE|LT|GE|GT|OK))?|TORCH_CHECK(?:_\w+)?|"
    r"TORCH_INTERNAL_ASSERT(?:_DEBUG_ONLY)?|TORCH_WARN(?:_ONCE)?|XLA_ERROR|TF_ERROR_STREAM|XLA_ERROR_WITH_LOCATION|"
    r"(?:TF_)?LOG\((?:ERROR|WARNING|FATAL|INFO)\)|throw|"
    r"(?:absl::|tsl::errors::|errors::|xla::)\w*(?:Error|InvalidArgument|Internal|Unimplemented|FailedPrecondition|"
    r"NotFound|OutOfRange|ResourceExhausted|Unavailable|Aborted|AlreadyExists|Unknown))\b"
)


@dataclass
class _Cpp:
    clean: str  # the source with comments blanked and each string literal as "\x01<n>\x01"
    literals: list[str]


def _scan_cpp(src: str) -> _Cpp:
    """Comments blanked (newlines kept), string literals replaced by numbered markers, char literals blanked."""
    out: list[str] = []
    lits: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in src[i:j]))
            i = j
        elif c == "R" and src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end
            lits.append(src[i + m.end() : end])
            out.append(f"\x01{len(lits) - 1}\x01" + "\n" * src[i:end].count("\n"))
            i = end + len(m.group(1)) + 2
        elif c == '"':
            j = i + 1
            buf = []
            while j < n and src[j] != '"':
                if src[j] == "\\" and j + 1 < n:
                    esc = src[j + 1]
                    buf.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "0": ""}.get(esc, "\\" + esc))
                    j += 2
                    continue
                if src[j] == "\n":  # an unterminated literal: stop at the line
                    break
                buf.append(src[j])
                j += 1
            lits.append("".join(buf))
            out.append(f"\x01{len(lits) - 1}\x01")
            i = j + 1
        elif c == "'" and i + 1 < n and not (i > 0 and (src[i - 1].isalnum())):
            m = re.match(r"'(?:\\.|[^'\\\n]){1,4}'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return _Cpp("".join(out), lits)


_LIT = re.compile(r"\x01(\d+)\x01")


def _balanced(text: str, start: int) -> int:
    """The index just past the parenthesis closing the one at ``start`` (or len(text))."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def split_top_level(text: str, sep: str = ",", escapes: bool = False) -> list[str]:
    """``text`` split at ``sep`` outside brackets (``f(a, b), c`` -> ``f(a, b)``, `` c``); with ``escapes``,
    a backslash keeps the next character (an escaped bar in a regex)."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        ch = text[i]
        if escapes and ch == "\\" and i + 1 < len(text):
            cur.append(text[i : i + 2])
            i += 2
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _split_args(text: str) -> list[str]:
    return [a.strip() for a in split_top_level(text)]


def _stringize(expr: str, lits: list[str]) -> str:
    """What the preprocessor's # makes of an expression: whitespace runs as one space, literals quoted."""
    expr = _LIT.sub(lambda m: '"' + lits[int(m.group(1))].replace("\\", "\\\\").replace('"', '\\"') + '"', expr)
    return re.sub(r"\s+", " ", expr).strip()


def _pieces(text: str, lits: list[str]) -> str:
    """The message a statement prints: its string literals in order, placeholders for everything between
    them (``__FUNCTION__``, values); a literal's line breaks are placeholders too (one line is matched)."""
    # a choice between literals (c ? " is null" : " is deleted") prints one of them: a placeholder
    text = re.sub(r"\?\s*\x01\d+\x01\s*:\s*\x01\d+\x01", " value ", text)
    out: list[str] = []
    pos = 0
    for m in _LIT.finditer(text):
        between = text[pos : m.start()]
        if re.search(r"[\w)\]]", re.sub(r"<<|\+|,|\(|StrCat|absl::|std::string|\s", "", between)) and out:
            out.append(PLACEHOLDER)
        out.append(lits[int(m.group(1))].replace("\n", PLACEHOLDER).replace("\t", " "))
        pos = m.end()
    rest = text[pos:]
    if out and re.search(r"[\w)\]]", re.sub(r"<<|\)|;|\s", "", rest)):
        out.append(PLACEHOLDER)
    tpl = "".join(out)
    tpl = re.sub(f"{PLACEHOLDER}+", PLACEHOLDER, tpl)
    # printf/absl placeholders inside a literal
    return re.sub(r"%(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGcspv]|\$\d", PLACEHOLDER, tpl)


class _Scopes:
    """Which function (qualified by its class) encloses each position of cleaned C++ source."""

    _FUNC = re.compile(r"(~?[A-Za-z_][\w:~]*(?:<[^<>()]*>)?)\s*\($")

    def __init__(self, clean: str, lits: list[str] | None = None):
        self._lits = lits or []
        self.starts: list[int] = []
        self.names: list[str] = []
        stack: list[tuple[str, str]] = []  # (kind, name)
        last = 0
        spans: list[tuple[int, int, str]] = []
        opened: list[int] = []
        for i, ch in enumerate(clean):
            if ch == ";":
                last = i + 1
            elif ch == "{":
                header = clean[last:i]
                kind, name = self._classify(header)
                stack.append((kind, name))
                opened.append(i)
                last = i + 1
            elif ch == "}":
                if stack:
                    kind, name = stack.pop()
                    start = opened.pop()
                    if kind == "function":
                        classes = [n for k, n in stack if k == "class"]
                        qual = name if "::" in name or not classes else f"{classes[-1]}::{name}"
                        spans.append((start, i, qual))
                last = i + 1
        self.spans = sorted(spans)

    def _classify(self, header: str) -> tuple[str, str]:
        h = re.sub(r"\s+", " ", _LIT.sub('""', header)).strip()
        m = re.match(
            r"(?:template ?<[^{]*> ?)?(?:class|struct|union)\s+(?:\w+\s+)*?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^{]*)?$", h
        )
        if m:
            return "class", m.group(1)
        if h.startswith("namespace") or h.startswith("extern") or h.startswith("enum"):
            return "block", ""
        # a Python binding: m.def("name", [](...) {  -> the name Python callers see
        m = re.match(r'.*\.def(?:_static)?\(\s*""', h)
        if m and "[" in h:
            lit = _LIT.findall(header)
            return ("function", self._lits[int(lit[0])]) if lit and self._lits else ("block", "")
        # a function head: NAME(params) [const|override|noexcept|-> T|: init-list]
        depth = 0
        for j, ch in enumerate(h):
            if ch == "(":
                if depth == 0:
                    m = self._FUNC.search(h[: j + 1])
                    before = h[: m.start()] if m else ""
                    if (
                        m
                        and "=" not in before.replace("==", "")
                        and not before.endswith((".", "->", "]"))
                        and m.group(1).split("::")[-1] not in _CONTROL
                        and not before.rstrip().endswith(("return", ",", "("))
                    ):
                        return "function", m.group(1)
                    return "block", ""
                depth += 1
            elif ch == ")":
                depth -= 1
        return "block", ""

    def at(self, pos: int) -> str:
        best = ""
        for start, end, name in self.spans:
            if start > pos:
                break
            if start <= pos <= end:
                best = name  # later (inner) spans win
        return best


def extract_cpp(src: str, path: str, origin: str = "torch_xla") -> list[Entry]:
    """The messages a C++ file can print, each with its enclosing function."""
    parsed = _scan_cpp(src)
    clean, lits = parsed.clean, parsed.literals
    if "#define" in clean:  # macro definitions are not call sites
        clean = re.sub(r"^[ \t]*#[ \t]*define(?:\\\n|[^\n])*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), clean, flags=re.M)
    scopes = _Scopes(clean, lits)
    out: list[Entry] = []
    for m in _CPP_START.finditer(clean):
        macro = m.group("macro")
        start = m.end()
        # the statement: up to the ';' at depth 0
        depth, end = 0, len(clean)
        for j in range(start, len(clean)):
            ch = clean[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch in ";{}" and depth <= 0:
                end = j
                break
        stmt = clean[start:end]
        function = scopes.at(m.start())
        entries: list[tuple[str, str]] = []  # (kind, template)
        if (
            re.fullmatch(r"(?:XLA_|TF_|ABSL_|TORCH_)?D?CHECK(?:_\w+)?", macro)
            or macro.startswith("TORCH_CHECK")
            or macro.startswith("TORCH_INTERNAL_ASSERT")
        ):
            if not stmt.lstrip().startswith("("):
                continue
            close = _balanced(stmt, stmt.index("("))
            args = _split_args(stmt[stmt.index("(") + 1 : close - 1])
            tail = stmt[close:]
            streamed = _pieces(tail, lits) if "<<" in tail else ""
            cmp = m.group("cmp")
            if macro.startswith("TORCH_CHECK") and macro != "TORCH_CHECK" and not cmp:
                continue  # TORCH_CHECK_NOT_IMPLEMENTED etc.: their message is their arguments
            if macro.startswith("TORCH_INTERNAL_ASSERT"):
                cond = _stringize(args[0], lits)
                entries.append(("assert-internal", f"{cond} INTERNAL ASSERT FAILED at "))
                msg = _pieces(",".join(args[1:]), lits) if len(args) > 1 else ""
                if msg:
                    entries.append(("assert-internal", msg))
            elif macro == "TORCH_CHECK":
                msg = _pieces(",".join(args[1:]), lits) if len(args) > 1 else ""
                entries.append(
                    ("check", msg)
                    if msg.strip(PLACEHOLDER + " ")
                    else ("check", f"Expected {_stringize(args[0], lits)} to be true, but got false.")
                )
            elif cmp == "OK":
                entries.append(("check", f"Non-OK-status: {_stringize(args[0], lits)}"))
            elif cmp and len(args) >= 2:
                entries.append(("check", f"Check failed: {_stringize(args[0], lits)} {_CMP[cmp]} {_stringize(args[1], lits)} ("))
            elif not cmp and args and args[0]:
                cond = _stringize(args[0], lits)
                if cond not in ("false", "0"):
                    entries.append(("check", f"Check failed: {cond}"))
            if streamed.strip(PLACEHOLDER + " "):
                entries.append(("check", streamed))
        elif macro.startswith("TORCH_WARN"):
            msg = _pieces(stmt, lits)
            if msg:
                entries.append(("warn", msg))
        elif "LOG(" in macro:
            msg = _pieces(stmt, lits)
            if msg:
                entries.append(("log", msg))
        else:
            msg = _pieces(stmt, lits)
            if msg:
                entries.append(("error", msg))
        for kind, tpl in entries:
            tpl = tpl.strip()
            if len(tpl.replace("Check failed:", "").replace(PLACEHOLDER, "").strip()) < 4:
                continue  # nothing but the words every check prints
            e = Entry(origin, kind, tpl, path, function)
            if e.literal >= MIN_LITERAL or (kind == "check" and tpl.startswith("Check failed: ") and len(tpl) >= 18):
                out.append(e)
    return out


def call_sites(sources: Iterable[str]) -> Counter:
    """How often each function is called, by its short name: the fan-in of a helper. A name that several
    functions share (a virtual ``Lower`` of every op) has its calls shared out among them, since a call
    site does not say which one it reaches."""
    calls: Counter = Counter()
    defined: Counter = Counter()
    for src in sources:
        parsed = _scan_cpp(src)
        clean = parsed.clean
        calls.update(re.findall(r"(?<![\w.>:])(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)\s*\(", clean))
        calls.update(re.findall(r"(?:\.|->)([A-Za-z_]\w*)\s*\(", clean))
        defined.update(name.split("::")[-1] for _s, _e, name in _Scopes(clean, parsed.literals).spans)
    return Counter({name: max(n - defined[name], 0) // max(defined[name], 1) for name, n in calls.items()})


# -- reading Python ---------------------------------------------------------------------------------------
def _template_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template_of(node.left), _template_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else PLACEHOLDER) + (right if right is not None else PLACEHOLDER)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _template_of(node.left)
        if left is not None:
            return re.sub(r"%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]", PLACEHOLDER, left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        left = _template_of(node.func.value)
        if left is not None:
            return re.sub(r"\{[^{}]*\}", PLACEHOLDER, left)
    return None


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


_LOG_CALLS = {"warning", "warn", "error", "critical", "exception", "fatal"}


def extract_python(src: str, path: str) -> list[Entry]:
    """The messages a Python file raises, warns, asserts or logs, each with its enclosing function."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return []
    out: list[Entry] = []

    def add(kind: str, node: ast.AST | None, where: str, exc: str = "") -> None:
        if node is None:
            return
        tpl = _template_of(node)
        if tpl is None:
            return
        tpl = tpl.replace("\n", PLACEHOLDER).replace("\t", " ")
        tpl = re.sub(f"{PLACEHOLDER}+", PLACEHOLDER, tpl).strip()
        e = Entry("torch_xla", kind, tpl, path, where, exc)
        if e.literal >= MIN_LITERAL:
            out.append(e)

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
                exc = _call_name(child.exc.func)
                arg = child.exc.args[0] if child.exc.args else None
                add("raise", arg, where, exc)
            elif isinstance(child, ast.Assert) and child.msg is not None:
                add("assert", child.msg, where, "AssertionError")
            elif isinstance(child, ast.Call):
                name = _call_name(child.func)
                owner = _call_name(child.func.value) if isinstance(child.func, ast.Attribute) else ""
                if name == "warn" and owner in ("warnings", "") and child.args:
                    add("warn", child.args[0], where)
                elif name in _LOG_CALLS and owner in ("logging", "logger", "log", "_logger", "LOGGER") and child.args:
                    add("log", child.args[0], where)
            visit(child, where)

    visit(tree, "")
    return out


# -- reading binaries -------------------------------------------------------------------------------
_PRINTABLE = re.compile(rb"[\x20-\x7e\t]{8,}")


def binary_strings(data: bytes) -> list[str]:
    """Printable runs of 8 or more bytes, as ``strings -n 8`` finds them."""
    return [m.decode("ascii") for m in _PRINTABLE.findall(data)]


_FORMAT = re.compile(r"%(?:\d+\$)?[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGcspv]|\$\d")


def xla_formats(strings: Iterable[str]) -> set[str]:
    """XLA's message templates in a binary: format strings with a placeholder and at least three words and
    MIN_LITERAL characters of text (symbols, paths and option names are not messages)."""
    out = set()
    for s in strings:
        if len(s) < 20 or s.startswith(("_Z", "-", "/")) or "%" not in s and "$" not in s:
            continue
        if not _FORMAT.search(s):
            continue
        tpl = _FORMAT.sub(PLACEHOLDER, s).replace("\n", PLACEHOLDER).replace("\t", " ")
        literal = tpl.replace(PLACEHOLDER, "")
        if len(re.findall(r"[A-Za-z]{3,}", literal)) < 3 or len(literal.strip()) < MIN_LITERAL:
            continue
        if not re.match(r"[A-Za-z%$(\[]", s) or re.search(r"[{};]\s*$|\\[a-z]|^\w+=", s):
            continue
        out.add(re.sub(f"{PLACEHOLDER}+", PLACEHOLDER, tpl).strip())
    return out


# -- the catalog --------------------------------------------------------------------------------------------
@dataclass
class Catalog:
    releases: tuple[str, ...]  # the releases it was built from, oldest first
    entries: list[Entry]
    built_from: dict = field(default_factory=dict)

    def releases_text(self, releases: Iterable[str]) -> str:
        """``2.1.0–2.5.1, 2.7.0``: runs of consecutive known releases."""
        have = set(releases)
        runs: list[list[str]] = []
        prev_in = False
        for r in self.releases:
            if r in have:
                if prev_in:
                    runs[-1].append(r)
                else:
                    runs.append([r])
            prev_in = r in have
        return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)

    # -- storage: one JSON object a line, sorted; releases as ranges of the header's list --
    def dumps(self) -> str:
        head = {"catalog": 1, "releases": list(self.releases), **self.built_from}
        lines = [json.dumps(head, ensure_ascii=False, sort_keys=True)]
        order = {r: i for i, r in enumerate(self.releases)}
        rows = []
        for e in self.entries:
            row = {"o": e.origin, "k": e.kind, "t": e.template.replace(PLACEHOLDER, "\u2026")}
            if e.file:
                row["f"] = e.file
            if e.function:
                row["fn"] = e.function
            if e.exc:
                row["x"] = e.exc
            if e.callers >= 0:
                row["c"] = e.callers
            if e.torch:
                row["torch"] = True
            row["r"] = _ranges(sorted(order[r] for r in e.releases if r in order), self.releases)
            rows.append(row)
        rows.sort(key=lambda r: (r["o"], r.get("f", ""), r["t"], r["k"], r.get("fn", ""), r.get("x", "")))
        lines += [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in rows]
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str, source: str = "catalog") -> Catalog:
        lines = text.splitlines()
        if not lines:
            raise CatalogError(f"{source}: empty catalog")
        try:
            head = json.loads(lines[0])
            releases = tuple(head.pop("releases"))
            head.pop("catalog")
        except (ValueError, KeyError, TypeError) as err:
            raise CatalogError(f"{source}:1: not a catalog header ({err})") from None
        entries = []
        for n, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                entries.append(
                    Entry(
                        row["o"],
                        row["k"],
                        row["t"].replace("\u2026", PLACEHOLDER),
                        row.get("f", ""),
                        row.get("fn", ""),
                        row.get("x", ""),
                        row.get("c", -1),
                        _unranges(row["r"], releases),
                        bool(row.get("torch", False)),
                    )
                )
            except (ValueError, KeyError, TypeError) as err:
                raise CatalogError(f"{source}:{n}: bad catalog entry ({err})") from None
        return cls(releases, entries, head)


def _ranges(indexes: list[int], releases: tuple[str, ...]) -> str:
    runs: list[list[int]] = []
    for i in indexes:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return " ".join(releases[r[0]] if len(r) == 1 else f"{releases[r[0]]}..{releases[r[-1]]}" for r in runs)


def _unranges(text: str, releases: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for part in text.split():
        a, _, b = part.partition("..")
        i, j = releases.index(a), releases.index(b or a)
        out.extend(releases[i : j + 1])
    return tuple(out)


DATA_FILE = "catalog.jsonl"


@lru_cache(maxsize=4)
def _load_path(path: str) -> Catalog:
    p = Path(path)
    try:
        return Catalog.loads(p.read_text(encoding="utf-8"), str(p))
    except OSError as err:
        raise CatalogError(f"{p}: cannot read the message catalog ({err.strerror})") from None


def load(path: Path | None = None) -> Catalog:
    """The catalog shipped with xlakb (``data/catalog.jsonl``), or the one at ``path``; an empty catalog
    when none was built yet."""
    if path is None:
        ref = resources.files("xlakb") / "data" / DATA_FILE
        if not ref.is_file():
            return Catalog((), [])
        path = Path(str(ref))
    return _load_path(str(path))


# -- building ------------------------------------------------------------------------------------------------
Progress = Callable[[str], None]


def _wheel_version(name: str) -> str | None:
    m = re.match(r"torch(?:_xla)?-(\d+\.\d+\.\d+)(?:[+.][\w.]+)?-", name)
    return m.group(1) if m else None


def wheel_contents(path: Path, package: str, so_name: str | tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """A wheel's Python sources under ``package/`` and the strings of its shared library whose name starts
    with ``so_name`` (the whole file is read: a few hundred MB)."""
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise CatalogError(f"{path}: not a wheel ({err})") from None
    with zf:
        py = {
            n: zf.read(n).decode("utf-8", "replace") for n in zf.namelist() if n.startswith(package + "/") and n.endswith(".py")
        }
        libs = [n for n in zf.namelist() if Path(n).name.startswith(so_name) and ".so" in n]
        strings: list[str] = []
        for n in libs:
            with zf.open(n) as f:
                strings.extend(binary_strings(f.read()))
    return py, strings


def _git_sources(repo: Path, tag: str, prefix: str) -> dict[str, str]:
    """Every C++ source and header under ``prefix`` at ``tag`` of a git repository, read in one pass."""
    from .gitrepo import open_repo

    r = open_repo(repo)
    listing = r.git.ls_tree("-r", "--name-only", tag, "--", prefix).splitlines()
    names = [n for n in listing if n.endswith((".cpp", ".cc", ".h", ".hpp"))]
    if not names:
        return {}
    proc = subprocess.run(
        ["git", "--git-dir", str(r.git_dir), "cat-file", "--batch"],
        input="".join(f"{tag}:{n}\n" for n in names).encode(),
        capture_output=True,
        check=True,
    )
    out, data, pos = {}, proc.stdout, 0
    for n in names:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        size = int(header[2])
        out[n] = data[nl + 1 : nl + 1 + size].decode("utf-8", "replace")
        pos = nl + 1 + size + 1
    return out


def _with_callers(entries: list[Entry], counts: Counter) -> list[Entry]:
    out = []
    for e in entries:
        name = e.function.split("::")[-1] if e.function else ""
        calls = counts.get(name, 0) if name else -1
        out.append(Entry(e.origin, e.kind, e.template, e.file, e.function, e.exc, calls, e.releases))
    return out


def build(
    *,
    wheels: Path,
    repo: Path,
    torch_wheels: Path | None = None,
    lazy_src: Path | None = None,
    releases: Iterable[str] | None = None,
    torch_of: dict[str, str] | None = None,
    progress: Progress = lambda s: None,
) -> Catalog:
    """Build the catalog: torch_xla wheels in ``wheels`` (one per release), the pytorch/xla clone ``repo``
    (tags ``v<release>``), optionally torch wheels (``torch_wheels``, one per torch release: ``torch_of`` says
    which torch each torch_xla release pairs with, else its wheel's metadata or its own version) and torch's
    lazy-core sources (``lazy_src``: a folder holding ``torch/csrc/lazy/...``)."""
    from .gitrepo import open_repo

    found = {}
    for p in sorted(Path(wheels).glob("torch_xla-*.whl")):
        v = _wheel_version(p.name)
        if v:
            found.setdefault(v, p)
    wanted = list(releases) if releases else sorted(found, key=_vkey)
    missing = [r for r in wanted if r not in found]
    if missing:
        raise CatalogError(
            f"{wheels}: no torch_xla wheel for {', '.join(missing)}",
            hint="download them with: pip download --no-deps torch_xla==X.Y.Z -d " + str(wheels),
        )
    if not wanted:
        raise CatalogError(f"{wheels}: no torch_xla wheels (torch_xla-X.Y.Z-*.whl)")
    try:
        tags = set(open_repo(repo).git.tag("--list", "v*").split())
    except XlakbError as err:
        raise CatalogError(f"{repo}: not a pytorch/xla clone ({err})") from None
    no_tag = [r for r in wanted if f"v{r}" not in tags]
    if no_tag:
        raise CatalogError(
            f"{repo}: no tag for {', '.join('v' + r for r in no_tag)}", hint="fetch the release tags: git -C <clone> fetch --tags"
        )
    merged: dict[tuple, set[str]] = defaultdict(set)
    callers: dict[tuple, int] = {}
    pairs = dict(torch_of or {})
    torch_of = {}
    shipped = 0
    total_cpp = 0
    for n, release in enumerate(wanted, 1):
        progress(f"[{n}/{len(wanted)}] torch_xla {release}: wheel {found[release].name}")
        py, strings = wheel_contents(found[release], "torch_xla", "_XLAC")
        torch_of[release] = pairs.get(release) or _torch_pin(found[release])
        entries: list[Entry] = []
        for name, src in sorted(py.items()):
            entries.extend(extract_python(src, name))
        progress(f"[{n}/{len(wanted)}] torch_xla {release}: sources at v{release}")
        sources = _git_sources(repo, f"v{release}", "torch_xla/csrc")
        counts = call_sites(sources.values())
        cpp: list[Entry] = []
        for name, src in sorted(sources.items()):
            cpp.extend(extract_cpp(src, name))
        cpp = _with_callers(cpp, counts)
        blob = "\n".join(s for s in strings if " " in s)
        for e in cpp:
            total_cpp += 1
            longest = max(e.pieces, key=len).strip() if e.pieces else ""
            shipped += bool(longest) and longest in blob
        entries.extend(cpp)
        own = {e.template for e in entries}
        entries.extend(Entry("xla", "format", t) for t in xla_formats(strings) if t not in own)
        for e in entries:
            key = e.key()
            merged[key].add(release)
            if e.callers >= 0:
                callers[key] = max(callers.get(key, -1), e.callers)
    lazy: list[Entry] = []
    if lazy_src is not None:
        lazy_dir = Path(lazy_src) / "torch" / "csrc" / "lazy"
        if not lazy_dir.is_dir():
            raise CatalogError(f"{lazy_src}: no torch/csrc/lazy folder")
        files = {
            str(p.relative_to(lazy_src)): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(lazy_dir.rglob("*"))
            if p.suffix in (".cpp", ".h")
        }
        counts = call_sites(files.values())
        lazy = _with_callers([e for name, src in files.items() for e in extract_cpp(src, name, "lazy")], counts)
    in_torch: set[tuple] = set()
    if torch_wheels is not None:
        own = [k for k in merged if k[0] == "torch_xla"]
        present, in_torch = _torch_pass(lazy, own, merged, torch_wheels, torch_of, progress)
        for e in lazy:
            if present.get(e.key()):
                merged[e.key()] |= present[e.key()]
                callers[e.key()] = max(callers.get(e.key(), -1), e.callers)
    else:
        for e in lazy:  # without torch wheels, the lazy core is taken as present in every release
            merged[e.key()] |= set(wanted)
            callers[e.key()] = max(callers.get(e.key(), -1), e.callers)
    entries = [
        Entry(k[0], k[1], k[2], k[3], k[4], k[5], callers.get(k, -1), tuple(r for r in wanted if r in rel), k in in_torch)
        for k, rel in merged.items()
    ]
    built = {
        "torch_xla_cpp_in_binary": round(shipped / total_cpp, 3) if total_cpp else None,
        "torch_wheels": torch_wheels is not None,
        "lazy_core": lazy_src is not None,
    }
    return Catalog(tuple(wanted), entries, built)


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _torch_pin(wheel: Path) -> str:
    """The torch release a torch_xla wheel requires (``Requires-Dist: torch ==2.5.1``), else its own version."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    m = re.search(r"^Requires-Dist: torch\s*\(?\s*==\s*(\d+\.\d+\.\d+)", text, re.M)
    return m.group(1) if m else (_wheel_version(wheel.name) or "")


def _torch_pass(
    lazy: list[Entry], own: list[tuple], merged: dict, torch_wheels: Path, torch_of: dict[str, str], progress: Progress
) -> tuple[dict[tuple, set[str]], set[tuple]]:
    """One read of each torch wheel: the torch_xla releases whose torch holds each lazy-core message (its
    ``libtorch_cpu``), and the torch_xla messages torch itself holds too (its libraries and Python files),
    which are therefore no sign of torch_xla."""
    by_version = {}
    for p in sorted(Path(torch_wheels).glob("torch-*.whl")):
        v = _wheel_version(p.name)
        if v:
            by_version.setdefault(v, p)
    present: dict[tuple, set[str]] = defaultdict(set)
    in_torch: set[tuple] = set()
    needed = sorted(set(torch_of.values()), key=_vkey)
    for n, tv in enumerate(needed, 1):
        if tv not in by_version:
            users = ", ".join(r for r, t in torch_of.items() if t == tv)
            raise CatalogError(
                f"{torch_wheels}: no torch {tv} wheel (torch_xla {users} needs it)",
                hint=f"pip download --no-deps torch=={tv} -d {torch_wheels}",
            )
        progress(f"[{n}/{len(needed)}] torch {tv}: strings of libtorch and its Python files")
        py, strings = wheel_contents(by_version[tv], "torch", ("libtorch_cpu", "libtorch_python"))
        releases = {r for r, t in torch_of.items() if t == tv}
        lazy_pieces = {e.key(): [p.strip() for p in e.pieces if len(p.strip()) >= 6] for e in lazy}
        own_pieces = {
            k: [p.strip() for p in k[2].split(PLACEHOLDER) if len(p.strip()) >= 8]
            for k in own
            if k not in in_torch and merged[k] & releases
        }
        texts = [s for s in strings if " " in s or len(s) > 20] + [line for src in py.values() for line in src.splitlines()]
        holds = _substring_finder(texts, [p for ps in (*lazy_pieces.values(), *own_pieces.values()) for p in ps])
        for key, pieces in lazy_pieces.items():
            if pieces and all(holds(p) for p in pieces):
                present[key] |= releases
        for key, pieces in own_pieces.items():
            if pieces and all(holds(p) for p in pieces):
                in_torch.add(key)
    return present, in_torch


def _substring_finder(texts: list[str], pieces: list[str]) -> Callable[[str], bool]:
    """``holds(piece)``: whether some text contains ``piece``; the texts are indexed by the words the pieces
    hold, so each piece is looked for only in the texts that share its longest word."""
    words = {max(re.findall(r"\w+", p) or [""], key=len) for p in pieces}
    words.discard("")
    index: dict[str, list[str]] = defaultdict(list)
    for t in texts:
        for w in set(re.findall(r"\w+", t)) & words:
            index[w].append(t)

    def holds(piece: str) -> bool:
        found = re.findall(r"\w+", piece)
        if not found:
            return False
        return any(piece in t for t in index.get(max(found, key=len), ()))

    return holds


def iter_entries(catalog: Catalog, origin: str | None = None) -> Iterator[Entry]:
    return (e for e in catalog.entries if origin is None or e.origin == origin)


def write(catalog: Catalog, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(catalog.dumps(), encoding="utf-8")
    tmp.replace(path)


def read_lazy_sources(folder: Path) -> dict[str, str]:  # pragma: no cover - convenience for the CLI
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((folder / "torch" / "csrc" / "lazy").rglob("*"))
        if p.suffix in (".cpp", ".h")
    }


def entries_json(entries: Iterable[Entry]) -> list[dict]:
    return [{"origin": e.origin, "kind": e.kind, "text": e.text, "file": e.file, "function": e.function} for e in entries]


_ = io  # noqa: F841  (kept for symmetry with triage's readers)
