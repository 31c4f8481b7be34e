"""Triage weighs evidence: kinds of signatures, strong vs possible, versions from the log, advice from
the measured matrix, bad input, and the corpus of real reproducer logs and unrelated tracebacks."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fakewheels import fake_record
from xlakb.knowledge import export
from xlakb.triage import (
    advice_text,
    annotate,
    engine,
    export_record,
    facts,
    log_from_text,
    read_log_file,
    result_json,
    triage,
)

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "data" / "triage"


def record(rid="fake-bug", signatures=(), measured=None, fixed_in="2.6.0", status="fixed", lookalikes=None):
    data = {
        "id": rid,
        "title": {"en": f"title {rid}", "zh": f"标题 {rid}"},
        "status": status,
        "versions": {"affected": ">=2.4,<2.6", **({"fixed_in": fixed_in} if fixed_in else {})},
        "workaround": {"en": "Upgrade.", "zh": "升级。"},
        "signatures": list(signatures),
    }
    if lookalikes:
        data["lookalikes"] = {"ids": lookalikes, "tells_apart": {"en": f"how to tell {rid}", "zh": f"区分 {rid}"}}
    matrix = {"results": [{"candidate": v, "kind": "release", "verdict": r} for v, r in (measured or {}).items()]}
    return export_record(data, matrix)


def kb_of(*records, background=()):
    """Records as triage reads them: each signature's genericity measured across these records and
    ``background`` (unrelated logs), as export_records does for the real knowledge base."""
    return annotate(list(records), list(background))


SCALAR_LIKE = record(
    signatures=[
        {"message": "unhashable type: 'list'"},
        {"frame": {"file": r"spmd_fully_sharded_data_parallel\.py", "function": "__init__"}},
        {"call": r"SpmdFullyShardedDataParallel\("},
        {"env": "XLA_USE_SPMD=1"},
    ],
    measured={"2.5.1": "reproduced", "2.7.0": "not-reproduced"},
    fixed_in="2.7.0",
)

TRACEBACK = """Traceback (most recent call last):
  File "/home/u/train.py", line 10, in <module>
    model = SpmdFullyShardedDataParallel(model, mesh=mesh)
  File "/usr/lib/python3.11/site-packages/torch_xla/experimental/spmd_fully_sharded_data_parallel.py", line 121, in __init__
    spmd.mark_sharding(param, mesh, _prepare_spmd_partition_spec(param))
TypeError: unhashable type: 'list'
"""
PLAIN_UNHASHABLE = (
    "plain.log",
    'Traceback (most recent call last):\n  File "/home/u/a.py", line 3, in <module>\n'
    "    seen[ids] = 1\nTypeError: unhashable type: 'list'\n",
)


# -- the rules -------------------------------------------------------------------------------------
def test_a_specific_error_and_a_trigger_make_a_strong_match():
    result = triage(log_from_text(TRACEBACK), kb_of(SCALAR_LIKE))
    (m,) = result.matches
    assert m.strength == "strong"
    assert [h.signature.kind for h in m.hits] == ["call", "frame", "message"]  # in the order of the log
    assert all(not h.generic for h in m.hits)
    assert m.score == 3 + 2 + 2
    assert result.torch_xla_signs == ("a torch_xla frame or path",)


def test_an_error_alone_is_possible_and_ranked_after_strong_ones():
    other = record("other-bug", signatures=[{"message": "went wrong in the other bug"}, {"call": r"other\("}])
    log = "import torch_xla\nTypeError: unhashable type: 'list'\nRuntimeError: went wrong in the other bug\n"
    result = triage(log_from_text(log), kb_of(SCALAR_LIKE, other))
    assert [(m.id, m.strength) for m in result.matches] == [("fake-bug", "possible"), ("other-bug", "possible")]
    result = triage(log_from_text(TRACEBACK + "RuntimeError: went wrong in the other bug\n"), kb_of(other, SCALAR_LIKE))
    assert [(m.id, m.strength) for m in result.matches] == [("fake-bug", "strong"), ("other-bug", "possible")]


def test_an_error_two_records_share_names_neither():
    other = record("other-bug", signatures=[{"message": "unhashable type"}, {"check": "never-here"}])
    result = triage(log_from_text("import torch_xla\nTypeError: unhashable type: 'list'\n"), kb_of(SCALAR_LIKE, other))
    assert result.matches == [] and {m.id for m in result.related} == {"fake-bug", "other-bug"}
    assert all(h.generic.startswith("also evidence of") for m in result.related for h in m.hits)


def test_an_error_unrelated_logs_show_is_generic_unless_raised_in_the_records_own_frame():
    records = kb_of(SCALAR_LIKE, background=[PLAIN_UNHASHABLE])
    (sig,) = [s for s in records[0]["signatures"] if s["kind"] == "message"]
    assert sig["generic"] == "also in an unrelated log (plain.log)"
    # raised in FSDPv2's own frame: the error there names the bug (a crash title), and the call backs it
    (m,) = triage(log_from_text(TRACEBACK), records).matches
    assert m.strength == "strong" and not any(h.generic for h in m.hits)
    # the same error with no frame of the record is only related, never a match
    result = triage(log_from_text("import torch_xla\nTypeError: unhashable type: 'list'\n"), records)
    assert result.matches == [] and [m.id for m in result.related] == ["fake-bug"]


def test_no_sign_of_torch_xla_matches_only_a_records_own_specific_message():
    plain = TRACEBACK.replace("/torch_xla/experimental/spmd_fully_sharded_data_parallel.py", "/mylib/wrap.py")
    plain = plain.replace("SpmdFullyShardedDataParallel", "Wrap")
    records = kb_of(SCALAR_LIKE, background=[PLAIN_UNHASHABLE])
    result = triage(log_from_text(plain), records)
    assert result.torch_xla_signs == () and result.matches == []
    rare = record(
        "rare-bug",
        signatures=[
            {"message": r"device_ready_queues_\.size\(\)\) INTERNAL ASSERT FAILED"},
            {"frame": {"file": r"graph\.py", "function": "_engine_run_backward"}},
        ],
    )
    line = (
        "RuntimeError: 0 <= device.index() && device.index() < ...device_ready_queues_.size()) INTERNAL ASSERT FAILED "
        'at ".../autograd/engine.cpp":1342'
    )
    (m,) = triage(log_from_text(line), kb_of(rare)).matches
    assert m.id == "rare-bug" and m.strength == "possible"
    # ... unless the paste comes from another accelerator stack
    result = triage(log_from_text(line + "\nx = x.to('xpu')\n"), kb_of(rare))
    assert result.matches == [] and result.other_backends == ("Intel XPU / IPEX",)


def test_context_without_an_error_is_no_match():
    log = 'import torch_xla\n  File "/x/spmd_fully_sharded_data_parallel.py", line 1, in __init__\nXLA_USE_SPMD=1\n'
    assert triage(log_from_text(log), kb_of(SCALAR_LIKE)).matches == []


def test_a_check_and_its_location_are_one_error_a_trigger_makes_it_strong():
    rec = record(
        signatures=[
            {"check": r"Check failed: has_sharding\(\)"},
            {"check": r"hlo_instruction\.h"},
            {"env": "XLA_DISABLE_FUNCTIONALIZATION=1"},
        ]
    )
    one = "F external/xla/xla/hlo/ir/hlo_instruction.h:1901] Check failed: has_sharding()\n"
    assert triage(log_from_text(one), kb_of(rec)).matches[0].strength == "possible"
    m = triage(log_from_text(one + "XLA_DISABLE_FUNCTIONALIZATION=1\n"), kb_of(rec)).matches[0]
    assert m.strength == "strong" and m.score == 4 + 4 + 1


def test_one_paste_never_names_two_unrelated_records_strongly():
    a = record("bug-a", signatures=[{"message": "first failure"}, {"call": r"foo\("}])
    b = record("bug-b", signatures=[{"message": "second failure"}, {"call": r"bar\("}])
    log = (
        'import torch_xla\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n    foo()\n'
        'RuntimeError: first failure\nTraceback (most recent call last):\n  File "b.py", line 1, in <module>\n'
        "    bar()\nRuntimeError: second failure\n"
    )
    result = triage(log_from_text(log), kb_of(a, b))
    assert result.ambiguous and {(m.id, m.strength) for m in result.matches} == {("bug-a", "possible"), ("bug-b", "possible")}


def test_lookalikes_matched_together_are_one_group():
    sigs = [{"check": r"Check failed: HasValue\(\)"}, {"message": r"buffer with shape \S+ on device \S+ is deleted"}]
    a = record("donate-a", signatures=sigs + [{"call": r"torch\.tensor\("}], lookalikes=["donate-b"])
    b = record("donate-b", signatures=sigs + [{"call": r"xm\.save\("}], lookalikes=["donate-a"])
    log = (
        'import torch_xla\nTraceback (most recent call last):\n  File "t.py", line 3, in <module>\n'
        "    xm.save(torch.tensor(1), p)\nRuntimeError: Check failed: HasValue() \n"
        "buffer with shape s64[] on device CPU:0 is deleted\n"
    )
    result = triage(log_from_text(log), kb_of(a, b))
    assert not result.ambiguous
    assert [(m.id, m.strength, m.group) for m in result.matches] == [
        ("donate-a", "strong", ["donate-a", "donate-b"]),
        ("donate-b", "strong", ["donate-a", "donate-b"]),
    ]
    assert result.matches[0].record["tells_apart"]["en"] == "how to tell donate-a"


@pytest.mark.parametrize(
    "paste",
    [
        '> Traceback (most recent call last):\n>   File "/usr/lib/python3.11/site-packages/torch_xla/experimental/'
        'spmd_fully_sharded_data_parallel.py", line 121, in __init__\n>     x = SpmdFullyShardedDataParallel(m)\n'
        "> TypeError: unhashable type: &#39;list&#39;\n",
        'Traceback (most recent call last): File "/u/train.py", line 10, in <module> model = SpmdFullyShardedDataParallel(model) '
        'File "/site-packages/torch_xla/experimental/spmd_fully_sharded_data_parallel.py", line 121, in __init__ x = 1\n'
        "TypeError: unhashable type: 'list'\r\n",
    ],
)
def test_pastes_reformatted_by_a_tracker_are_read_like_the_original(paste):
    (m,) = triage(log_from_text(paste), kb_of(SCALAR_LIKE)).matches
    assert m.strength == "strong"


# -- versions and advice --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,xla,torch,where",
    [
        ("torch==2.5.1\ntorch-xla==2.5.1+cxx11\n", "2.5.1+cxx11", "2.5.1", "pip freeze"),
        ("Package    Version\ntorch      2.7.0\ntorch-xla  2.7.0\n", "2.7.0", "2.7.0", "pip list"),
        (">>> torch_xla.__version__\n'2.8.0'\n", "2.8.0", None, "printed version"),  # a REPL session
        ("torch_xla.__version__ = '2.8.0'\n", "2.8.0", None, "printed version"),
        (
            '  File "/venv/lib/python3.11/site-packages/torch_xla-2.6.0.dist-info/RECORD"\n',
            "2.6.0",
            None,
            "wheel or install path",
        ),
        ("Successfully installed torch-2.6.0 torch_xla-2.6.1\n", "2.6.1", "2.6.0", "pip install"),
    ],
)
def test_versions_read_from_the_log(text, xla, torch, where):
    f = facts(text)
    assert (f.torch_xla_version, f.torch_version, f.version_source) == (xla, torch, where)


def test_a_notebooks_frames_are_read_in_the_order_shown():
    """Kaggle and Jupyter (IPython 8) and Colab (IPython 7, copied from the page as a Markdown link) print frames
    in their own way; a record's frame evidence reads them as a script's."""
    script = '  File "/x/torch_xla/distributed/xla_multiprocessing.py", line 3, in spawn\n    run()\n'
    ipython8 = "File /x/torch_xla/core/xla_model.py:197, in xla_device(n, devkind)\n--> 197 return f()\n"
    ipython7 = "[/x/torch_xla/runtime.py](https://localhost:8080/#) in wrapper(*args, **kwargs)\n---> 82 return fn()\n"
    f = facts(script + ipython8 + ipython7)
    assert [(fr.base, fr.function, fr.source) for fr in f.frames] == [
        ("xla_multiprocessing.py", "spawn", "run()"),
        ("xla_model.py", "xla_device", ""),
        ("runtime.py", "wrapper", ""),
    ]
    assert all(f.text[fr.pos :].startswith(fr.path) for fr in f.frames[1:])
    # a frame that shows no source line (importlib's frozen ones) leaves the next frame a frame
    frozen = facts(
        '  File "<frozen importlib._bootstrap>", line 219, in _call_with_frames_removed\n'
        '  File "/x/torch_xla/__init__.py", line 41, in <module>\n    import _XLAC\n'
    )
    assert [(fr.base, fr.source) for fr in frozen.frames] == [
        ("<frozen importlib._bootstrap>", ""),
        ("__init__.py", "import _XLAC"),
    ]


def test_advice_follows_the_measured_matrix():
    codes = {}
    for version in ("2.5.1", "2.7.0", "2.3.0", None):
        (m,) = triage(log_from_text(TRACEBACK), [SCALAR_LIKE], torch_xla=version).matches
        codes[version] = m.advice["code"]
        text = advice_text(m)
        if version == "2.5.1":
            assert (
                text == "torch_xla 2.5.1 shows this bug (measured: reproduced). Fixed in 2.7.0: upgrade, or use the workaround."
            )
        if version == "2.7.0":
            assert "should not show it" in text and "xlakb repro fake-bug --torch-xla 2.7.0" in text
    assert codes == {"2.5.1": "known-bug", "2.7.0": "measured-fixed", "2.3.0": "not-measured", None: "no-version"}
    # the version in the log is used when none is given; a local build tag does not hide the release
    (m,) = triage(log_from_text("torch-xla==2.5.1+cxx11\n" + TRACEBACK), [SCALAR_LIKE]).matches
    assert m.advice == {"code": "known-bug", "version": "2.5.1", "fixed_in": "2.7.0"}
    assert "修复" in advice_text(m, "zh")


# -- bad input ---------------------------------------------------------------------------------------
def _cli(*args, stdin=None, root=REPO):
    return subprocess.run(
        [sys.executable, "-m", "xlakb", "--root", str(root), "triage", *args],
        input=stdin,
        capture_output=True,
        env=os.environ.copy(),
    )


@pytest.mark.parametrize(
    "content,said",
    [
        (b"", "the log is empty"),
        (b"  \n\n", "the log is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)), "binary data, not a text log"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, content, said):
    path = tmp_path / "crash.log"
    path.write_bytes(content)
    r = _cli(str(path))
    err = r.stderr.decode()
    assert r.returncode == 2 and said in err and str(path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_file_and_folder_exit_2(tmp_path):
    for target, said in ((tmp_path / "nope.log", "cannot read"), (tmp_path, "is a folder")):
        r = _cli(str(target))
        assert r.returncode == 2 and said in r.stderr.decode()


def test_invalid_utf8_is_read_with_a_note(tmp_path):
    path = tmp_path / "crash.log"
    path.write_bytes(TRACEBACK.encode().replace(b"Traceback", b"Trace\xff\xfeback"))
    log = read_log_file(path)
    assert any("invalid UTF-8 replaced" in n for n in log.notes)
    r = _cli(str(path))
    assert r.returncode in (0, 1) and b"invalid UTF-8 replaced" in r.stderr


def test_a_huge_log_is_streamed(tmp_path):
    """Over 64 MiB: read as a stream, keeping head, tail and the lines that carry evidence."""
    path = tmp_path / "big.log"
    filler = ("step %d loss 0.1234 lr 0.001 throughput 123.4 samples/s\n" * 1000).encode()
    with open(path, "wb") as f:
        f.write(b"import torch_xla\n")
        for i in range(1500):  # ~80 MB of noise
            f.write(filler)
        f.write(TRACEBACK.encode())
    log = read_log_file(path)
    assert log.size > 64 << 20 and len(log.text) <= 17 << 20
    assert any("read as a stream" in n for n in log.notes)
    assert triage(log, [SCALAR_LIKE]).matches[0].strength == "strong"


# -- the command line -------------------------------------------------------------------------------------
def _kb_with(kb, signatures, matrix=None):
    path = fake_record(kb)
    data = yaml.safe_load(path.read_text())
    data["signatures"] = signatures
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    if matrix:
        (kb / "bisect" / "fake-bug").mkdir(parents=True, exist_ok=True)
        (kb / "bisect" / "fake-bug" / "matrix.json").write_text(
            json.dumps({"results": [{"candidate": v, "kind": "release", "verdict": r} for v, r in matrix.items()]})
        )


def test_cli_text_json_and_exit_codes(kb):
    _kb_with(
        kb,
        [
            {"message": "unhashable type: 'list'"},
            {"frame": {"file": r"spmd_fully_sharded_data_parallel\.py"}},
            {"call": r"SpmdFullyShardedDataParallel\("},
        ],
        {"2.5.1": "reproduced"},
    )
    r = _cli("-", stdin=("torch-xla==2.5.1\n" + TRACEBACK).encode(), root=kb)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stdout
    assert out.startswith("torch_xla 2.5.1 (from the log: pip freeze)")
    assert "1. fake-bug [fixed] — Fake bug for tests  (strong, score 7)" in out
    assert "torch_xla 2.5.1 shows this bug (measured: reproduced). Fixed in 2.6.0" in out
    zh = _cli("-", "--lang", "zh", stdin=TRACEBACK.encode(), root=kb).stdout.decode()
    assert "强匹配" in zh and "升级假包" in zh
    zh = _cli("-", "--lang", "zh", stdin=b"RuntimeError: x\n", root=kb).stdout.decode()
    assert "在标准输入中没有匹配到已知问题" in zh and "standard input" not in zh
    j = json.loads(_cli("-", "--json", "--torch-xla", "2.5.1", stdin=TRACEBACK.encode(), root=kb).stdout)
    assert j["matches"][0]["id"] == "fake-bug" and j["matches"][0]["strength"] == "strong"
    assert j["torch_xla"] == "2.5.1" and j["version_source"] == "given"
    # an error alone that plain Python prints too: related, not a match, exit 1; with a search link upstream
    r = _cli("-", stdin=b"import torch_xla\nTypeError: unhashable type: 'list'\n", root=kb)
    out = r.stdout.decode()
    assert r.returncode == 1 and "Related records" in out and "no known record matches" in out
    assert "https://github.com/pytorch/xla/issues?q=is%3Aissue%20%22TypeError%3A%20unhashable%20type%22" in out
    # the frame alone: possible
    r = _cli(
        "-",
        stdin=TRACEBACK.replace("model = SpmdFullyShardedDataParallel(model, mesh=mesh)", "model = wrap(model)").encode(),
        root=kb,
    )
    assert r.returncode == 1 and "Possible matches" in r.stdout.decode()
    # no torch_xla at all
    plain = TRACEBACK.replace("/torch_xla/experimental/spmd_fully_sharded_data_parallel.py", "/lib/wrap.py")
    r = _cli("-", stdin=plain.replace("SpmdFullyShardedDataParallel", "Wrap").encode(), root=kb)
    assert r.returncode == 1 and r.stdout.decode().startswith("nothing in standard input is known to come from torch_xla")


def test_validate_rejects_message_only_and_python_only_regexes(kb):
    _kb_with(kb, ["unhashable type: 'list'", {"message": "(?i)megascale"}])
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "signatures: only messages: a generic error string alone is no evidence" in r.stdout
    assert "signatures[1]: '(?i)' is Python-only regex syntax" in r.stdout
    triggers = [{"call": r"SpmdFullyShardedDataParallel\("}, {"env": {"name": "XLA_USE_SPMD"}}]
    _kb_with(kb, ["unhashable type: 'list'", *triggers])
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 1 and "signatures[0]: message unhashable type: 'list' matches more than this bug" in r.stdout
    shared = {"message": "unhashable type: 'list'", "shared": "Python's own error for any list used as a key"}
    _kb_with(kb, [shared, *triggers])
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


# -- the corpora -------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _kb():
    """The real knowledge base as both engines read it: records (genericity measured) and the catalog."""
    return engine(export(REPO))


def _records() -> list[dict]:
    return _kb()[0]


def run(text_or_log, version=None):
    records, catalog = _kb()
    log = text_or_log if not isinstance(text_or_log, str) else log_from_text(text_or_log)
    return triage(log, records, catalog=catalog, torch_xla=version)


POSITIVES = sorted((CORPUS / "positive").glob("*.log"))
BACKGROUND = sorted((REPO / "src" / "xlakb" / "data" / "background").glob("*.log"))
NEGATIVES = BACKGROUND + sorted((CORPUS / "negative" / "measured").glob("*.log"))
PASTED_INDEX = yaml.safe_load((CORPUS / "pasted" / "index.yaml").read_text("utf-8"))["pastes"]
SHAPES = {"one-line", "tail", "traceback", "excerpt", "reformatted", "other-library", "look-alike", "log"}


def lookalikes(rid: str) -> set[str]:
    """The records declared look-alikes of ``rid`` (their pastes cannot be told apart), itself included."""
    rec = next((r for r in _records() if r["id"] == rid), {"lookalikes": []})
    return {rid, *rec["lookalikes"]}


def test_the_corpora_are_big_enough_and_well_formed():
    assert len(BACKGROUND) >= 20
    assert POSITIVES, "no positive logs: run tests/data/triage/regenerate.py"
    ids = {r["id"] for r in _records()}
    assert len(PASTED_INDEX) >= 80
    files = {p.name for p in (CORPUS / "pasted").glob("*.txt")}
    assert {e["file"] for e in PASTED_INDEX} == files, "every paste is listed once in pasted/index.yaml"
    for e in PASTED_INDEX:
        assert e["url"].startswith("https://"), e
        assert e["expect"] == "none" or e["expect"] in ids, e
        assert e["shape"] in SHAPES, e
        assert (CORPUS / "pasted" / e["file"]).read_text("utf-8").strip(), e
    shapes = {e["shape"] for e in PASTED_INDEX}
    assert {"one-line", "tail", "look-alike", "other-library", "reformatted"} <= shapes
    assert sum(e["expect"] != "none" for e in PASTED_INDEX) >= 20


@pytest.mark.parametrize("path", POSITIVES, ids=lambda p: p.stem)
def test_every_positive_lists_its_record_first_and_no_other_strongly(path):
    rid, release = path.stem.split("@")
    result = run(read_log_file(path))
    assert {m.id for m in result.strong} <= lookalikes(rid), result_json(result)  # no strong match is wrong
    if result.matches:
        assert result.matches[0].id in lookalikes(rid), result_json(result)
        assert result.matches[0].advice["code"] in ("known-bug", "no-version")
    else:  # its evidence is all shared with other bugs: it is named among the related records
        assert rid in {m.id for m in result.related}, result_json(result)
    if result.torch_xla_version:
        assert result.torch_xla_version.split("+")[0] == release


@pytest.mark.parametrize("path", NEGATIVES, ids=lambda p: p.stem)
def test_no_negative_gets_a_strong_match(path):
    result = run(read_log_file(path))
    assert not result.strong, result_json(result)


@pytest.mark.parametrize("entry", PASTED_INDEX, ids=lambda e: e["file"])
def test_no_paste_gets_a_wrong_strong_match(entry):
    result = run(read_log_file(CORPUS / "pasted" / entry["file"]))
    allowed = lookalikes(entry["expect"]) if entry["expect"] != "none" else set()
    assert {m.id for m in result.strong} <= allowed, (entry["url"], result_json(result))


@pytest.mark.parametrize("entry", [e for e in PASTED_INDEX if e["expect"] != "none"], ids=lambda e: e["file"])
def test_a_paste_of_a_known_bug_lists_its_record_first(entry):
    result = run(read_log_file(CORPUS / "pasted" / entry["file"]))
    assert result.matches and result.matches[0].id in lookalikes(entry["expect"]), (entry["url"], result_json(result))


# -- what people paste, as the issue tracker shows it ------------------------------------------------------
@pytest.mark.parametrize(
    "line, rid",
    [
        (
            "RuntimeError: 0 <= device.index() && device.index() < ...device_ready_queues_.size()) INTERNAL ASSERT FAILED at "
            '".../autograd/engine.cpp":1342',
            "cpu-backward-before-xla-autograd-assert",
        ),
        ("RuntimeError: Expecting scope to be empty but it is train_loop.1", "dynamo-profiler-trace-scope-reset"),
    ],
)
def test_one_line_pastes_of_known_bugs_name_them_first(line, rid):
    result = run(line)
    assert result.matches and result.matches[0].id == rid, result_json(result)


def test_the_dtensor_traceback_without_a_torch_xla_frame_names_its_record():
    """The shape of upstream #8534's traceback: DTensor's own frames and torch's functionalization assert,
    no torch_xla frame (taken from the record's reproducer log, its torch_xla frames removed)."""
    log = sorted((CORPUS / "positive").glob("dtensor-parallelize-module-functional-assert@*.log"))[-1].read_text("utf-8")
    lines = log.splitlines()
    keep, skip = [], False
    for line in lines:
        if line.lstrip().startswith("File "):
            skip = "torch_xla" in line
        if not skip and "torch_xla" not in line and "torch-xla" not in line:
            keep.append(line)
    tail = "\n".join(keep)
    assert "torch_xla" not in tail and "isFunctionalTensor" in tail
    result = run(tail)
    assert result.matches and result.matches[0].id == "dtensor-parallelize-module-functional-assert", result_json(result)


HASVALUE_OTHER_BUG = """Traceback (most recent call last):
  File "/home/user/zero1_train.py", line 212, in <module>
    xm.mark_step()
  File "/usr/local/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1046, in mark_step
    torch_xla._XLAC._xla_step_marker(
RuntimeError: ./torch_xla/csrc/runtime/pjrt_computation_client.h:179 : Check failed: HasValue()
*** Begin stack trace ***
	tsl::CurrentStackTrace()
	torch_xla::runtime::PjRtComputationClient::PjRtData::GetHandle()
	torch::lazy::LazyGraphExecutor::RunPostOrder(std::vector<torch::lazy::Value> const&, torch::lazy::LazyGraphExecutor::SyncTensorCollection*)
*** End stack trace ***
"""


def test_a_generic_check_from_another_bug_gets_no_strong_match():
    result = run(HASVALUE_OTHER_BUG)
    assert not result.strong, result_json(result)
    named = {m.id for m in result.matches} | {m.id for m in result.related}
    assert {"datacache-alias-hasvalue-check", "xm-save-aliasing-donates-live-buffer"} <= named
    assert all(m.strength != "strong" for m in result.matches)


def test_the_search_link_holds_only_phrases_every_report_shares():
    """GitHub matches a quoted phrase word for word: the user's path, numbers and names are cut out, and
    the pieces on either side of a cut are phrases of their own (no "RuntimeError: : Check" that no other
    report has)."""
    from urllib.parse import unquote

    result = run(
        "RuntimeError: /home/me/xla/torch_xla/csrc/helpers.cpp:104 : Check failed: min_shape_dim <= dim && dim <= max_shape_dim\n"
    )
    q = unquote(result.search.split("?q=", 1)[1])
    assert q == 'is:issue "RuntimeError" "Check failed: min_shape_dim <= dim && dim <= max_shape_dim"', q
    q = unquote(run("ValueError: got 3 tensors of rank 2 for mesh 'dp'\n").search.split("?q=", 1)[1])
    assert q == 'is:issue "ValueError: got" "tensors of rank" "for mesh"', q


def test_a_one_line_check_is_answered_with_where_it_comes_from():
    result = run("Check failed: xtensor")
    assert result.torch_xla_signs and "a message only torch_xla prints" in result.torch_xla_signs
    (origin,) = [o for o in result.origins if o.row["text"] == "Check failed: xtensor"]
    places = {(p["file"], p["function"]) for p in origin.row["places"]}
    assert ("torch_xla/csrc/aten_xla_bridge.cpp", "GetXlaTensor") in places
    assert origin.row["releases"].startswith("2.1.0") and origin.row["generic"]  # GetXlaTensor: a helper called everywhere
    assert not result.strong
    assert result.search.startswith("https://github.com/pytorch/xla/issues?q=")
    from xlakb.triage_report import report

    text = "\n".join(report(result, source="paste"))
    assert "torch_xla/csrc/aten_xla_bridge.cpp GetXlaTensor" in text and "in 2.1.0" in text


def test_new_from_log_takes_signatures_a_record_can_use(kb, tmp_path):
    path = tmp_path / "crash.log"
    path.write_text(TRACEBACK)
    r = subprocess.run(
        [sys.executable, "-m", "xlakb", "--root", str(kb), "new", "my-bug", "--from-log", str(path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    data = yaml.safe_load((kb / "issues" / "my-bug.yaml").read_text())
    kinds = [next(iter(s)) for s in data["signatures"]]
    assert kinds[0] == "message" and "frame" in kinds and "call" in kinds
    frame = next(s["frame"] for s in data["signatures"] if "frame" in s)
    assert frame["file"] == r"spmd_fully_sharded_data_parallel\.py"
    import re

    # the message regex also matches another user's paste of the same error
    assert re.search(data["signatures"][0]["message"], "TypeError: unhashable type: 'dict'")
    r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(kb), "validate"], capture_output=True, text=True)
    assert "my-bug.yaml" not in r.stdout or "signatures" not in r.stdout, r.stdout


def test_a_generalised_attribute_error_keeps_its_type_and_attribute():
    """In Python's attribute error the quoted names are the code's, never a user's data; without them the
    line is every AttributeError, and a mined record's signature made of it took the one-line paste of
    upstream #8314 (`'ParallelLoader' object has no attribute '_loader'`) from its own record."""
    import re

    from xlakb.triage import _generalise

    mine = _generalise("AttributeError: 'int' object has no attribute 'device'")
    assert re.search(mine, "  AttributeError: 'int' object has no attribute 'device'")
    assert not re.search(mine, (CORPUS / "pasted" / "b-8314-one-line.txt").read_text())
    assert re.search(
        _generalise("AttributeError: module 'torch_xla._XLAC' has no attribute '_xla_foo' at 0x7f"),
        "AttributeError: module 'torch_xla._XLAC' has no attribute '_xla_foo' at 0x55",
    )
    assert re.search(_generalise("TypeError: unhashable type: 'list'"), "TypeError: unhashable type: 'dict'")


def test_every_reason_evidence_is_generic_reads_in_chinese():
    """The generic lists' reasons and the engine's own words, through the Chinese table of data/ui.yaml."""
    import re

    from xlakb.triage import GENERIC
    from xlakb.triage_report import reason

    han = re.compile(r"[\u4e00-\u9fff]")
    whys = [g["why"] for g in GENERIC["frames"] + GENERIC["messages"]]
    for text in (
        [f"an entry frame ({w})" for w in whys]
        + whys
        + [
            "also evidence of some-bug",
            "also evidence of some-bug in this paste",
            "also in an unrelated log (a.log)",
            "printed by a helper: a.cpp F (12 call sites)",
            "a frame of a helper: A::B (an accessor in a header)",
            "printed from 3 places",
        ]
    ):
        zh = reason(text, "zh")
        assert han.search(zh) and not re.search(r"\b(also|evidence|frame|printed|helper|every|any|call sites)\b", zh), (text, zh)


# -- whose problem it is -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "paste, layers, said",
    [
        # an XLA log line, with no torch_xla frame (the user cut the traceback)
        ("F0000 00:00:1 1 hlo_sharding.cc:1034] Check failed: IsTuple()\n", ("xla",), "may well be a torch_xla problem"),
        # torch's own message about the XLA backend
        ("RuntimeError: Unimplemented backend XLA\n", ("torch",), "may well be a torch_xla problem"),
        ("AssertionError\n    assert outputs.is_cuda or outputs.device.type == 'xla'\n", ("torch",), "lines of torch, about"),
        # the TPU runtime and its memory
        (
            "RuntimeError: Resource exhausted: From /job:tpu_worker/replica:0/task:0:\nHBM capacity 8.00G\n",
            ("tpu",),
            "TPU runtime",
        ),
        # the name torch_xla gives its graphs
        ("Rerun with --xla_dump_to: *module_0001.SyncTensorsGraph.68.*\n", ("torch_xla",), "may well be"),
        # TSL's own fatal log line and StatusOr wording, about a TPU device file
        (
            "2023-06-27 04:35:24.456016: F tensorflow/tsl/platform/statusor.cc:33] Attempting to fetch value instead "
            "of handling error PERMISSION_DENIED: open(/dev/accel1): Operation not permitted\n",
            ("xla", "tpu"),
            "may well be a torch_xla problem",
        ),
        # torch before 1.6 named the XLA dispatch key XLATensorId
        (
            "RuntimeError: Could not run 'aten::empty_strided' with arguments from the 'XLATensorId' backend.\n",
            ("torch",),
            "may well be a torch_xla problem",
        ),
        # TensorFlow's own fatal line, outside TSL, is no layer of torch_xla's
        (
            "2023-06-27 04:35:24.456016: F tensorflow/core/framework/op_kernel.cc:9] Check failed: ok\n",
            (),
            "the paste alone cannot tell whether this is a torch_xla problem",
        ),
        # nothing of torch_xla's layers: not a torch_xla problem
        (
            "Traceback (most recent call last):\nKeyError: 'foo'\n",
            (),
            "the paste alone cannot tell whether this is a torch_xla problem",
        ),
    ],
)
def test_not_a_torch_xla_problem_only_when_no_layer_of_it_printed_a_line(paste, layers, said):
    from xlakb.triage_report import report

    result = triage(
        log_from_text(paste, "paste"),
        [],
    )
    assert result.layers == layers
    assert said in "\n".join(report(result, source="paste"))


def test_a_script_of_a_pytorch_xla_checkout_is_a_sign_of_torch_xla():
    """Running a test or benchmark of a pytorch/xla checkout by hand is a torch_xla program, whatever the paste
    shows of it; openxla's own ``xla/tests`` folder is not."""
    checkout = (
        'Traceback (most recent call last):\n  File "pytorch/xla/test/test_dynamic_shape_models.py", line 78, in <module>\n'
    )
    bench = '  File "xla/benchmarks/experiment_runner.py", line 945, in <module>\n'
    other = '  File "/src/openxla/xla/tests/run.py", line 1, in <module>\n'
    for paste, signed in ((checkout, True), (bench, True), (other, False)):
        result = triage(log_from_text(paste, "paste"), [])
        assert ("a script of a pytorch/xla checkout" in result.torch_xla_signs) is signed, paste


def test_another_framework_on_xla_is_named_not_called_torch_xla_s():
    from xlakb.triage_report import report

    paste = '  File "/x/jax/_src/dispatch.py", line 1, in f\nF0000 hlo_instruction.h:1] Check failed: has_sharding()\n'
    result = triage(
        log_from_text(paste, "paste"),
        [],
    )
    text = "\n".join(report(result, source="paste"))
    assert result.other_backends == ("JAX",) and "xla" in result.layers
    assert "the paste shows JAX and nothing of torch_xla" in text and "may well be" not in text


def test_a_pattern_is_skipped_only_where_it_cannot_match():
    """The needles that let triage skip a pattern on a big log (speed only) never skip one that matches: every
    record signature, layer sign and other-backend pattern, on every log and paste of the corpora; an
    alternation gives one needle per alternative, a pattern that ignores case none."""
    import re

    from xlakb.triage import _LAYERS, GENERIC, _absent, _needles

    assert _needles(r"(torch\.|\.)sigmoid\(|nn\.Sigmoid\(") == ("sigmoid(", "nn.Sigmoid(")
    assert _needles(r"\bxpu\b|intel_extension|\bipex\b") == ("xpu", "intel_extension", "ipex")
    assert _needles(r"(?i)segmentation fault") == _needles(r"ab|\d+") == ()
    patterns = [(p.pattern, p.flags) for _, p in _LAYERS] + [(b["pattern"], 0) for b in GENERIC["other_backends"]]
    patterns += [(s["pattern"], re.M) for r in _records() for s in r["signatures"] if s["kind"] in ("message", "check", "call")]
    texts = [p.read_text("utf-8") for p in sorted(CORPUS.rglob("*")) if p.suffix in (".txt", ".log")]
    assert len(patterns) > 200 and len(texts) > 300
    skipped = 0
    for pattern, flags in patterns:
        rx = re.compile(pattern, flags)
        for text in texts:
            if _absent(pattern, text, flags):
                skipped += 1
                assert rx.search(text) is None, (pattern, text[:80])
    assert skipped > len(patterns) * len(texts) // 2


STACK_ALONE = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 40, in <module>\n'
    "    loss = model(x).sum()\n"
    '  File "/venv/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1055, in mark_step\n'
    "    torch_xla._XLAC._xla_step_marker(\n"
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stack_whose_message_was_left_out_is_asked_for_the_message(lang):
    """A paste of a printed stack (Python frames, or a native stack's lines) with no error line says nothing of
    which bug it is: when nothing matches, the answer asks for the message (the last line of a traceback, the
    check or log line above a C++ stack). A traceback that ends in its exception, even one raised with no message,
    is not asked."""
    from xlakb.triage_report import report

    native = "*** Begin stack trace ***\n\ttsl::CurrentStackTrace()\n\ttorch_xla::XLAGraphExecutor::SyncTensorsGraph()\n"
    gdb = "#0  0x00007f7d5588a226 in std::__copy_move_a2<false, float const*, float*> (__first=<optimized out>)\n"
    for stack in (STACK_ALONE, native, gdb):
        assert facts(stack).stack_only, stack
    for ended in (
        STACK_ALONE + "RuntimeError: Check failed: xtensor\n",
        STACK_ALONE + "AssertionError\n",
        "F0000 00:00:1.0 7 debug_macros.h:20] Non-OK-status: status: INTERNAL: boom\n" + native,
        "torch_xla 2.5.1 installed fine\n",
    ):
        assert not facts(ended).stack_only, ended
    result = triage(log_from_text(STACK_ALONE), [])
    assert result.stack_only and result_json(result)["stack_only"] is True
    asked = "paste it too" if lang == "en" else "请把它也贴上"
    assert any(asked in line for line in report(result, source="crash.log", lang=lang, reported=[]))
    # a stack a stored report shows is answered by that report: nothing is asked
    from xlakb.knowledge import upstream_clusters
    from xlakb.triage import reported_hits
    from xlakb.upstream import store
    from xlakb.upstream.signature import stack_text

    shown = stack_text(next(r for r in store.load(REPO).values() if r.frames).frames)
    known = triage(log_from_text(shown), [])
    hits = reported_hits(known, shown, upstream_clusters(REPO))
    assert known.stack_only and hits
    assert not any(asked in line for line in report(known, source="crash.log", lang=lang, reported=hits))
    ended = triage(log_from_text(STACK_ALONE + "RuntimeError: frobnicated\n"), [])
    assert not any(asked in line for line in report(ended, source="crash.log", lang=lang, reported=[]))


SAVE_STACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 3, in <module>\n'
    '    xm.save(state, "a.pt")\n'
    '  File "/usr/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1042, in save\n'
    "    data = _maybe_convert_to_cpu(data, convert=should_write_data)\n"
    '  File "/usr/lib/python3.10/site-packages/torch_xla/core/xla_model.py", line 1070, in _maybe_convert_to_cpu\n'
    "    return ToXlaTensorArena(convert_fn, select_fn).transform(data)\n"
    '  File "/usr/lib/python3.10/site-packages/torch_xla/utils/utils.py", line 206, in _for_each_instance_rewrite\n'
    "    result.__dict__[k] = v\n"
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stack_alone_that_leaves_torch_xla_in_a_records_frame_lists_those_records(lang):
    """A stack-only paste whose innermost torch_xla frame is a record's specific frame signature lists the
    records whose bugs fail there (with the frame and call signatures each shows), and names none of them: no
    message says which. A comprehension's frame stands for the function it is written in. With its message the
    record is named as before and nothing is listed; a stack that leaves torch_xla elsewhere, or one that ends in
    an error line, lists nothing."""
    from xlakb.triage_report import report

    records = _records()
    stack = triage(log_from_text(SAVE_STACK), records)
    assert stack.stack_only and not stack.matches
    listed = [m.id for m in stack.stacked]
    assert set(listed) == {"xm-save-class-object-mappingproxy-typeerror", "tuple-namedtuple-becomes-list-loader-xm-save"}
    for m in stack.stacked:
        assert m.strength == "stack"
        assert any(h.signature.kind == "frame" and h.line == 8 for h in m.hits), m.hits  # the frame it stops in
        assert any(h.signature.kind == "call" for h in m.hits)
    assert [m["id"] for m in result_json(stack)["stacked"]] == listed
    lines = report(stack, source="crash.log", lang=lang, reported=[])
    header = "The stack leaves torch_xla where" if lang == "en" else "调用栈离开 torch_xla 的位置"
    at = next(i for i, line in enumerate(lines) if header in line)
    assert {line.split()[1] for line in lines[at + 1 :] if line.startswith("  - ")} >= set(listed)
    # the message names the bug; nothing is listed then
    told = triage(log_from_text(SAVE_STACK + "TypeError: 'mappingproxy' object does not support item assignment\n"), records)
    assert told.matches[0].id == "xm-save-class-object-mappingproxy-typeerror" and told.matches[0].strength == "strong"
    assert not told.stacked and "stacked" in result_json(told) and not result_json(told)["stacked"]
    # a comprehension's frame is part of the function it is written in (Python 3.12 shows none)
    comprehension = SAVE_STACK + (
        '  File "/usr/lib/python3.10/site-packages/torch_xla/utils/utils.py", line 207, in <listcomp>\n    [x for x in v]\n'
    )
    assert [m.id for m in triage(log_from_text(comprehension), records).stacked] == listed
    # a stack that leaves torch_xla in another function, or one with an error no record knows, lists nothing
    elsewhere = SAVE_STACK.replace("_for_each_instance_rewrite", "_frobnicate")
    assert triage(log_from_text(elsewhere), records).stack_only and not triage(log_from_text(elsewhere), records).stacked
    assert not triage(log_from_text(SAVE_STACK + "RuntimeError: frobnicated\n"), records).stacked


def test_a_frame_signature_with_a_directory_names_that_file_only():
    """A frame signature's file pattern with a ``/`` is matched against the path's last components: it names
    torch_xla's ``utils.py`` and not another package's."""
    import re

    from xlakb.triage import Frame, in_file

    def frame(path):
        return Frame(path, re.split(r"[/\\]", path)[-1], "f", "", 0)

    rx = re.compile(r"torch_xla/utils/utils\.py")
    assert in_file(rx, frame("/usr/lib/python3.10/site-packages/torch_xla/utils/utils.py"))
    assert in_file(rx, frame("C:\\py\\Lib\\site-packages\\torch_xla\\utils\\utils.py"))
    assert not in_file(rx, frame("/usr/lib/python3.10/site-packages/torch/utils/utils.py"))
    assert not in_file(rx, frame("/x/not_torch_xla/utils/utils.py"))
    assert in_file(re.compile(r"utils\.py"), frame("/x/torch/utils/utils.py"))


def test_torchs_own_truth_value_error_names_a_record_only_raised_in_its_frame():
    """``Boolean value of Tensor with more than one value is ambiguous`` is torch's error for any multi-element
    tensor used as a truth value, on every backend: alone it names no record (only related); raised in the record's
    own frame (gradient_accumulation's) it is that bug, as its reproducer logs show."""
    records = _records()
    alone = "RuntimeError: Boolean value of Tensor with more than one value is ambiguous\n"
    result = triage(log_from_text(alone), records)
    assert result.matches == [] and "grad-acc-existing-grad-ambiguous-bool" in [m.id for m in result.related]
    for log in sorted((CORPUS / "positive").glob("grad-acc-existing-grad-ambiguous-bool@*.log")):
        (first, *_) = triage(log_from_text(log.read_text("utf-8")), records).matches
        assert first.id == "grad-acc-existing-grad-ambiguous-bool" and first.strength == "strong", log.name
