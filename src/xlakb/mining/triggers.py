"""Triggers: the test functions a fix added or changed, and whether a CPU machine can run them.

Pure code over texts (a test file as the fix left it, the lines the fix touched, the rules of
``data/mine_rules.yaml``); reading git is :mod:`xlakb.mining.history`'s.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Trigger:
    """One test function: ``path`` in the repository, ``test`` as unittest names it (``Class.test_x`` or
    ``test_x``), the lines it spans (decorators included) and its source text with its class's decorators."""

    path: str
    test: str
    first_line: int
    last_line: int
    text: str


@lru_cache(maxsize=1)
def rules() -> dict:
    import yaml

    return yaml.safe_load((resources.files("xlakb") / "data" / "mine_rules.yaml").read_text("utf-8"))


def classify(subject: str, body: str = "") -> tuple[str, bool]:
    """The class of a commit by its subject (the first rule of ``classes`` that matches) and whether its
    tests are mined."""
    for rule in rules()["classes"]:
        text = subject + ("\n" + body if rule.get("body") else "")
        if re.search(rule["subject"], text):
            return rule["name"], bool(rule.get("mine"))
    return "other", False


def test_functions(source: str, path: str) -> list[Trigger]:
    """Every ``test*`` function of a test file, at module level or in a class (unittest's names)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    out = []

    def span(node) -> tuple[int, int]:
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        return first, node.end_lineno or node.lineno

    def add(fn, owner: ast.ClassDef | None) -> None:
        first, last = span(fn)
        text = "\n".join(lines[first - 1 : last])
        if owner is not None:
            cfirst, _ = span(owner)
            text = "\n".join(lines[cfirst - 1 : owner.lineno]) + "\n" + text  # the class line and its decorators
        out.append(Trigger(path, f"{owner.name}.{fn.name}" if owner else fn.name, first, last, text))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            add(node, None)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    add(item, node)
    return out


def changed_tests(
    source: str, path: str, lines: list[int], old_source: str | None = None, removed: list[int] = ()
) -> list[Trigger]:
    """The test functions of ``source`` that contain one of ``lines`` (what a fix added or changed there), or
    that held one of ``removed`` in ``old_source``, the copy before the fix (a decorator or a line taken out)."""
    touched = set(lines)
    tests = test_functions(source, path)
    hit = {t.test for t in tests if any(t.first_line <= n <= t.last_line for n in touched)}
    if old_source and removed:
        gone = set(removed)
        hit |= {t.test for t in test_functions(old_source, path) if any(t.first_line <= n <= t.last_line for n in gone)}
    return [t for t in tests if t.test in hit]


def needs(trigger: Trigger, module_text: str = "") -> list[str]:
    """What the test needs that a CPU machine lacks (TPU, GPU, Pallas, Neuron, several hosts), by its path
    and its text; ``module_text``: the module's imports, for what a whole file asks."""
    found = []
    for name, rule in rules()["needs"].items():
        if re.search(rule["path"], trigger.path) or re.search(rule["text"], trigger.text):
            found.append(name)
    return found


def fallback_only(trigger: Trigger) -> bool:
    """The test checks which ops were lowered or fell back (metrics counters): it proves speed, not a failure."""
    return bool(re.search(rules()["fallback_only"]["text"], trigger.text))


KINDS = ("bug", "limitation", "neither")


@dataclass(frozen=True)
class Kind:
    """What a proved test shows (see ``kinds`` in ``data/mine_rules.yaml``): its kind, the rule that said
    so ("" when none did: a bug) and why."""

    kind: str
    rule: str
    reason: str


def kind_of(
    failure: str,
    source: str = "",
    env: tuple[str, ...] = (),
    path: str = "",
    subject: str = "",
    changed: tuple[str, ...] | None = None,
) -> Kind:
    """The first rule of ``kinds`` whose every given field matches: ``failure`` (the runner's line before the
    fix), ``source`` (the test's text), ``env`` (the names of its settings), ``path``, ``subject``, and
    ``changed`` (the files the commit changes; ``changes: tests-only`` matches a commit that changes no file
    outside the test tree). None: a bug."""
    fields = {"failure": failure, "source": source, "env": "\n".join(env), "path": path, "subject": subject}
    tests_only = changed is not None and bool(changed) and all(re.match(rules().get("test_tree", r"^test/"), f) for f in changed)
    for rule in rules().get("kinds", []):
        given = [k for k in fields if k in rule]
        if rule.get("changes") == "tests-only":
            if tests_only and all(re.search(rule[k], fields[k], re.MULTILINE) for k in given):
                return Kind(rule["kind"], rule["name"], rule["reason"])
            continue
        if given and all(re.search(rule[k], fields[k], re.MULTILINE) for k in given):
            return Kind(rule["kind"], rule["name"], rule["reason"])
    return Kind("bug", "", "no rule found a limitation or a check of something else: what failed is the release's")
