"""A record's triage signatures, as data: the kinds of evidence and how a record writes them. Records check
them (:mod:`xlakb.records`), triage matches them (:mod:`xlakb.triage`); this module imports neither."""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("message", "check", "frame", "call", "env")
MESSAGE_KINDS = ("message", "check")  # what failed, and where: the error
TRIGGER_KINDS = ("frame", "call", "env")  # how the program got there


@dataclass(frozen=True)
class Signature:
    kind: str
    pattern: str = ""  # message, check, call: a regex; env: the value regex (optional)
    file: str = ""  # frame
    function: str = ""  # frame
    name: str = ""  # env
    generic: str = ""  # why this signature cannot name one bug by itself ("" when it can)

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
    kind = next(k for k in item if k != "shared")  # "shared": the record's reason, read by validate
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
