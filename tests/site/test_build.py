"""The site builds strictly from the records, in both languages, with a search index that
splits Chinese words and error messages the way readers type them."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sitetest import (
    BISECTED,
    DTENSOR,
    HAS_SHARDING,
    MULTISLICE,
    REPO,
    SCALAR,
    UNMEASURED,
    bisected_ids,
    english_outside_code,
    h1_text,
    load,
    measured_ids,
    page_tokens,
    record_ids,
    regexes_outside_details,
    shown_title,
)

import sitesynthetic as synthetic
from xlakb.errors import XlakbError
from xlakb.sitegen.build import build_site


def read(path: Path) -> str:
    return path.read_text("utf-8")


def test_every_record_has_a_page_in_both_languages(layout, built):
    ids = record_ids(layout)
    assert len(ids) >= 17  # 12 generated + 4 first records + the unmeasured one
    for rid in ids:
        data = load(layout, rid)
        en = read(built / "records" / rid / "index.html")
        zh = read(built / "zh" / "records" / rid / "index.html")
        assert h1_text(en) == shown_title(data["title"]["en"])
        assert h1_text(zh) == shown_title(data["title"]["zh"])
        assert '<html lang="en"' in en and '<html lang="zh-Hans"' in zh
        for page in (en, zh):
            # summary, the reproducer's highlighted source, upstream links, the how-to-add link
            assert 'id="symptoms"' in page and 'id="root-cause"' in page and 'id="workaround"' in page
            trigger = data["reproducer"].get("trigger")
            if trigger:  # a mined record: the upstream test at its commit, linked, never its code
                t = trigger
                assert f"https://github.com/{t['repo']}/blob/{t['commit']}/{t['path']}#L{t['line']}" in page
                assert f"def {t['test'].rsplit('.', 1)[-1]}(" not in page
            else:
                assert 'class="highlight"' in page and data["reproducer"]["path"] in page
            for number in data["upstream"]["issues"][:1]:  # a bug known only from measurement has none yet
                assert f"https://github.com/pytorch/xla/issues/{number}" in page
            assert 'href="../../contributing/"' in page
            assert f'data-status="{data["status"]}"' in page


def test_pages_follow_the_record_text(layout, built):
    data = load(layout, HAS_SHARDING)
    en = read(built / "records" / HAS_SHARDING / "index.html")
    zh = read(built / "zh" / "records" / HAS_SHARDING / "index.html")
    for symptom in data["symptoms"]["zh"]:
        assert html.escape(symptom.split("`")[0][:8], quote=False) in zh
    for key, value in data["environment"].get("env", {}).items():
        assert f"{key}={value}" in en
        assert f"{key}={value}" in zh  # the run command names the record's environment


def test_run_commands_name_an_affected_and_a_fixed_release(layout, built):
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    checked = 0
    for rid in record_ids(layout):
        data = load(layout, rid)
        matrix_path = layout / "bisect" / rid / "matrix.json"
        verdicts = (
            {r["candidate"]: r["verdict"] for r in json.loads(read(matrix_path))["results"]} if matrix_path.is_file() else {}
        )
        page = html.unescape(read(built / "records" / rid / "index.html"))
        releases = re.findall(rf"xlakb repro {re.escape(rid)} --torch-xla ([0-9][0-9.]*)", re.sub(r"<[^>]+>", "", page))
        assert releases, rid
        affected = releases[0]
        # a measured release when there is one, else one the record claims
        assert verdicts.get(affected) == "reproduced" or (
            "reproduced" not in verdicts.values() and Version(affected) in SpecifierSet(data["versions"]["affected"])
        ), (rid, affected)
        if len(releases) > 1:
            fixed = releases[1]
            assert verdicts.get(fixed) == "not-reproduced" or (
                "not-reproduced" not in verdicts.values() and Version(fixed) >= Version(data["versions"]["fixed_in"])
            ), (rid, fixed)
        checked += 1
    assert checked == len(record_ids(layout))


def test_proxy_reproducers_say_what_they_check(layout, built):
    proxies = [rid for rid in record_ids(layout) if load(layout, rid)["reproducer"]["fidelity"] == "proxy"]
    assert proxies
    for rid in proxies:
        checks = load(layout, rid)["reproducer"]["proxy_checks"]
        for lang, prefix in (("en", ""), ("zh", "zh/")):
            page = read(built / prefix / "records" / rid / "index.html")
            assert 'class="admonition note"' in page
            head = re.split(r"[:：`]", checks[lang])[0]  # the words before the first colon or code span
            assert html.escape(head, quote=False) in page


def test_matrix_renders_one_cell_per_release_with_date(layout, built):
    labels = {"reproduced": "复现", "not-reproduced": "未复现", "untestable": "无法测试", "error": "出错"}
    ids = measured_ids(layout)
    assert BISECTED in ids
    for rid in ids:
        matrix = json.loads(read(layout / "bisect" / rid / "matrix.json"))
        for prefix in ("", "zh/"):
            page = read(built / prefix / "records" / rid / "index.html")
            table = re.search(r'<table class="xlakb-matrix".*?</table>', page, re.S).group(0)
            rows = re.findall(r'<tr data-candidate="([^"]+)">(.*?)</tr>', table, re.S)
            assert [c for c, _ in rows] == [r["candidate"] for r in matrix["results"]]
            for (candidate, row), result in zip(rows, matrix["results"]):
                assert f'data-verdict="{result["verdict"]}"' in row
                assert result["measured_at"][:10] in row
                if prefix:
                    assert labels[result["verdict"]] in row


def test_unmeasured_record_says_so(built):
    assert "Not measured yet" in read(built / "records" / UNMEASURED / "index.html")
    assert "尚未实测" in read(built / "zh" / "records" / UNMEASURED / "index.html")
    assert "Not bisected yet" in read(built / "records" / UNMEASURED / "index.html")


def test_bisect_results_link_commits_and_prs(layout, built):
    ids = bisected_ids(layout)
    assert BISECTED in ids
    for rid in ids:
        repo = load(layout, rid)["upstream"]["repo"]
        page = read(built / "records" / rid / "index.html")
        for path in sorted((layout / "bisect" / rid).glob("bisect-*.json")):
            report = json.loads(read(path))
            for end in ("last_old", "first_new"):
                meta = (report.get(end) or {}).get("meta") or {}
                if meta.get("sha"):
                    url = meta.get("url") or f"https://github.com/{repo}/commit/{meta['sha']}"
                    assert f'href="{html.escape(url)}"' in page
                if meta.get("pr"):
                    url = meta.get("pr_url") or f"https://github.com/{repo}/pull/{meta['pr']}"
                    assert f'href="{html.escape(url)}">#{meta["pr"]}</a>' in page
            for commit in report.get("between", []):  # in text or in an attribute-safe form (quotes escaped)
                subject = commit["subject"]
                assert html.escape(subject, quote=False) in page or html.escape(subject) in page
            assert html.escape(report["command"], quote=False) in page or html.escape(report["command"]) in page


def test_language_switcher_points_at_the_same_record(layout, built):
    for rid in (SCALAR, DTENSOR):
        en = read(built / "records" / rid / "index.html")
        zh = read(built / "zh" / "records" / rid / "index.html")
        assert f'href="../../zh/records/{rid}/" hreflang="zh"' in en
        assert f'href="../../../records/{rid}/" hreflang="en"' in zh


def test_home_page_lists_every_record_with_filters(layout, built):
    ids = record_ids(layout)
    for lang, path in (("en", built / "index.html"), ("zh", built / "zh" / "index.html")):
        page = read(path)
        rows = re.findall(
            r'<tr data-id="([^"]+)" data-status="([^"]+)" data-source="([^"]+)" data-component="([^"]+)" '
            r'data-tags=" ([^"]*) "><td><a href="([^"]+)">',
            page,
        )
        assert sorted(r[0] for r in rows) == ids
        for rid, status, source, component, tags, href in rows:
            data = load(layout, rid)
            assert (status, source, component, tags.split()) == (
                data["status"],
                data.get("source", "hand"),
                data["component"],
                data["tags"],
            )
            assert href == f"records/{rid}/"
        for name in ("status", "component", "tag"):
            assert f'data-filter="{name}"' in page
        assert str(len(ids)) in page
    assert (built / "assets" / "javascripts" / "xlakb.js").is_file()


def test_tags_pages_list_records(layout, built):
    page = read(built / "tags" / "index.html")
    zh = read(built / "zh" / "tags" / "index.html")
    for tag in load(layout, SCALAR)["tags"]:
        assert f'id="tag:{tag}"' in page and f'id="tag:{tag}"' in zh
    assert f"../records/{SCALAR}/" in page and f"../records/{SCALAR}/" in zh


def test_search_index_per_language(indexes, layout):
    ids = record_ids(layout)
    en_pages, zh_pages = page_tokens(indexes["en"]), page_tokens(indexes["zh"])
    for rid in ids:
        assert f"records/{rid}/" in en_pages and f"records/{rid}/" in zh_pages
    han = re.compile(r"[\u4e00-\u9fff]")
    for doc in indexes["en"]["docs"]:
        assert not doc["location"].startswith("zh/")
        if doc["location"].startswith("records/"):
            # no Chinese, but for the glossary terms a record uses (listed in both languages)
            text = re.sub(r"<p>Terms \(English and Chinese\):.*?</p>", "", doc["title"] + doc["text"])
            assert not han.search(text), doc["location"]
    for rid in ids:
        doc = next(d for d in indexes["zh"]["docs"] if d["location"] == f"records/{rid}/")
        assert han.search(doc["title"]), rid  # the Chinese page, not an English fallback


def test_chinese_text_is_split_by_jieba_and_the_separator(indexes, layout):
    import jieba

    index = indexes["zh"]
    assert "\\u200b" in index["config"]["separator"]
    assert index["config"]["lang"] == ["en", "zh"]
    pages = page_tokens(index)
    for rid in record_ids(layout):
        title = load(layout, rid)["title"]["zh"]
        doc = next(d for d in index["docs"] if d["location"] == f"records/{rid}/")
        assert "\u200b" in doc["title"]  # jieba's zero-width spaces are in the index
        for run in re.findall(r"[\u4e00-\u9fff]+", title):
            words = jieba.lcut(run)
            assert all(w in pages[f"records/{rid}/"] for w in words), (rid, words)
        # the user dictionary keeps PyTorch/XLA terms whole (jieba alone cuts 复现|脚本, 规避|方法)
        assert {"复现脚本", "规避方法"} <= pages[f"records/{rid}/"]


def test_error_strings_are_words_of_the_right_record(indexes, layout):
    """An error's words index the records that print it, and no other record page."""
    printed_by = {
        word: sorted(f"records/{p.stem}/" for p in (layout / "issues").glob("*.yaml") if word in p.read_text("utf-8"))
        for word in ("unhashable", "has_sharding")
    }
    assert f"records/{SCALAR}/" in printed_by["unhashable"] and f"records/{HAS_SHARDING}/" in printed_by["has_sharding"]
    for lang in ("en", "zh"):
        pages = page_tokens(indexes[lang])
        assert {"unhashable", "type", "list"} <= pages[f"records/{SCALAR}/"]
        assert "has_sharding" in pages[f"records/{HAS_SHARDING}/"]
        # (the reported-upstream page quotes upstream's error lines too, each beside the record covering it)
        records = {p: toks for p, toks in pages.items() if p != "reported/"}
        for word, want in printed_by.items():
            assert sorted(p for p, toks in records.items() if word in toks) == want, word


def test_reproducer_source_and_home_table_stay_out_of_the_index(indexes, layout):
    for lang in ("en", "zh"):
        texts = " ".join(d["text"] for d in indexes[lang]["docs"])
        assert "UNTESTABLE, ERROR = 0, 1, 125, 2" not in texts and "if __name__" not in texts
        home = " ".join(d["text"] for d in indexes[lang]["docs"] if d["location"].split("#")[0] == "")
        assert load(layout, MULTISLICE)["title"][lang][:20] not in home


def test_generated_pages_are_not_written_to_the_sources(layout, built):
    assert not (layout / "site" / "records").exists()
    assert not (REPO / "site" / "records").exists()
    assert not list(REPO.glob("site/**/*.py")) and not list(REPO.glob("bisect/**/*.py"))


def test_real_repository_builds_strictly_with_mkdocs(tmp_path):
    """`mkdocs build --strict` on the checkout itself (whatever records it has now), output in tmp."""
    out = tmp_path / "out"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(REPO / "mkdocs.yml"), "-d", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rid in record_ids(REPO):
        assert (out / "records" / rid / "index.html").is_file()
        assert (out / "zh" / "records" / rid / "index.html").is_file()
    assert (out / "index.html").is_file() and (out / "zh" / "index.html").is_file()
    assert (out / "contributing" / "index.html").is_file() and (out / "zh" / "contributing" / "index.html").is_file()
    assert not (REPO / "site" / "records").exists()
    # settings bisections kept under bisect/ are on their record's page: the settings the bug needs
    for path in sorted((REPO / "bisect").glob("*/bisect-settings-*.json")):
        report = json.loads(path.read_text())
        for lang, head in (("", "Settings that make the bug appear on torch_xla"), ("zh", "上让问题出现的设置")):
            page = (out / lang / "records" / path.parent.name / "index.html").read_text()
            assert f"{head}" in page and report["release"] in page
            for setting in report["minimal"]:
                assert f"<code>{html.escape(setting)}</code>" in page, (path, lang, setting)


def small_layout(tmp_path: Path) -> Path:
    root = synthetic.make_layout(tmp_path / "kb", REPO)
    for folder in ("issues", "limitations", "reproducers", "bisect"):  # only what the test writes
        for path in sorted((root / folder).iterdir()):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    synthetic.populate(root, 2, seed=3, stand_ins=False)
    return root


def test_strict_build_fails_on_a_broken_link_in_a_record(tmp_path):
    root = small_layout(tmp_path)
    rid = record_ids(root)[0]
    path = root / "issues" / f"{rid}.yaml"
    path.write_text(read(path).replace("summary:\n  en: ", "summary:\n  en: See [the notes](missing-page.md). "), "utf-8")
    assert "missing-page.md" in read(path)
    with pytest.raises(XlakbError, match="missing-page.md|strict"):
        build_site(root, tmp_path / "out")
    out = build_site(root, tmp_path / "out2", strict=False)  # without --strict it is only a warning
    assert (out / "records" / rid / "index.html").is_file()


def test_malformed_measured_file_is_named(tmp_path):
    root = small_layout(tmp_path)
    rid = record_ids(root)[0]
    matrix = root / "bisect" / rid / "matrix.json"
    data = json.loads(read(matrix))
    data["results"][3]["verdict"] = "maybe"
    matrix.write_text(json.dumps(data), "utf-8")
    with pytest.raises(XlakbError, match=r"matrix\.json: results\[3\]\.verdict: 'maybe'"):
        build_site(root, tmp_path / "out")


def test_invalid_record_is_named(tmp_path):
    root = small_layout(tmp_path)
    rid = record_ids(root)[0]
    path = root / "issues" / f"{rid}.yaml"
    path.write_text(read(path).replace("status: ", "status: maybe-", 1), "utf-8")
    with pytest.raises(XlakbError, match=rf"{rid}\.yaml.*status"):
        build_site(root, tmp_path / "out")


def test_output_may_not_be_the_page_sources(tmp_path):
    root = small_layout(tmp_path)
    with pytest.raises(XlakbError, match="page source"):
        build_site(root, root / "site")
    with pytest.raises(XlakbError, match="no mkdocs.yml"):
        build_site(tmp_path / "nowhere", tmp_path / "out")


def test_serve_site_serves_the_record_pages(layout, tmp_path):
    """`xlakb site serve` (serve_site) answers on 127.0.0.1 with the generated pages. MkDocs builds into a folder
    of the temporary directory, which it removes only when stopped as a user stops it (Ctrl-C) and not always
    then (a rebuild may be writing): the server gets a temporary directory of the test's own."""
    import os
    import signal
    import socket
    import time
    import urllib.request

    tmp = tmp_path / "tmp"
    tmp.mkdir()

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = (
        "import sys; from pathlib import Path; from xlakb.sitegen.build import serve_site; "
        f"serve_site(Path({str(layout)!r}), port={port})"
    )
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        page = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/zh/records/{SCALAR}/", timeout=5) as resp:
                    page = resp.read().decode("utf-8")
                break
            except OSError:
                time.sleep(1)
        assert page is not None, proc.stdout.read().decode() if proc.poll() is not None else "no answer"
        assert h1_text(page) == shown_title(load(layout, SCALAR)["title"]["zh"])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _heat_rows(page: str) -> dict[str, dict[str, str]]:
    """record id -> {release: verdict} from a coverage heat map ("none" when not measured)."""
    table = re.search(r'<table class="xlakb-records xlakb-coverage".*?</table>', page, re.S).group(0)
    out = {}
    for rid, row in re.findall(r'<tr data-id="([^"]+)"[^>]*>(.*?)</tr>', table, re.S):
        out[rid] = dict(re.findall(r'data-release="([^"]+)" data-verdict="([^"]+)"', row))
    return out


def test_coverage_heat_map_is_the_measured_matrix(layout, built):
    """One row per record and one cell per release, coloured by what was measured, grouped by component."""
    from xlakb.candidates.releases import all_releases

    ids = record_ids(layout)
    for prefix in ("", "zh/"):
        page = read(built / prefix / "coverage" / "index.html")
        rows = _heat_rows(page)
        assert set(rows) == set(ids)
        for rid in ids:
            path = layout / "bisect" / rid / "matrix.json"
            measured = {r["candidate"]: r["verdict"] for r in json.loads(read(path))["results"]} if path.exists() else {}
            assert set(all_releases()) <= set(rows[rid])
            for release, verdict in rows[rid].items():
                assert verdict == measured.get(release, "none"), (rid, release)
        groups = re.findall(r'<tr class="xlakb-group" data-component="([^"]+)"', page)
        assert groups == sorted({load(layout, rid)["component"] for rid in ids})
    assert "有" in read(built / "zh" / "coverage" / "index.html")  # Chinese short labels on Chinese pages


def test_component_pages_in_both_languages(layout, built):
    records = {rid: load(layout, rid) for rid in record_ids(layout)}
    for component in {d["component"] for d in records.values()}:
        mine = {rid for rid, d in records.items() if d["component"] == component}
        for prefix in ("", "zh/"):
            page = read(built / prefix / "components" / component / "index.html")
            assert set(_heat_rows(page)) == mine
            assert component in h1_text(page)
    # record pages link to their component's page, the home table carries the same strip
    rid = SCALAR
    page = read(built / "records" / rid / "index.html")
    assert f'href="../../components/{records[rid]["component"]}/"' in page
    home = read(built / "index.html")
    assert f'<span class="xlakb-strip xlakb-heatstrip" data-record="{rid}" role="group"' in home


def test_no_page_loads_anything_from_another_host(built):
    """Readers in mainland China cannot reach Google Fonts or CDNs: every asset a page loads (stylesheets,
    scripts, fonts, images, preconnects) is the site's own. Links readers may follow (<a href>) are fine."""
    from html.parser import HTMLParser

    class Assets(HTMLParser):
        def __init__(self):
            super().__init__()
            self.external = []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            url = None
            if tag == "link" and (a.get("rel") or "") not in ("canonical", "alternate"):
                url = a.get("href")
            elif tag in ("script", "img", "iframe", "source", "audio", "video", "embed"):
                url = a.get("src")
            if url and re.match(r"(https?:)?//", url):
                self.external.append(f"<{tag} {url}>")
            for value in a.values():
                for m in re.finditer(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", value or ""):
                    self.external.append(f"style url({m.group(1)})")

    pages = sorted(built.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        parser = Assets()
        parser.feed(read(page))
        assert parser.external == [], f"{page.relative_to(built)} loads {parser.external[:3]}"
    for css in built.rglob("*.css"):
        found = re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", read(css))
        assert found == [], f"{css.relative_to(built)} loads {found[:3]}"


def test_site_url_comes_from_the_pages_workflow(tmp_path):
    """No placeholder domain: site_url is XLAKB_SITE_URL, which the Pages workflow sets to the repository's
    Pages URL; a build with it writes canonical links and a sitemap on that URL."""
    import yaml

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "site.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    build = next(s for s in steps if "mkdocs build" in s.get("run", ""))
    assert "--strict" in build["run"] and "github.io" in build["env"]["XLAKB_SITE_URL"]
    assert workflow[True]["push"]["branches"] == ["main"]  # YAML reads the key `on` as True
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in workflow["jobs"]["deploy"]["steps"])
    root = synthetic.make_layout(tmp_path / "kb", REPO)
    env = {**os.environ, "XLAKB_SITE_URL": "https://example-owner.github.io/xlakb/"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert '<link rel="canonical" href="https://example-owner.github.io/xlakb/' in read(tmp_path / "out" / "index.html")
    assert "https://example-owner.github.io/xlakb/" in read(tmp_path / "out" / "sitemap.xml")


def test_the_workaround_section_says_where_it_was_measured_to_hold():
    from xlakb.sitegen.data import Measured, SiteRecord
    from xlakb.sitegen.render import workaround_html

    def rows(**verdicts):
        return {"results": [{"candidate": v.replace("_", "."), "verdict": x} for v, x in verdicts.items()]}

    data = {"reproducer": {"workaround": {"args": ["--workaround"]}}}
    rec = SiteRecord(
        Path("x.yaml"),
        data,
        "",
        Measured(matrix=rows(**{"2_4_0": "reproduced", "2_5_1": "reproduced", "2_6_0": "not-reproduced"})),
    )
    assert "has not been measured yet" in workaround_html(rec, "en")
    rec.measured.workaround = rows(**{"2_4_0": "not-reproduced", "2_5_1": "reproduced", "2_6_0": "not-reproduced"})
    en, zh = workaround_html(rec, "en"), workaround_html(rec, "zh")
    assert "Workaround verified on 2.4.0" in en and "<code>--workaround</code>" in en and "It does not hold on 2.5.1" in en
    assert "已在 2.4.0 上验证" in zh and "在 2.5.1 上该方法无效" in zh
    assert workaround_html(SiteRecord(Path("x.yaml"), {"reproducer": {}}, "", Measured()), "en") == ""


def test_a_mined_record_links_its_upstream_test_a_draft_is_never_published_a_limitation_is_one(tmp_path):
    """A record made by xlakb mine (record_for: the real templates) is a draft in mined/drafts/: no page, not
    in the home table, not in the paste box's data. Written up and moved to issues/, its page links the
    upstream test at its commit instead of showing code and says it was found by xlakb mine, in both
    languages; the home table and the coverage map can be filtered to mined or hand-written records. A
    limitation (limitations/) has a page that says what it is, is listed on the limitations page by the
    release that lifted it, and never in the home table."""
    import json

    import yaml

    from xlakb.mining.mine import Mined, record_for, write_record

    root = small_layout(tmp_path)
    m = Mined(
        commit="a" * 40,
        pr=8382,
        subject="Fix incorrect xla type for view_as_complex (#8382)",
        date="2024-11-20",
        cls="bug",
        path="test/test_operations.py",
        test="TestAtenXlaTensor.test_view_as_complex",
        line=1234,
        fixed_in="2.6.0",
        before="2.5.1",
        shipped="ancestry",
        env={"CPU_NUM_DEVICES": "4"},
        packages=["expecttest", "absl-py", "pytest"],
        status="proved",
        failure="XLAKB-TRIGGER FAILED TestAtenXlaTensor.test_view_as_complex: AssertionError: torch.complex64 != "
        "torch.complex128",
    )
    data = record_for(m, ["2.4.0", "2.5.0", "2.5.1"])
    draft = write_record(root, data)
    assert draft.parent == root / "mined" / "drafts"
    synthetic.write_matrix(root, data)
    out = build_site(root, tmp_path / "out")
    rid = data["id"]
    assert not (out / "records" / rid).exists() and rid not in read(out / "index.html")
    assert rid not in read(out / "assets" / "triage.json")
    # written up by a person, it is published
    data["mined"]["draft"] = False
    data["title"] = {
        "en": "view_as_complex of a float64 XLA tensor has complex64 data",
        "zh": "对 float64 XLA 张量调用 view_as_complex 得到的是 complex64 数据",
    }
    data["root_cause"] = {"en": "The copy kept the input's element type.", "zh": "复制时沿用了输入的元素类型。"}
    draft.unlink()
    write_record(root, data, kind="bug")
    out = build_site(root, tmp_path / "out2")
    en = read(out / "records" / rid / "index.html")
    zh = read(out / "zh" / "records" / rid / "index.html")
    link = f"https://github.com/pytorch/xla/blob/{'a' * 40}/test/test_operations.py#L1234"
    for page in (en, zh):
        assert f'href="{link}"' in page and 'href="https://github.com/pytorch/xla/pull/8382"' in page
        assert 'id="source"' not in page and "python reproducers/" not in page  # no code of upstream's here
        assert "torch.complex64 != torch.complex128" in page  # the measured failure, language-neutral
        assert "draft" not in page.lower() and "草稿" not in page
    assert "Found by <code>xlakb mine</code>" in en and "written from the fix's diff" in en
    assert "本记录由 <code>xlakb mine</code> 从" in zh
    home = read(out / "index.html")
    assert f'data-id="{rid}" data-status="fixed" data-source="mined"' in home
    assert 'data-filter="source"' in home and ">mined from an upstream fix</option>" in home
    zh_home = read(out / "zh" / "index.html")
    assert ">从上游修复挖掘</option>" in zh_home
    # the same record as a limitation: its own page says so, the limitations page lists it, home does not
    (root / "issues" / f"{rid}.yaml").unlink()
    data = {"id": rid, "kind": "limitation", **{k: v for k, v in data.items() if k != "id"}}
    write_record(root, data, kind="limitation")
    out = build_site(root, tmp_path / "out3")
    en = read(out / "records" / rid / "index.html")
    assert "limitation, lifted in 2.6.0" in en and "A limitation, not a bug" in en
    assert "限制，2.6.0 起解除" in read(out / "zh" / "records" / rid / "index.html")
    assert f'data-id="{rid}"' not in read(out / "index.html")
    lims = read(out / "limitations" / "index.html")
    assert "Lifted in 2.6.0" in lims and f"records/{rid}/" in lims
    assert "2.6.0 起解除" in read(out / "zh" / "limitations" / "index.html")
    exported = {r["id"]: r for r in json.loads(read(out / "assets" / "triage.json"))["records"]}
    assert exported[rid]["kind"] == "limitation"
    assert yaml.safe_load((root / "limitations" / f"{rid}.yaml").read_text())["kind"] == "limitation"


def test_the_measurements_page_is_made_from_what_the_benchmarks_wrote(tmp_path):
    """Each figure on the page comes from benchmarks/results/*.json, with its command and date, in both
    languages; a malformed results file is an error naming it."""
    import json

    root = small_layout(tmp_path)
    results = root / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "triage.json").write_text(
        json.dumps(
            {
                "benchmark": "triage",
                "title": {"en": "Triage", "zh": "问题匹配"},
                "command": "python3 benchmarks/bench_triage.py",
                "date": "2026-11-27",
                "host": {"cpus": 2},
                "figures": [
                    {
                        "what": {"en": "one triage command", "zh": "一次匹配命令"},
                        "value": 0.25,
                        "unit": "s",
                        "note": {"en": "best of 5", "zh": "5 次中最快的一次"},
                    },
                ],
            }
        )
    )
    out = build_site(root, tmp_path / "out")
    en = read(out / "measurements" / "index.html")
    zh = read(out / "zh" / "measurements" / "index.html")
    assert "<code>python3 benchmarks/bench_triage.py</code> on 2026-11-27" in en and "one triage command" in en
    assert "0.25 s" in en and "best of 5" in en
    assert "一次匹配命令" in zh and "5 次中最快的一次" in zh and "于 2026-11-27 测得" in zh
    (results / "broken.json").write_text(json.dumps({"benchmark": "x", "title": {}, "command": "c", "date": "d", "figures": [1]}))
    with pytest.raises(XlakbError, match=r"broken\.json: figures\[0\] needs what"):
        build_site(root, tmp_path / "out2")


def test_chinese_pages_have_full_width_punctuation_beside_chinese_and_no_machine_path(built):
    """Every Chinese page of the built site: outside code, no ASCII comma, colon, semicolon, parenthesis,
    question or exclamation mark beside a Chinese character; and no page in either language names a path of
    the machine the site or its data were made on."""
    import html as html_mod

    from xlakb.published import machine_paths

    bad = re.compile(r"[\u4e00-\u9fff][,;:!?()]|[,;:!?(][\u4e00-\u9fff]")
    found, paths = [], []
    for page in sorted(built.rglob("*.html")):
        text = page.read_text("utf-8")
        paths += [f"{page.relative_to(built)}: {p}" for p in machine_paths(text)]
        if not page.relative_to(built).parts or page.relative_to(built).parts[0] != "zh":
            continue
        prose = re.sub(r"(?s)<(script|style|pre|code|svg)[^>]*>.*?</\1>", " ", text)
        prose = html_mod.unescape(re.sub(r"<[^>]+>", " ", prose))
        found += [f"{page.relative_to(built)}: {prose[max(0, m.start() - 20) : m.end() + 20]!r}" for m in bad.finditer(prose)]
    assert found == []
    assert paths == []


def test_chinese_pages_have_no_english_prose_outside_code(built):
    """Every Chinese page of the built site, its <title> and description included: no English sentence (four English
    words in a row, :func:`xlakb.cjk.english_prose`) outside code. A quoted error message, commit subject, issue
    title or label is code (the reader searches for it word for word); a sentence of ours is in Chinese. <title>
    and the description cannot mark code: there a run counts unless the page shows it as code (its <h1>)."""
    found = []
    pages = [p for p in sorted(built.rglob("*.html")) if p.relative_to(built).parts[:1] == ("zh",)]
    assert len(pages) >= 40
    for page in pages:
        found += [f"{page.relative_to(built)}: {run!r}" for run in english_outside_code(read(page))]
    assert found == []
    # the check sees what it must: a sentence in the text, in an attribute-free title, in the description
    page = read(built / "zh" / "records" / SCALAR / "index.html")
    planted = page.replace("</h1>", "</h1><p>这一行 was written in English by mistake。</p>", 1)
    assert english_outside_code(planted) == ["was written in English by mistake"]
    assert english_outside_code(page.replace("<title>", "<title>报错 the fix landed in master ", 1)) == [
        "the fix landed in master"
    ]
    assert english_outside_code(
        page.replace('name="description" content="', 'name="description" content="It crashes on every release. ', 1)
    ) == ["It crashes on every release"]
    # ... and not what is code: the same sentence as code, names, numbers, a tag list
    assert english_outside_code(page.replace("</h1>", "</h1><p>报 <code>was written in English by mistake</code></p>", 1)) == []
    tags = " ".join(f'<span class="xlakb-tag">{t}</span>' for t in ("crash", "wrong-result", "spmd", "functionalization"))
    assert english_outside_code(page.replace("</h1>", f"</h1><p>在 PyTorch/XLA 2.5.1 与 Cloud TPU v5e 上 {tags}</p>", 1)) == []


def test_every_stored_confidence_reason_reads_in_chinese():
    """The engine writes a report's confidence reasons in fixed English forms; a Chinese page says each in
    Chinese: every reason of every stored bisection report has its Chinese form, with no English sentence left."""
    import json

    from xlakb.sitegen.render import UI, confidence_reason

    reasons = {
        r
        for path in (REPO / "bisect").glob("*/bisect-*.json")
        for r in json.loads(path.read_text("utf-8")).get("confidence_reasons", [])
    }
    assert len(reasons) >= 5
    for reason in reasons:
        zh = confidence_reason(reason, UI["zh"])
        assert zh != reason and re.search(r"[\u4e00-\u9fff]", zh), reason
        words = re.sub(r"`[^`]*`|\([^)]*\)|（[^）]*）|[\w./-]*[/._#][\w./-]*|\b[0-9a-f]{7,40}\b", "", zh)
        assert not re.search(r"\b(?:the|differs|candidates?|between|which)\b", words), zh
    sample = "e583c2cc (#8656) differs from its base build 2.6.0 in 20 native file(s) (.bazelrc, setup.py and 15 more): its binary part is the base's"
    assert (
        confidence_reason(sample, UI["zh"])
        == "e583c2cc (#8656) 与它的基础构建 2.6.0 相比有 20 个原生文件不同（.bazelrc, setup.py 等，另有 15 个）：它的二进制部分来自基础构建"
    )
    assert confidence_reason(sample, UI["en"]) == sample


def test_no_page_shows_a_regex_outside_a_details_element(built):
    """A reader meets words: the patterns records are matched by (``device_ready_queues_\\.size\\(\\)``) are shown
    only under "How it was matched", a <details> element, on every page of both languages."""
    found = []
    for page in sorted(built.rglob("*.html")):
        found += [f"{page.relative_to(built)}: {x}" for x in regexes_outside_details(read(page))]
    assert found == []
    # the check sees them where they are: a record page's patterns, inside its details element
    page = read(built / "records" / SCALAR / "index.html")
    matched = re.search(r'<details class="xlakb-matched">.*?</details>', page, re.S).group(0)
    assert regexes_outside_details(matched.replace("<details", "<div").replace("</details>", "</div>"))


def test_a_record_page_says_what_the_bug_is_before_how_it_is_matched(built):
    """The error, what it means, which release fixes it and the workaround first; then the measured matrix, then how
    it is matched (folded), the environment and the reproducer. No line of a code block is a link (each was a tab
    stop before the verdict table)."""
    for prefix, summary in (("", "How it was matched"), ("zh/", "匹配依据")):
        for rid in (SCALAR, BISECTED):
            page = read(built / prefix / "records" / rid / "index.html")
            ids = ("symptoms", "root-cause", "versions", "workaround", "matrix", "signatures", "environment", "reproducer")
            where = [page.index(f'id="{i}"') for i in ids]
            assert where == sorted(where), (prefix, rid)
            assert f'<details class="xlakb-matched">\n<summary>{summary}</summary>' in page
            assert "__codelineno" not in page
            assert page.index('class="xlakb-matrix"') < page.index('class="highlight"')


def test_home_and_paste_page_lead_with_the_paste_box(built):
    """The home page's first thing under its title is the paste box, not buttons to it; so is the paste page's, whose
    explanations of matching are folded under "How matching works". The version field has its label."""
    for prefix, how, version in (("", "How matching works", "torch_xla version"), ("zh/", "匹配规则说明", "torch_xla 版本")):
        for page_path in ("index.html", "triage/index.html"):
            page = read(built / prefix / page_path)
            assert re.search(r'</h1>\s*<form class="xlakb-triage"', page), page_path
            assert 'class="xlakb-start"' not in page
            assert '<div class="xlakb-triage-result" aria-live="polite"' in page
            label = re.search(r'<label class="xlakb-triage-version">([^<]*)<input name="torch_xla"', page)
            assert label and version in label.group(1)
        triage = read(built / prefix / "triage" / "index.html")
        assert triage.index('<form class="xlakb-triage"') < triage.index(f'<details class="xlakb-how">\n<summary>{how}</summary>')
        assert "<strong>strong</strong>" in triage or "<strong>强匹配</strong>" in triage  # the rules, inside the details


def test_the_paste_data_is_packed_minified_and_gzipped(built):
    """triage.json was 3.1 MB of JSON: its catalog is packed (repeated parts listed once, patterns made again from
    their text in the browser), with no whitespace, and a gzipped copy beside it is what the page loads."""
    import gzip

    raw = (built / "assets" / "triage.json").read_bytes()
    data = json.loads(raw)
    assert json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8") == raw
    assert data["catalog"]["packed"] == 1 and len(data["catalog"]["rows"]) > 1000
    assert sum(isinstance(row[0], int) for row in data["catalog"]["rows"]) > 0.9 * len(data["catalog"]["rows"])
    assert gzip.decompress((built / "assets" / "triage.json.gz").read_bytes()) == raw
    # the clusters leave empty fields out; reports titled by their error (about 440 title clusters) add ~0.13 MB
    assert len(raw) < 1_700_000 and (built / "assets" / "triage.json.gz").stat().st_size < 400_000
    assert all("summary" in r for r in data["records"])  # an answer says what the bug is in the record's words


def test_one_404_page_per_language_offers_the_paste_box_and_search(built):
    """404.html (English) and zh/404.html (Chinese, lang zh-Hans): the paste box and a search of the records, with
    addresses from the site's root (the page is served wherever an address was not found), and the language switch
    leading to the other 404 page, not to some unrelated page."""
    for path, lang, title, other, other_lang in (
        ("404.html", "en", "Page not found", "/zh/404.html", "zh"),
        ("zh/404.html", "zh-Hans", "页面不存在", "/404.html", "en"),
    ):
        page = read(built / path)
        assert f'<html lang="{lang}"' in page and f"<h1>{title}</h1>" in page and "404 - Not found" not in page
        assert '<form class="xlakb-triage"' in page and 'data-src="/assets/triage.json"' in page
        assert re.search(r'<form class="xlakb-404-search" role="search" action="/(zh/)?" method="get">', page)
        assert f'<a href="{other}" hreflang="{other_lang}" class="md-select__link">' in page
        assert len(re.findall(r'class="md-select__link"', page)) == 2
    assert '"base": "/zh/"' in read(built / "zh" / "404.html")  # the Chinese search index
