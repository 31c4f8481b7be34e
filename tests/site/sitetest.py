"""Helpers of the site tests (not fixtures; those are in conftest.py)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)

# The records the project started from; stand-ins are generated for those not written yet.
SCALAR = "fsdpv2-scalar-param-unhashable-list"
HAS_SHARDING = "fsdpv2-nofunc-has-sharding"
DTENSOR = "dtensor-parallelize-module-functional-assert"
MULTISLICE = "multislice-megascale-double-discovery"
UNMEASURED = "synthetic-unmeasured-record"
BISECTED = "synthetic-bisected-record"


def record_ids(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "issues").glob("*.yaml"))


def measured_ids(root: Path) -> list[str]:
    """Records with a matrix.json: real measured data, and the generated fixtures."""
    return sorted(p.parent.name for p in (root / "bisect").glob("*/matrix.json"))


def bisected_ids(root: Path) -> list[str]:
    return sorted({p.parent.name for p in (root / "bisect").glob("*/bisect-*.json")})


def load(root: Path, rid: str) -> dict:
    """A record as the site shows it (folded Chinese lines joined without a space, as xlakb reads it)."""
    from xlakb.cjk import join_zh

    path = root / "issues" / f"{rid}.yaml"
    if not path.exists():  # a limitation: it has a page too
        path = root / "limitations" / f"{rid}.yaml"
    return join_zh(yaml.safe_load(path.read_text("utf-8")))


def shown_title(title: str) -> str:
    """A record title as the page shows it: Markdown code ticks rendered away (a backtick inside ``a `b` c`` stays)."""
    from xlakb.sitegen.render import _CODE_SPAN, _span_text

    return _CODE_SPAN.sub(lambda m: _span_text(m.group(2)), title)


def h1_text(page: str) -> str:
    """The text of the page's <h1>, tags and the permalink removed."""
    inner = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S).group(1)
    inner = re.sub(r'<a class="headerlink".*?</a>', "", inner, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", inner)).strip()


def tokens(index: dict, text: str) -> list[str]:
    """Split ``text`` of the index the way Material's search does (tags out, separator, lower case)."""
    sep = re.compile(index["config"]["separator"])
    plain = re.sub(r"<[^>]+>", " ", text)
    return [t.lower() for t in sep.split(plain) if t and t.strip()]


def page_tokens(index: dict) -> dict[str, set[str]]:
    """Page location (without #anchor) -> every token of its title and text."""
    out: dict[str, set[str]] = {}
    for doc in index["docs"]:
        page = doc["location"].split("#")[0]
        out.setdefault(page, set()).update(tokens(index, doc["title"]) + tokens(index, doc["text"]))
    return out


def distinctive_word(index: dict, target_page: str, candidates: list[str]) -> str:
    """Of ``candidates`` (words of the target's title), the one fewest other pages have a word
    starting with (Material searches ``word*``); longer words win ties. When every such word is on
    other pages too, the two most distinctive ones."""
    pages = page_tokens(index)
    vocabulary = set().union(*pages.values())

    def score(word: str) -> tuple:
        others = sum(1 for page, toks in pages.items() if page != target_page and any(t.startswith(word) for t in toks))
        # Material splits a Chinese query greedily on words of the index; a word one of whose
        # proper prefixes is itself a word of the index is searched as that prefix only.
        shadowed = any(word[:i] in vocabulary for i in range(1, len(word)))
        return (others, shadowed, -len(word))

    found = [w for w in candidates if w in pages.get(target_page, set())]
    assert found, f"none of {candidates} is a word of {target_page} in the index"
    ranked = sorted(dict.fromkeys(found), key=score)
    if score(ranked[0])[0] == 0 or len(ranked) == 1:
        return ranked[0]
    # no word of the title is the target's alone: two of them, as a reader types more words to narrow down
    return f"{ranked[0]} {ranked[1]}"


def english_query(indexes: dict, root: Path, rid: str) -> str:
    index = indexes["en"]
    words = [
        w for w in tokens(index, html.escape(load(root, rid)["title"]["en"], quote=False)) if len(w) >= 4 and not w.isdigit()
    ]
    return distinctive_word(index, f"records/{rid}/", words)


def chinese_query(indexes: dict, root: Path, rid: str) -> str:
    import jieba

    index = indexes["zh"]
    han = re.compile(r"^[\u4e00-\u9fff]{2,}$")
    words = [w for w in jieba.lcut(load(root, rid)["title"]["zh"]) if han.match(w)]
    return distinctive_word(index, f"records/{rid}/", words)


#: what only a pattern holds: an escape, a group flag, ``.*``/``.+`` joined to what follows (``torch.* op``, a
#: message's glob-like words, is text), a negated class
REGEX = re.compile(r"\\[.()\[\]{}|*+?sdwSbB]|\(\?[:=!<]|\.\*(?=\S|$)|\.\+(?=\S|$)|\[\^")
_VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area", "base", "embed", "param", "track"}


def regexes_outside_details(page: str) -> list[str]:
    """The texts of <code> elements of ``page`` (HTML) that look like a regular expression and are neither inside a
    <details> element (where "How it was matched" keeps them) nor in a code block or a script."""
    from html.parser import HTMLParser

    class Codes(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.stack: list[str] = []
            self.buf: list[str] | None = None
            self.found: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag in _VOID:
                return
            self.stack.append(tag)
            if tag == "code" and not {"details", "pre", "script", "textarea"} & set(self.stack[:-1]):
                self.buf = []

        def handle_endtag(self, tag):
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            if tag == "code" and self.buf is not None:
                text = "".join(self.buf)
                if REGEX.search(text):
                    self.found.append(text)
                self.buf = None

        def handle_data(self, data):
            if self.buf is not None:
                self.buf.append(data)

    parser = Codes()
    parser.feed(page)
    return parser.found


# What a reader does not read as prose: code and what is not shown (<title> and the description are read apart)
_NOT_PROSE = {"code", "pre", "kbd", "samp", "script", "style", "svg", "textarea", "template"}
# Elements that end a sentence's run of words: blocks, cells, line breaks, form controls; and each tag of a tag list
# (class md-tag, xlakb-tag: one identifier each, such as wrong-result; a list of them is no sentence)
_BLOCK = {
    *"p li td th tr div section article header footer nav main aside ul ol dl dt dd table thead tbody caption".split(),
    *"h1 h2 h3 h4 h5 h6 br hr details summary label button select option form figure figcaption blockquote".split(),
}


def english_outside_code(page: str) -> list[str]:
    """The English prose (:func:`xlakb.cjk.english_prose`) of a page (HTML): its visible text outside code,
    pre, kbd, samp, script, style, svg and textarea, with the <title> and the meta description. Those two cannot
    mark code, and the theme prints a record title and summary there as plain text: a run there counts unless the
    page shows it inside a <code> (the same literal, marked as code in the <h1> or the summary)."""
    from html.parser import HTMLParser

    from xlakb.cjk import english_prose

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.stack: list[str] = []
            self.body: list[str] = []
            self.plain: list[str] = []  # <title>, the description
            self.codes: list[str] = []
            self.code: list[str] | None = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "meta" and a.get("name") == "description":
                self.plain.append(a.get("content") or "")
            item = any(c.endswith("-tag") for c in (a.get("class") or "").split())
            if tag in _BLOCK or tag in _NOT_PROSE or item:
                self.body.append(" ¦ ")
            if tag in _VOID:
                return
            self.stack.append(tag + ("!" if item else ""))
            if tag == "code" and self.code is None:
                self.code = []

        def handle_endtag(self, tag):
            if tag in _BLOCK or tag in _NOT_PROSE or f"{tag}!" in self.stack[-1:]:
                self.body.append(" ¦ ")
            if tag in self.stack or f"{tag}!" in self.stack:
                while self.stack and self.stack.pop().rstrip("!") != tag:
                    pass
            if tag == "code" and self.code is not None and "code" not in self.stack:
                self.codes.append(" ".join("".join(self.code).split()))
                self.code = None

        def handle_data(self, data):
            if self.code is not None:
                self.code.append(data)
            if "title" in self.stack:
                self.plain.append(data)
            elif not _NOT_PROSE & set(self.stack):
                self.body.append(data)

    parser = Text()
    parser.feed(page)
    found = english_prose("".join(parser.body))
    for text in parser.plain:
        found += [run for run in english_prose(text) if not any(" ".join(run.split()) in code for code in parser.codes)]
    return found
