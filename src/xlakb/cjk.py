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
