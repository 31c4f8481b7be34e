"""Records: one YAML file a bug under ``issues/``, checked against the schema.

Three folders hold records of the same schema, each for what it is (:data:`FOLDERS`): ``issues/`` the bugs,
the only records listed, counted, titled and matched as bugs; ``limitations/`` the limitations a release
lifted (a dtype, an op lowering, an export feature that did not exist yet), published as what they are;
``mined/drafts/`` the proofs ``xlakb mine`` made that nobody has written up yet, for maintainers only.

Loading keeps line numbers, so every problem names file, line and field:
``issues/foo.yaml:12: reproducer.timeout: 'soon' is not of type 'integer'``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .cjk import STRAY, english_prose_md, join_zh
from .errors import XlakbError
from .glossary import variant_problems
from .signatures import generic_only, parse_signature, portability_problem, signatures_of

SCHEMA_COMMENT = "# yaml-language-server: $schema=../src/xlakb/data/record.schema.json"
LANGS = ("en", "zh")
STATUSES = ("open", "fixed", "regressed", "workaround-only", "wontfix")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a record: where, which field, what."""

    path: Path
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


#: where each kind of record lives, under the repository's root
FOLDERS = {"bug": Path("issues"), "limitation": Path("limitations"), "draft": Path("mined") / "drafts"}
#: the kinds published (site, triage, the CLI's lists): a draft never is
PUBLISHED = ("bug", "limitation")
#: text a template wrote, which a published record never carries (the draft's own words, both languages)
TEMPLATE_TEXT = re.compile(
    r"Not yet written up|尚无人撰写|\(upstream test \w+ fails before PR #\d+\)|上游测试 \w+ 在 PR #\d+ 之前失败"
)


def kind_of(path: Path) -> str:
    """The kind of record a file is, by its folder (``issues/`` unless it is in another kind's folder)."""
    for kind, folder in FOLDERS.items():
        if path.parent.parts[-len(folder.parts) :] == folder.parts:
            return kind
    return "bug"


@dataclass(frozen=True)
class Record:
    """A loaded, valid record. ``data`` is the YAML mapping as written."""

    path: Path
    data: dict

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def kind(self) -> str:
        """ "bug", "limitation" or "draft" (by its folder, see :data:`FOLDERS`)."""
        return kind_of(self.path)

    @property
    def root(self) -> Path:
        return self.path.parents[len(FOLDERS[self.kind].parts)]

    @property
    def status(self) -> str:
        return self.data["status"]

    @property
    def tags(self) -> list[str]:
        return list(self.data["tags"])

    @property
    def component(self) -> str:
        return self.data["component"]

    def text(self, field: str, lang: str = "en") -> Any:
        return self.data[field][lang]

    @property
    def reproducer(self) -> dict:
        return self.data["reproducer"]

    @property
    def reproducer_path(self) -> Path:
        """The reproducer script (a mined record has none: its :attr:`trigger` is made into one when it runs)."""
        if self.trigger:
            raise XlakbError(
                f"{self.path.name}: a mined record's reproducer is its upstream test "
                f"({self.reproducer_label}), made when a probe runs"
            )
        return self.root / self.reproducer["path"]

    @property
    def trigger(self) -> dict | None:
        """A mined record's upstream test (``reproducer.trigger``: repo, commit, path, test), or None."""
        return self.reproducer.get("trigger")

    @property
    def reproducer_label(self) -> str:
        """How to name the reproducer to a person: its path, or for a mined record its upstream test."""
        t = self.trigger
        if t:
            return f"{t['repo']}@{t['commit'][:10]}:{t['path']}::{t['test']}"
        return self.reproducer["path"]

    @property
    def source(self) -> str:
        """ "hand" (written by a person) or "mined" (made by ``xlakb mine`` from an upstream fix)."""
        return self.data.get("source", "hand")

    def reproducer_sha256(self) -> str:
        if self.trigger:
            return trigger_sha256(self.trigger)
        return hashlib.sha256(self.reproducer_path.read_bytes()).hexdigest()

    @property
    def signatures(self) -> list[str]:
        return list(self.reproducer["signatures"])

    @property
    def regress(self) -> str | None:
        """The rule a script without a record is judged by (``xlakb bisect --script --regress``,
        :data:`xlakb.runner.REGRESS`); None for a record, judged by exit 1 and its signatures."""
        return self.reproducer.get("regress")

    @property
    def workaround(self) -> dict | None:
        """The workaround as a runnable variant of the reproducer (``reproducer.workaround``: args, env), or None."""
        return self.reproducer.get("workaround")

    @property
    def cold_start(self) -> bool:
        """The record asks for a new interpreter per probe (``environment.cold_start``), no warm start."""
        return bool(self.environment.get("cold_start", False))

    @property
    def environment(self) -> dict:
        return self.data["environment"]

    @property
    def devices(self) -> int:
        return int(self.environment["devices"])

    @property
    def env_vars(self) -> dict[str, str]:
        return dict(self.environment.get("env", {}))

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(self.environment.get("packages", []))

    @property
    def python(self) -> str | None:
        return self.environment.get("python")

    @property
    def run_on(self) -> str:
        """ "cpu" (virtual CPU devices, every record that can) or "tpu" (a TPU-only record)."""
        return self.environment.get("run_on", "cpu")

    @property
    def cpus(self) -> int:
        return int(self.environment.get("resources", {}).get("cpus", 1))

    @property
    def memory_gb(self) -> float:
        return float(self.environment.get("resources", {}).get("memory_gb", 2))

    @property
    def timeout(self) -> int:
        return int(self.reproducer["timeout"])

    @property
    def affected(self) -> SpecifierSet:
        return SpecifierSet(self.data["versions"]["affected"])

    @property
    def fixed_in(self) -> str | None:
        return self.data["versions"].get("fixed_in")

    def claims(self, version: str) -> bool | None:
        """See :func:`claim`."""
        return claim(self.data, version)

    def upstream_url(self, number: int, kind: str = "issues") -> str:
        """Link to an upstream issue (``kind="issues"``) or pull request (``kind="pull"``)."""
        return f"https://github.com/{self.data['upstream']['repo']}/{kind}/{number}"


def trigger_sha256(trigger: dict) -> str:
    """What a mined record's verdicts are keyed by: its trigger (repository, commit, file, test) and xlakb's
    runner of one test (``data/trigger_runner.py``), as a hand-written record's are by its script."""
    ref = json.dumps({k: trigger[k] for k in sorted(trigger)}, sort_keys=True).encode()
    runner = (resources.files("xlakb") / "data" / "trigger_runner.py").read_bytes()
    return hashlib.sha256(ref + b"\0" + runner).hexdigest()


def claim(data: dict, version: str) -> bool | None:
    """What a record (its data) claims for torch_xla ``version``: True when it shows the bug (in
    ``affected``), False when it does not (at or after ``fixed_in`` and outside ``affected``), None when
    it says nothing (or the version or the specifier cannot be read)."""
    try:
        v = Version(version)
        if v in SpecifierSet(data["versions"]["affected"]):
            return True
    except (InvalidVersion, InvalidSpecifier):
        return None
    fixed = data["versions"].get("fixed_in")
    if fixed and v >= Version(fixed):
        return False
    return None


@lru_cache(maxsize=1)
def schema() -> dict:
    text = resources.files("xlakb").joinpath("data/record.schema.json").read_text("utf-8")
    return json.loads(text)


# libyaml's parser when PyYAML has it (5x faster on a thousand records), else the pure-Python one
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())


#: what a record file may be at most: records are a few kilobytes; a hostile file (an alias bomb, a deep
#: nest, a huge file) is refused in well under a second with bounded memory, naming the file
MAX_BYTES = 512 * 1024
MAX_DEPTH = 24
MAX_NODES = 20_000


def _hostile(text: str) -> tuple[int | None, str] | None:
    """Why a record's YAML is refused before it is built, read from its event stream (the parser streams, so
    an alias bomb is refused at its first alias, never expanded): (line, what), or None."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.AliasEvent):
            return line, "an alias (*name): records do not use anchors and aliases"
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_NODES:
                return line, f"more than {MAX_NODES} values"
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                return line, f"nested deeper than {MAX_DEPTH} levels"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


class _LineLoader(_SafeLoader):
    """SafeLoader that rejects duplicate keys (a silent overwrite loses data)."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    mapping = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool)) and key is not None:  # YAML's "? " complex keys
            raise yaml.constructor.ConstructorError(
                None, None, f"a key must be a plain value, not a {type(key).__name__}", key_node.start_mark
            )
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _line_of(node: yaml.Node | None, path: Iterable[Any]) -> int | None:
    """1-based line of the YAML node at ``path`` (keys and indexes), best effort."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == part:
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _field(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_file(path: Path) -> tuple[dict | None, yaml.Node | None, list[Problem]]:
    """Read one YAML file: its data, its node tree (for line numbers) and any syntax problem."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return None, None, [Problem(path, None, "", f"{size} bytes: a record is at most {MAX_BYTES // 1024} KiB")]
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return None, None, [Problem(path, None, "", f"cannot read: {err}")]
    try:
        refused = _hostile(text)
        if refused:
            return None, None, [Problem(path, refused[0], "", f"refused: {refused[1]}")]
        loader = _LineLoader(text)  # one parse: the node tree (for line numbers) and the data built from it
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = mark.line + 1 if mark else None
        what = getattr(err, "problem", None) or str(err).splitlines()[0]
        return None, None, [Problem(path, line, "", f"malformed YAML: {what}")]
    if not isinstance(data, dict):
        return None, node, [Problem(path, 1, "", "a record must be a YAML mapping")]
    return join_zh(data), node, []


def check_record(path: Path, data: dict, node: yaml.Node | None, root: Path) -> list[Problem]:
    """Every problem of one parsed record, schema first, then the rules a schema can't say."""
    problems: list[Problem] = []
    for err in sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path)):
        loc = list(err.absolute_path)
        message = err.message
        if err.validator == "additionalProperties":
            message = message.replace("Additional properties are not allowed", "unknown field")
        if err.validator == "required":
            message = message.replace("is a required property", "is missing")
        problems.append(Problem(path, _line_of(node, loc), _field(loc), message))
    if problems:
        return problems

    def add(loc: list, message: str) -> None:
        problems.append(Problem(path, _line_of(node, loc), _field(loc), message))

    if data["id"] != path.stem:
        add(["id"], f"{data['id']!r} must equal the file name {path.stem!r}")
    for key in ("title", "summary", "root_cause", "workaround"):
        if not _CJK.search(data[key]["zh"]):
            add([key, "zh"], "the zh text has no Chinese in it")
    if len(data["symptoms"]["en"]) != len(data["symptoms"]["zh"]):
        add(["symptoms"], "en and zh list different numbers of symptoms")
    for key in ("title", "summary", "root_cause", "workaround", "symptoms"):
        for lang in ("en", "zh"):
            texts = data[key][lang] if isinstance(data[key][lang], list) else [data[key][lang]]
            if any("\\`" in t for t in texts):
                add(
                    [key, lang],
                    "a backslash does not escape a backtick inside Markdown code: wrap code holding a backtick in "
                    "double backticks (``ValueError: `xs` is empty``)",
                )
    for loc, pattern in _patterns(data):
        try:
            re.compile(pattern)
        except re.error as err:
            add(loc, f"bad regex {pattern!r}: {err}")
    if "path" in data["reproducer"] and not (root / data["reproducer"]["path"]).is_file():
        add(["reproducer", "path"], f"reproducer {data['reproducer']['path']} does not exist")
    if (data.get("source") == "mined") != ("trigger" in data["reproducer"]):
        add(["source"], "a mined record (source: mined) has a reproducer.trigger, and only a mined record has one")
    if data.get("source") == "mined" and "mined" not in data:
        add(["mined"], "a mined record says what was mined (mined: commit, class, shipped, draft)")
    problems.extend(kind_problems(path, data, node))
    try:
        SpecifierSet(data["versions"]["affected"])
    except InvalidSpecifier:
        add(["versions", "affected"], f"{data['versions']['affected']!r} is not a PEP 440 specifier such as '>=2.4,<2.6'")
    fixed = data["versions"].get("fixed_in")
    if fixed:
        try:
            if Version(fixed) in SpecifierSet(data["versions"]["affected"]):
                add(["versions", "fixed_in"], f"{fixed} is inside the affected range")
        except (InvalidVersion, InvalidSpecifier):
            pass
    if data["status"] == "fixed" and not fixed and not data["versions"].get("nightly_fixed"):
        add(["versions"], "status is fixed but neither fixed_in nor nightly_fixed is given")
    return problems


def kind_problems(path: Path, data: dict, node: yaml.Node | None) -> list[Problem]:
    """A record is in its kind's folder, and a published one (a bug, a limitation) is written up: no draft
    flag, no template text, a title that is not its fix's PR subject."""
    kind = kind_of(path)
    out = []

    def add(loc: list, message: str) -> None:
        out.append(Problem(path, _line_of(node, loc), _field(loc), message))

    declared = data.get("kind", "bug")
    if kind == "bug" and declared != "bug":
        add(["kind"], f"a {declared} belongs in {FOLDERS[declared]}/, not issues/ (issues/ holds bugs only)")
    if kind == "limitation" and declared != "limitation":
        add(["kind"], "a record in limitations/ says kind: limitation")
    if kind == "draft":
        if not data.get("mined", {}).get("draft"):
            add(
                ["mined"],
                "a record in mined/drafts/ is a mined draft (mined.draft: true); a written-up one moves to "
                "issues/ or limitations/",
            )
        return out
    if data.get("mined", {}).get("draft"):
        add(
            ["mined", "draft"],
            f"a draft is not published: write it up (title, symptoms, root cause, workaround) and "
            f"set mined.draft: false, or keep it in {FOLDERS['draft']}/",
        )
    for key in ("title", "summary", "root_cause", "workaround"):
        for lang in LANGS:
            m = TEMPLATE_TEXT.search(str(data.get(key, {}).get(lang, "")))
            if m:
                add([key, lang], f"template text {m.group(0)!r}: a published record is written up by a person")
    prs = set(data["upstream"].get("fixed_by") or [])
    for n in data["upstream"].get("issues") or []:
        if n in prs:
            add(
                ["upstream", "issues"],
                f"#{n} is the fix (it is in fixed_by): issues lists the reports of the bug, leave it empty when there is none",
            )
    subject = re.sub(r"\s*\(#\d+\)\s*$", "", str(data.get("mined", {}).get("subject", ""))).strip().lower()
    while subject and re.search(r"\(#\d+\)$", subject):
        subject = re.sub(r"\s*\(#\d+\)$", "", subject)
    if subject and subject in str(data.get("title", {}).get("en", "")).lower():
        add(["title", "en"], "the title is the fix's PR subject: say what a user sees (the error or wrong result, and when)")
    return out


def _patterns(data: dict):
    for i, item in enumerate(data.get("signatures", [])):
        sig = parse_signature(item)
        for key in ("pattern", "file", "function"):
            if getattr(sig, key):
                yield ["signatures", i], getattr(sig, key)
    for i, p in enumerate(data["reproducer"]["signatures"]):
        yield ["reproducer", "signatures", i], p


def record_files(root: Path, kinds: Iterable[str] = ("bug",)) -> list[Path]:
    """The record files of ``kinds`` (see :data:`FOLDERS`), bugs first; only ``issues/`` must exist."""
    if not (root / "issues").is_dir():
        raise XlakbError(f"{root / 'issues'}: no issues/ folder here", hint="run xlakb from the repository root or pass --root")
    out = []
    for kind in kinds:
        folder = root / FOLDERS[kind]
        out += sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    return out


ALL_KINDS = tuple(FOLDERS)


def validate(root: Path, *, measured: bool = True, kinds: Iterable[str] = ALL_KINDS) -> tuple[list[Record], list[Problem]]:
    """Check every record of ``kinds`` (all, by default: bugs, limitations, drafts) as data (schema, ids,
    folder, both languages, regexes, look-alike links); return the valid ones and all problems.

    ``measured``: also the checks ``xlakb validate`` adds (its Chinese text, its evidence for triage);
    loading records for other commands leaves them out, so a weak signature never hides a record. What the
    records claim against what was measured is checked above this module (:func:`xlakb.knowledge.validate`)."""
    records: list[Record] = []
    problems: list[Problem] = []
    seen: dict[str, Path] = {}
    for path in record_files(root, kinds):
        rel = path.relative_to(root) if path.is_relative_to(root) else path
        data, node, found = parse_file(path)
        if data is not None:
            found = check_record(rel, data, node, root)
        problems.extend(p if p.path == rel else Problem(rel, p.line, p.field, p.message) for p in found)
        if data is None or found:
            continue
        if data["id"] in seen:
            problems.append(Problem(rel, _line_of(node, ["id"]), "id", f"duplicate id, also in {seen[data['id']]}"))
            continue
        seen[data["id"]] = rel
        record = Record(path, data)
        records.append(record)
        if measured:
            problems.extend(chinese_problems(rel, path))
            problems.extend(english_prose_problems(rel, data, node))
            problems.extend(evidence_problems(rel, record, node))
    problems.extend(lookalike_problems(root, records))
    return records, problems


def lookalike_problems(root: Path, records: list[Record]) -> list[Problem]:
    """Look-alike links name records that exist and link back (triage groups them both ways)."""
    by_id = {r.id: r for r in records}
    out = []
    for r in records:
        for other in r.data.get("lookalikes", {}).get("ids", []):
            rel = r.path.relative_to(root) if r.path.is_relative_to(root) else r.path
            if other == r.id:
                out.append(Problem(rel, None, "lookalikes.ids", "a record is not its own look-alike"))
            elif other not in by_id:
                out.append(Problem(rel, None, "lookalikes.ids", f"unknown record id {other!r}"))
            elif r.id not in by_id[other].data.get("lookalikes", {}).get("ids", []):
                out.append(Problem(rel, None, "lookalikes.ids", f"{other} does not list {r.id} as its look-alike"))
    return out


def chinese_problems(rel: Path, path: Path) -> list[Problem]:
    """A space typed between two Chinese characters inside a line (line breaks of folded text are joined
    when the record is read; a space inside a line is kept as written, so it is an error to fix)."""
    out = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        m = STRAY.search(line)
        if m:
            out.append(Problem(rel, n, "", f"a space between two Chinese characters: {m.group(0)!r} (remove it)"))
        out.extend(Problem(rel, n, "", problem) for problem in variant_problems(line))
    return out


def _zh_texts(data, loc: list):
    """(location, text) of every ``zh`` text of a record: any mapping's ``zh`` key, at any depth."""
    if isinstance(data, dict):
        for k, v in data.items():
            if k == "zh":
                for i, text in enumerate(v) if isinstance(v, list) else [(None, v)]:
                    if isinstance(text, str):
                        yield (loc + [k] + ([] if i is None else [i])), text
            else:
                yield from _zh_texts(v, loc + [k])
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _zh_texts(v, loc + [i])


def english_prose_problems(rel: Path, data: dict, node: yaml.Node | None) -> list[Problem]:
    """English sentences in a ``zh`` text (:func:`xlakb.cjk.english_prose_md`): a quoted error message or commit
    subject is a literal, shown as `code`; a sentence of ours is written in Chinese."""
    out = []
    for loc, text in _zh_texts(data, []):
        for run in english_prose_md(text):
            out.append(
                Problem(
                    rel,
                    _line_of(node, loc),
                    _field(loc),
                    f"English prose in a Chinese text: {run!r} (quote an error or a commit subject as `code`, "
                    "write a sentence in Chinese)",
                )
            )
    return out


def evidence_problems(rel: Path, record: Record, node: yaml.Node | None) -> list[Problem]:
    """What makes a record's triage signatures weak: messages only (a generic error string is no
    evidence), or regex syntax the site's paste box (JavaScript) cannot run."""
    out = []
    if generic_only(signatures_of(record.data)):
        out.append(
            Problem(
                rel,
                _line_of(node, ["signatures"]),
                "signatures",
                "only messages: a generic error string alone is no evidence; add context "
                "(a frame, a check or the API call; see the signature kinds in the schema)",
            )
        )
    for loc, pattern in _patterns(record.data):
        problem = portability_problem(pattern) if loc[0] == "signatures" else None
        if problem:
            out.append(Problem(rel, _line_of(node, loc), _field(loc), problem))
    return out


def load_records(root: Path, kinds: Iterable[str] = ("bug",)) -> list[Record]:
    """The records of ``kinds`` (the bugs, by default), or XlakbError naming the first problem (``xlakb
    validate`` lists them all)."""
    records, problems = validate(root, measured=False, kinds=tuple(kinds))
    if problems:
        more = f" (and {len(problems) - 1} more; run xlakb validate)" if len(problems) > 1 else ""
        raise XlakbError(f"{problems[0]}{more}")
    return records


def select_records(
    root: Path, ids: list[str] | None = None, *, every: bool = False, component: str | None = None, tag: str | None = None
) -> list[Record]:
    """The records a batch command names: ``ids``, and with ``every``/``component``/``tag`` all records, or
    those of a component or with a tag (ids named beside them are added). XlakbError when none is named or
    none matches."""
    if every or component or tag:
        chosen = [
            r
            for r in load_records(root, PUBLISHED)
            if every or (ids and r.id in ids) or (component and r.component == component) or (tag and tag in r.tags)
        ]
        if not chosen:
            raise XlakbError("no record matches", hint="check --component/--tag, or name ids")
        return chosen
    if ids:
        return [load_record(root, i) for i in dict.fromkeys(ids)]
    raise XlakbError("which records?", hint="name ids, or pass --all, --component C or --tag T")


def id_hint(asked: str, known: list[str]) -> str:
    """What to say of an unknown record id: the ids close to it (a typo, or its first words), else every id."""
    from difflib import SequenceMatcher

    def score(k: str) -> float:
        whole = SequenceMatcher(None, asked, k).ratio()
        start = SequenceMatcher(None, asked, k[: len(asked)]).ratio() if len(asked) >= 6 else 0.0
        return max(whole, start)

    close = sorted((k for k in known if score(k) >= 0.75), key=score, reverse=True)[:3]
    if close:
        return f"did you mean {' or '.join(close)}? `xlakb list` shows every id"
    return f"known ids: {', '.join(known) or 'none'}"


def load_record(root: Path, record_id: str) -> Record:
    """The record ``record_id`` of any kind (a bug, a limitation, a draft)."""
    path = next(
        (root / folder / f"{record_id}.yaml" for folder in FOLDERS.values() if (root / folder / f"{record_id}.yaml").is_file()),
        root / "issues" / f"{record_id}.yaml",
    )
    if not path.is_file():
        raise XlakbError(
            f"unknown record id {record_id!r}", hint=id_hint(record_id, [p.stem for p in record_files(root, ALL_KINDS)])
        )
    data, node, problems = parse_file(path)
    rel = path.relative_to(root)
    if data is not None:
        problems = check_record(rel, data, node, root)
    if problems:
        raise XlakbError(str(Problem(rel, problems[0].line, problems[0].field, problems[0].message)))
    return Record(path, data)
