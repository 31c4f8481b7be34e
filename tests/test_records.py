from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fakewheels import fake_record
from xlakb.errors import XlakbError
from xlakb.knowledge import validate
from xlakb.records import load_record, load_records

REPO = Path(__file__).resolve().parent.parent


def problems_of(root):
    return [str(p) for p in validate(root)[1]]


def edit(path: Path, fn):
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


def test_repository_records_are_valid():
    records, problems = validate(REPO)
    assert problems == []
    ids = {r.id for r in records}
    assert len(ids) == len(records) >= 4
    for rec in records:  # every record ships a reproducer (a mined one names its upstream test) and both languages
        if rec.source == "mined":
            assert set(rec.trigger) >= {"repo", "commit", "path", "test"} and len(rec.trigger["commit"]) == 40
        else:
            assert rec.reproducer_path.is_file()
        assert rec.text("title", "zh")


def test_fake_record_is_valid(kb):
    fake_record(kb)
    records, problems = validate(kb)
    assert problems == [] and [r.id for r in records] == ["fake-bug"]


def test_malformed_yaml_names_file_and_line(kb):
    (kb / "issues" / "broken.yaml").write_text("id: broken\ntitle:\n  en: [unclosed\n")
    (msg,) = problems_of(kb)
    assert msg.startswith("issues/broken.yaml:") and "malformed YAML" in msg
    assert msg.split(":")[1].isdigit()


def test_unknown_field_names_line_and_field(kb):
    path = fake_record(kb)
    path.write_text(path.read_text().replace("status: fixed", "status: fixed\nstatsu: open"))
    (msg,) = problems_of(kb)
    assert "unknown field" in msg and "'statsu'" in msg and msg.startswith("issues/fake-bug.yaml:")


def test_wrong_type_points_at_the_field_line(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["reproducer"].__setitem__("timeout", "soon"))
    (msg,) = problems_of(kb)
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "timeout" in ln)
    assert msg.startswith(f"issues/fake-bug.yaml:{line}: reproducer.timeout:")


def test_missing_language_is_reported(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["workaround"].pop("zh"))
    (msg,) = problems_of(kb)
    assert "workaround" in msg and "'zh' is missing" in msg


def test_zh_without_chinese_is_reported(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["summary"].__setitem__("zh", "TODO"))
    (msg,) = problems_of(kb)
    assert "summary.zh" in msg and "no Chinese" in msg


def test_missing_reproducer(kb):
    fake_record(kb)
    (kb / "reproducers" / "fake-bug.py").unlink()
    (msg,) = problems_of(kb)
    assert "reproducer.path" in msg and "does not exist" in msg


def test_duplicate_ids_and_id_must_match_file(kb):
    path = fake_record(kb)
    (kb / "issues" / "other.yaml").write_text(path.read_text())
    msgs = problems_of(kb)
    assert any("issues/other.yaml" in m and "must equal the file name" in m for m in msgs)


def test_duplicate_key_is_an_error_not_a_silent_overwrite(kb):
    path = fake_record(kb)
    path.write_text(path.read_text() + "status: open\n")
    (msg,) = problems_of(kb)
    assert "duplicate key 'status'" in msg


def test_bad_regex_and_bad_link(kb):
    path = fake_record(kb)
    edit(
        path,
        lambda d: (
            d["reproducer"].__setitem__("signatures", ["unbalanced("]),
            d["upstream"].__setitem__("links", ["http:/nope"]),
        ),
    )
    msgs = problems_of(kb)
    assert any("upstream.links[0]" in m for m in msgs)
    edit(path, lambda d: d["upstream"].pop("links"))
    (msg,) = problems_of(kb)
    assert "reproducer.signatures[0]" in msg and "bad regex" in msg


def test_proxy_needs_proxy_checks(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["reproducer"].__setitem__("fidelity", "proxy"))
    (msg,) = problems_of(kb)
    assert "proxy_checks" in msg


def test_fixed_in_inside_affected_range(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["versions"].__setitem__("fixed_in", "2.5.0"))
    (msg,) = problems_of(kb)
    assert "versions.fixed_in" in msg and "inside the affected range" in msg


def test_load_record_unknown_id_lists_known(kb):
    fake_record(kb)
    with pytest.raises(XlakbError, match="unknown record id 'nope'.*fake-bug"):
        load_record(kb, "nope")


def test_an_unknown_id_close_to_known_ones_names_them():
    from xlakb.records import id_hint

    known = ["fsdpv2-nofunc-has-sharding", "fsdpv2-scalar-param-unhashable-list", "index-empty-tensor-gather-abort"]
    assert (
        id_hint("index-empty-tensor-gather-abrot", known)
        == "did you mean index-empty-tensor-gather-abort? `xlakb list` shows every id"
    )  # a typo
    assert id_hint("fsdpv2", known).startswith(
        "did you mean fsdpv2-nofunc-has-sharding or fsdpv2-scalar-param-unhashable-list?"
    )  # its first words
    assert id_hint("nope", known) == f"known ids: {', '.join(known)}"  # nothing close: every id
    assert id_hint("nope", []) == "known ids: none"


def test_load_records_raises_first_problem(kb):
    fake_record(kb)
    fake_record(kb, "second")
    (kb / "reproducers" / "second.py").unlink()
    with pytest.raises(XlakbError, match="issues/second.yaml.*does not exist"):
        load_records(kb)


def test_claims(kb):
    fake_record(kb)
    rec = load_record(kb, "fake-bug")
    assert rec.claims("2.4.0") is True and rec.claims("2.5.1") is True
    assert rec.claims("2.6.0") is False and rec.claims("2.9.0") is False
    assert rec.claims("2.1.0") is None


def test_validate_checks_claims_against_the_measured_matrix(kb):
    """One line per disagreement between what the record claims and its own bisect/<id>/matrix.json."""
    import json
    import subprocess
    import sys

    from fakewheels import fake_record

    fake_record(kb)  # claims affected >=2.4,<2.6, fixed_in 2.6.0, status fixed
    rows = {
        "2.1.0": "untestable",
        "2.3.0": "reproduced",
        "2.4.0": "not-reproduced",
        "2.5.1": "reproduced",
        "2.6.0": "not-reproduced",
        "2.7.0": "reproduced",
    }
    (kb / "bisect" / "fake-bug").mkdir(parents=True, exist_ok=True)
    (kb / "bisect" / "fake-bug" / "matrix.json").write_text(
        json.dumps(
            {
                "record": "fake-bug",
                "kind": "matrix",
                "results": [{"candidate": v, "kind": "release", "verdict": r} for v, r in rows.items()],
            }
        )
    )
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines == [
        "issues/fake-bug.yaml:43: versions.affected: 2.3.0 measured reproduced, but is not in affected '>=2.4,<2.6' (bisect/fake-bug/matrix.json)",
        "issues/fake-bug.yaml:43: versions.affected: claims 2.4.0 affected ('>=2.4,<2.6'), measured not-reproduced (bisect/fake-bug/matrix.json)",
        "issues/fake-bug.yaml:44: versions.fixed_in: claims 2.7.0 fixed (fixed_in 2.6.0), measured reproduced (bisect/fake-bug/matrix.json)",
        "issues/fake-bug.yaml:20: status: is fixed, but the newest measured release 2.7.0 is reproduced (bisect/fake-bug/matrix.json)",
    ], r.stdout
    # other commands still load the record: a stale claim never hides it from triage or list
    assert (
        subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "list"], capture_output=True, text=True).returncode == 0
    )
    (kb / "bisect" / "fake-bug" / "matrix.json").write_text(
        json.dumps(
            {
                "results": [
                    {"candidate": v, "kind": "release", "verdict": r}
                    for v, r in {"2.3.0": "not-reproduced", "2.4.0": "reproduced", "2.6.0": "not-reproduced"}.items()
                ]
            }
        )
    )
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    (kb / "bisect" / "fake-bug" / "matrix.json").write_text("{not json")
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1 and "bisect/fake-bug/matrix.json: results: cannot read the measured matrix" in r.stdout


def test_fixed_in_is_always_a_full_version(kb):
    import subprocess
    import sys

    from fakewheels import fake_record

    fake_record(kb, fixed_in="2.6")
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1 and "versions.fixed_in: '2.6' does not match" in r.stdout


def test_folded_chinese_lines_join_without_a_space_and_a_typed_space_is_named(kb):
    path = fake_record(kb)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["summary"]["zh"] = "在 float32 中计算\n商，然后\n返回 0。"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=20), "utf-8")
    rec = load_records(kb)[0]
    assert rec.data["summary"]["zh"] == "在 float32 中计算商，然后返回 0。"  # a Latin word keeps its spaces
    data["root_cause"]["zh"] = "整个 过程没有报错。"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200), "utf-8")
    _records, problems = validate(kb)
    assert any("a space between two Chinese characters: '个 过'" in p.message for p in problems)


def test_glossary_variants_are_named(kb):
    path = fake_record(kb)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["summary"]["zh"] = "每次迭代都会内存泄露。"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200), "utf-8")
    _records, problems = validate(kb)
    assert any("use the glossary's 内存泄漏 (memory leak), not 内存泄露" in p.message for p in problems)


def test_lookalike_links_must_exist_and_go_both_ways(kb):
    a = fake_record(kb, "bug-a")
    fake_record(kb, "bug-b")
    data = yaml.safe_load(a.read_text("utf-8"))
    data["lookalikes"] = {"ids": ["bug-b"], "tells_apart": {"en": "b needs xm.save", "zh": "b 需要 xm.save"}}
    a.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    _records, problems = validate(kb)
    assert [str(p) for p in problems if p.field == "lookalikes.ids"] == [
        "issues/bug-a.yaml: lookalikes.ids: bug-b does not list bug-a as its look-alike"
    ]
    data["lookalikes"]["ids"] = ["bug-c"]
    a.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    _records, problems = validate(kb)
    assert any("unknown record id 'bug-c'" in p.message for p in problems)


# -- what a record is: a bug in issues/, a limitation in limitations/, a draft in mined/drafts/ -------------------
def _mined(data: dict, **extra) -> dict:
    data = dict(data)
    data["source"] = "mined"
    data["reproducer"] = {
        "trigger": {"repo": "pytorch/xla", "commit": "a" * 40, "path": "test/test_x.py", "test": "T.test_x"},
        "fidelity": "exact",
        "timeout": 60,
        "signatures": ["XLAKB-TRIGGER FAILED T\\.test_x: "],
    }
    data["mined"] = {
        "commit": "a" * 40,
        "pr": 7740,
        "subject": "Support fp8e5m2 dtype (#7740)",
        "class": "dtype-precision",
        "shipped": "ancestry",
        "draft": False,
        **extra,
    }
    return data


def test_a_published_record_is_written_up_never_a_template_or_its_fix_subject(kb):
    import yaml

    path = fake_record(kb)
    data = _mined(yaml.safe_load(path.read_text()), draft=True)
    data["title"]["en"] = "Support fp8e5m2 dtype (upstream test test_fp8 fails before PR #7740)"
    data["root_cause"]["zh"] = "尚无人撰写详细分析。"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    text = "\n".join(problems_of(kb))
    assert "mined.draft: a draft is not published" in text
    assert "title.en: template text '(upstream test test_fp8 fails before PR #7740)'" in text
    assert "root_cause.zh: template text '尚无人撰写'" in text
    assert "title.en: the title is the fix's PR subject" in text
    # the same draft kept where drafts live is valid: maintainers see it, nothing publishes it
    drafts = kb / "mined" / "drafts"
    drafts.mkdir(parents=True)
    path.rename(drafts / path.name)
    assert problems_of(kb) == []
    from xlakb.records import load_record, load_records

    assert [r.id for r in load_records(kb)] == [] and load_record(kb, "fake-bug").kind == "draft"
    assert load_record(kb, "fake-bug").root == kb


def test_a_limitation_lives_in_limitations_and_says_so_and_is_never_listed_as_a_bug(kb):
    import yaml

    from xlakb.records import load_record, load_records

    path = fake_record(kb)
    data = _mined(yaml.safe_load(path.read_text()))
    data = {"id": data["id"], "kind": "limitation", **{k: v for k, v in data.items() if k != "id"}}
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    assert any("kind: a limitation belongs in limitations/, not issues/" in p for p in problems_of(kb))
    (kb / "limitations").mkdir()
    path.rename(kb / "limitations" / path.name)
    assert problems_of(kb) == []
    assert load_records(kb) == [] and [r.id for r in load_records(kb, ("limitation",))] == ["fake-bug"]
    assert load_record(kb, "fake-bug").kind == "limitation" and load_record(kb, "fake-bug").root == kb
    data.pop("kind")
    (kb / "limitations" / path.name).write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    assert any("kind: a record in limitations/ says kind: limitation" in p for p in problems_of(kb))


def test_a_fix_pr_is_not_listed_as_a_report_of_the_bug(kb):
    path = fake_record(kb)
    edit(path, lambda d: d["upstream"].update(issues=[2, 1], fixed_by=[2]))
    assert any("upstream.issues: #2 is the fix (it is in fixed_by)" in p for p in problems_of(kb))


def test_nothing_committed_names_a_path_of_the_machine_it_was_measured_on():
    """Records, reproducers, measured results, the mining table and the site's pages are published: a probe's
    message or a bisection's command that named this machine's folders (its home, a clone's path) is kept as
    ``<site-packages>/…`` and ``--repo ../xla``. (upstream/ holds users' own pastes, quoted as they wrote them.)"""
    from xlakb.published import command, machine_paths, scrub

    found = []
    for folder in ("issues", "limitations", "reproducers", "bisect", "mined", "site"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in (".yaml", ".json", ".md", ".py", ".js"):
                found += [f"{path.relative_to(REPO)}: {p}" for p in machine_paths(path.read_text("utf-8"))]
    assert found == []
    assert machine_paths("see /home/me/xla and /Users/me/x") == ["/home/me", "/Users/me"]
    assert (
        scrub("from '/home/me/.cache/xlakb/envs/uv/ab/venv/lib/python3.11/site-packages/_XLAC.so'")
        == "from '<site-packages>/_XLAC.so'"
    )
    assert command(["bisect", "r", "--repo", "/home/me/xla", "--start=/abs/start"]) == "bisect r --repo ../xla --start=start"
    assert (
        scrub('File "/home/me/kb/reproducers/x.py", line 3', Path("/home/me/kb")) == 'File "reproducers/x.py", line 3'
    )  # the repository a reproducer ran from: its own path, relative


# -- a hostile record cannot stall the tools ---------------------------------------------------------------
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)
)


@pytest.mark.parametrize(
    "text, said",
    [
        (BOMB, "refused: an alias (*name): records do not use anchors and aliases"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nest"),
        ("a: " + "[" * 30 + "]" * 30 + "\n", "refused: nested deeper than 24 levels"),  # libyaml or our bound: refused either way
        ("a:\n" + "".join(f"  - {i}\n" for i in range(30_000)), "refused: more than 20000 values"),
        ("x" * (600 * 1024), "bytes: a record is at most 512 KiB"),
    ],
)
def test_a_hostile_record_is_refused_at_once_naming_the_file(kb, text, said):
    """An alias bomb expands to gigabytes, a deep nest overflows the stack, a huge file takes memory: each is
    refused from the parser's event stream, in well under a second, with one line naming the file."""
    import time
    import tracemalloc

    fake_record(kb)
    (kb / "issues" / "bomb.yaml").write_text(text)
    tracemalloc.start()
    started = time.perf_counter()
    problems = problems_of(kb)
    took = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [p for p in problems if p.startswith("issues/bomb.yaml")] and said in "\n".join(problems)
    assert all(p.count("\n") == 0 for p in problems)
    assert took < 5 and peak < 200 * 1024 * 1024  # bounds, not a speed target (benchmarks measure speed)


@settings(max_examples=200, deadline=None)
@example("? ?")  # a mapping as a key (YAML's complex key), found by this test
@example("? [a]\n: b")
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\" \n\t#,?%@`0") + ["\u4e2d"]), max_size=200))
def test_any_record_text_is_read_or_refused_with_a_problem_never_a_crash(tmp_path_factory, text):
    from xlakb.records import parse_file

    path = tmp_path_factory.mktemp("fuzz") / "issues" / "x.yaml"
    path.parent.mkdir()
    path.write_text(text, "utf-8")
    data, _node, problems = parse_file(path)
    assert (data is None) == bool(problems) or isinstance(data, dict)


def test_validate_names_a_signature_that_matches_more_than_its_bug(kb):
    """A signature an unrelated log shows, or another record's error when the two are not declared look-alikes,
    is found by validate, which names the file, line and signature and says why; narrowing it, declaring the
    look-alike or saying why it is kept (``shared``) settles it."""
    import subprocess
    import sys

    import yaml

    from fakewheels import fake_record

    def write(rid: str, signatures: list, **extra) -> None:
        path = kb / "issues" / f"{rid}.yaml"
        data = yaml.safe_load(path.read_text())
        data.update(signatures=signatures, **extra)
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))

    for rid in ("one-bug", "two-bug"):
        fake_record(kb, rid)
        write(rid, [{"check": r"Check failed: shared_thing\(\)"}, {"call": rid.replace("-", "_") + r"\("}])
    write("one-bug", ["unhashable type: 'list'", {"check": r"Check failed: shared_thing\(\)"}, {"call": r"one_bug\("}])

    def validate() -> list[str]:
        r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
        return [line for line in r.stdout.splitlines() if "signatures[" in line]

    lines = validate()
    assert any(
        line.startswith("issues/one-bug.yaml:")
        and "signatures[0]: message unhashable type: 'list' matches more than this bug (also" in line
        for line in lines
    ), lines
    assert any("issues/one-bug.yaml:" in x and r"signatures[1]: check Check failed: shared_thing\(\)" in x for x in lines)
    assert any("issues/two-bug.yaml:" in x and "(also evidence of one-bug)" in x for x in lines), lines
    assert len(lines) == 3

    tells = {"en": "Only one of them calls one_bug().", "zh": "只有其中一个调用了 one_bug()。"}
    write(
        "one-bug",
        [{"message": "unhashable type: 'list'", "shared": "Python's own error for any list used as a key"}]
        + [{"check": r"Check failed: shared_thing\(\)"}, {"call": r"one_bug\("}],
        lookalikes={"ids": ["two-bug"], "tells_apart": tells},
    )
    write(
        "two-bug",
        [{"check": r"Check failed: shared_thing\(\)"}, {"call": r"two_bug\("}],
        lookalikes={"ids": ["one-bug"], "tells_apart": tells},
    )
    assert validate() == []


def test_validate_names_a_backslash_before_a_backtick(kb):
    """Markdown code cannot hold a backtick escaped with a backslash (the page showed a stray backtick): validate
    names the field and says to use double backticks."""
    import subprocess
    import sys

    import yaml

    from fakewheels import fake_record

    path = fake_record(kb)
    data = yaml.safe_load(path.read_text())
    data["symptoms"]["en"] = ["raises `ValueError: \\`xs\\` is an empty PyTree`"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1 and "symptoms.en: a backslash does not escape a backtick" in r.stdout, r.stdout
    data["symptoms"]["en"] = ["raises ``ValueError: `xs` is an empty PyTree``"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_english_prose_is_a_run_of_english_words_outside_code():
    """xlakb.cjk.english_prose: four English words in a row (one in lower case) are a sentence; code, identifiers,
    paths, versions, numbers and names are not, and a Chinese character ends a run."""
    from xlakb.cjk import english_prose, english_prose_md

    planted = "在 2.5.1 上报错。The copy kept the input's element type, so it fails."
    assert english_prose(planted) == ["The copy kept the input's element type, so it fails"]
    assert english_prose("日志为 Tensor is not an XLA tensor。") == ["Tensor is not an XLA tensor"]
    for fine in (
        "在 torch_xla 2.1 和 PyTorch/XLA 上，x.diagonal(dim1=-2, dim2=-1) 报 SIGABRT（退出码 134）",
        "Google Cloud TPU VM 上的 StableHLO 导出",  # names: capitalised words only
        "n, c, h, w 的顺序",  # single letters: variables, not words
        "使用 XLA_USE_32BIT_LONG=1 与 --torch-xla 2.6.0 运行 xlakb repro",
        "torch 2.5 与 torch_xla 2.5 配套",
    ):
        assert english_prose(fine) == [], fine
    md = "报错 `Tensor is not an XLA tensor`，见 ``Fix `norm` data-type when using AMP`` 与 [上游](https://x.org/a b c d)"
    assert english_prose_md(md) == []
    assert english_prose_md("修复：PR #7878 “Fix `norm` data-type when using AMP”") == ["Fix   data-type when using AMP"]


def test_validate_names_english_prose_in_a_zh_text(kb):
    """``xlakb validate`` names the file, the field and the English run of a Chinese text; quoted as code, it passes."""
    path = fake_record(kb)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["symptoms"]["zh"] = ["进程退出时报 'Caught an exception when exiting the process'。"]
    data["versions"]["notes"] = {"en": "Fixed by a PR.", "zh": "由 PR 修复，the fix landed in master。"}
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200), "utf-8")
    found = [str(p) for p in validate(kb)[1] if "English prose" in p.message]
    assert len(found) == 2, found
    assert found[0].startswith(f"{path.relative_to(kb)}:") and "symptoms.zh[0]" in found[0]
    assert "'Caught an exception when exiting the process'" in found[0]
    assert "versions.notes.zh" in found[1] and "'the fix landed in master'" in found[1]
    data["symptoms"]["zh"] = ["进程退出时报 `Caught an exception when exiting the process`。"]
    data["versions"]["notes"]["zh"] = "由 PR 修复，修复已合入 master。"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200), "utf-8")
    assert [p for p in validate(kb)[1] if "English prose" in p.message] == []
