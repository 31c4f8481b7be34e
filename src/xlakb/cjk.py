"""Chinese text as people write it: no space between two Chinese characters.

A folded YAML scalar (``>-``) turns every line break into a space, so a Chinese sentence wrapped over
two lines reads "在 float32 中 计算商" once loaded. :func:`join` removes whitespace between two CJK
characters (ideographs, CJK punctuation, full-width forms), and only there: a space between Chinese and
a Latin word or a number is kept (its use is a matter of style, not an error).
"""

from __future__ import annotations

import re

#: CJK ideographs, CJK symbols and punctuation, full-width forms
CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_GAP = re.compile(f"(?<=[{CJK}])[ \\t\\n\\r]+(?=[{CJK}])")
STRAY = re.compile(f"[{CJK}][ \\t]+[{CJK}]")


def join(text: str) -> str:
    return _GAP.sub("", text)


def join_all(value):
    """:func:`join` applied to every string in a value (a string, a list or a mapping of them)."""
    if isinstance(value, str):
        return join(value)
    if isinstance(value, list):
        return [join_all(v) for v in value]
    if isinstance(value, dict):
        return {k: join_all(v) for k, v in value.items()}
    return value


def join_zh(data):
    """Every ``zh`` text of a record (any mapping with a ``zh`` key, at any depth) joined."""
    if isinstance(data, dict):
        return {k: (join_all(v) if k == "zh" else join_zh(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [join_zh(v) for v in data]
    return data


# -- English prose on a Chinese page ---------------------------------------------------------------------------
# A word of English prose: letters only (an inner apostrophe or hyphen allowed), two or more of them (or "a", "I"),
# not part of an identifier, a path, a version or a flag (no letter, digit, _ . / \ : # @ $ % & = + ~ - glued to it).
_WORD = r"(?<![\w./\\:#@$%&=+~-])(?:[A-Za-z]{2,}(?:['’-][A-Za-z]+)*|[aAI])(?![\w/\\@$#%&=+~]|[.:'’-][\w])"
# between two words of a sentence: spaces, with the sentence's own punctuation and quotes around them
_BETWEEN = r"[,;:.!?)\]\"”’]*[ \t\n\r]+[(\[\"“‘]*"
#: the least number of English words in a row that reads as a sentence rather than a name or a term
PROSE_WORDS = 4
ENGLISH_RUN = re.compile(rf"{_WORD}(?:{_BETWEEN}{_WORD}){{{PROSE_WORDS - 1},}}")
# what a Markdown text shows as code or as an address: ``code`` spans, fenced blocks, <autolinks>, link targets, URLs
_NOT_PROSE_MD = re.compile(
    r"(?ms)^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$"  # fenced block
    r"|(`+)(?!`).+?(?<!`)\2(?!`)"  # code span
    r"|<https?://[^>\s]+>|\]\([^)\s]*\)|https?://\S+"
)


def english_prose(text: str) -> list[str]:
    """The runs of English prose in ``text`` (plain text: what a page shows outside code): at least
    :data:`PROSE_WORDS` English words in a row. Identifiers, paths, versions, numbers and names joined to them
    (``torch_xla``, ``2.5.1``, ``PyTorch/XLA``, ``x.diagonal``) are no words and end a run; so does a Chinese
    character. A run of capitalised words only (``Google Cloud TPU VM``) is a name, not a sentence. A literal
    the reader searches for (an error message, a commit or PR subject) is shown as code, and a sentence of ours
    is written in Chinese."""
    return [m.group(0) for m in ENGLISH_RUN.finditer(text) if _has_lower(m.group(0))]


def _has_lower(run: str) -> bool:
    """Whether a run has a word in lower case (a sentence's "the", "is", "not"): names are capitalised."""
    return any(w[0].islower() for w in re.findall(_WORD, run))


def english_prose_md(text: str) -> list[str]:
    """:func:`english_prose` of a Markdown text (a record's ``zh`` field): code spans, fenced blocks and link
    targets are no prose."""
    return english_prose(_NOT_PROSE_MD.sub(" ", text))
