"""The bilingual glossary (``data/glossary.yaml``): the Chinese term records use for each English term.

Library code: data and pure functions. The site shows the terms a record uses in both languages (so a
search in either language finds the record) and `xlakb validate` names a variant a record should not use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml


@dataclass(frozen=True)
class Term:
    zh: str
    en: tuple[str, ...]
    variants: tuple[str, ...] = ()

    @property
    def english(self) -> str:
        return self.en[0]


@lru_cache(maxsize=1)
def terms() -> tuple[Term, ...]:
    data = yaml.safe_load((resources.files("xlakb") / "data" / "glossary.yaml").read_text("utf-8"))
    return tuple(Term(t["zh"], tuple(t["en"]), tuple(t.get("variants", ()))) for t in data["terms"])


@lru_cache(maxsize=4096)
def _english(word: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.I)


def used(text: str) -> list[Term]:
    """The terms a text uses, in either language, in glossary order."""
    return [t for t in terms() if t.zh in text or any(_english(w).search(text) for w in t.en)]


def variant_problems(text: str) -> list[str]:
    """ "use 内存泄漏, not 内存泄露" for each variant the text uses."""
    return [f"use the glossary's {t.zh} ({t.english}), not {v}" for t in terms() for v in t.variants if v in text]
