"""The built site in headless Chromium: searches land on the right record, in the reader's
language; the language switch keeps the record; the matrix and the home filters work."""

from __future__ import annotations

import json
import time
import re
from urllib.parse import urlsplit

import pytest
from sitetest import (
    BISECTED,
    DTENSOR,
    HAS_SHARDING,
    MULTISLICE,
    REPO,
    SCALAR,
    chinese_query,
    english_query,
    load,
    measured_ids,
    record_ids,
    shown_title,
)

pytestmark = pytest.mark.browser

# Material's results and the entries search.js puts above them; a result search.js hid (a second hit on a page
# listed above) is not one
RESULT_LINKS = ".md-search-result__list > .md-search-result__item:not([hidden]) > a.md-search-result__link"


def wait(driver, condition, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait
    """Wait until ``condition(driver)`` is true; an element gone stale meanwhile (re-rendered) is a look to repeat."""
    from selenium.common.exceptions import StaleElementReferenceException

    return WebDriverWait(driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
        condition
    )


def result_hrefs(driver) -> list[str]:
    """The result links as they are now, read in one script (no element to go stale)."""
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll(arguments[0]), function (a) { return a.href; });",
        RESULT_LINKS,
    )


def settled_results(driver, timeout: float = 20, quiet: float = 0.6) -> list[str]:
    """The result links once they have stopped changing for ``quiet`` seconds (the worker answers, search.js adds
    its entries, Material re-renders); [] when none come."""
    from selenium.common.exceptions import TimeoutException

    seen = {"hrefs": None, "since": 0.0}

    def settled(d):
        now = result_hrefs(d)
        if now != seen["hrefs"]:
            seen.update(hrefs=now, since=time.monotonic())
            return False
        return bool(now) and time.monotonic() - seen["since"] >= quiet

    try:
        wait(driver, settled, timeout)
    except TimeoutException:
        return []
    return seen["hrefs"]


def search(driver, url: str, query: str) -> list[str]:
    """Type ``query`` into Material's search box on ``url``; the paths of the results, best first."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    box = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "input.md-search__input"))
    box.click()
    box.send_keys(query)
    return [urlsplit(h).path for h in settled_results(driver)]


@pytest.mark.parametrize("rid", [DTENSOR, MULTISLICE])
def test_english_query_lands_on_the_record(browser, server, layout, indexes, rid):
    query = english_query(indexes, layout, rid)
    results = search(browser, server, query)
    assert results and results[0] == f"/records/{rid}/", (query, results[:3])


@pytest.mark.parametrize("rid", [SCALAR, DTENSOR])
def test_chinese_query_on_chinese_pages_finds_the_chinese_record_first(browser, server, layout, indexes, rid):
    query = chinese_query(indexes, layout, rid)
    results = search(browser, server + "zh/", query)
    assert results and results[0] == f"/zh/records/{rid}/", (query, results[:3])
    assert all(r.startswith("/zh/") for r in results)


@pytest.mark.parametrize("query, rid", [("unhashable type: 'list'", SCALAR), ("has_sharding", HAS_SHARDING)])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pasted_error_string_lands_on_the_record(browser, server, query, rid, lang):
    prefix = "" if lang == "en" else "zh/"
    results = search(browser, server + prefix, query)
    assert results and results[0] == f"/{prefix}records/{rid}/", results[:3]


XTENSOR = "dynamo-inplace-view-op-xtensor-check"
SEGFAULT = "use-spmd-after-device-init-segfault"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_error_string_lists_the_record_with_it_word_for_word_first(browser, server, lang):
    prefix = "" if lang == "en" else "zh/"
    results = search(browser, server + prefix, "Check failed: xtensor")
    # two records print it word for word (the dynamo in-place view op, and einsum traced with FakeTensors):
    # they come first, before records that only share a word of it
    both = {f"/{prefix}records/{XTENSOR}/", f"/{prefix}records/dynamo-einsum-faketensor-xtensor-check/"}
    assert set(results[:2]) == both, results[:3]


def test_a_chinese_query_on_an_english_page_offers_the_chinese_pages(browser, server):
    results = search(browser, server, "段错误")
    assert results and results[0] == "/zh/", results[:3]  # "search the Chinese pages for ..."
    link = wait(  # read where it is now, inside the wait: the list may be re-rendered between two looks
        browser, lambda d: d.execute_script("var a = document.querySelector('.xlakb-search-language a'); return a && a.href;")
    )
    assert "q=%E6%AE%B5%E9%94%99%E8%AF%AF" in link
    # the glossary term finds the record on the Chinese pages, as its own search does
    results = search(browser, server + "zh/", "段错误")
    assert f"/zh/records/{SEGFAULT}/" in results[:3], results[:5]
    # and the English word finds it on the English pages (the record lists its terms in both languages)
    results = search(browser, server, "segfault")
    assert f"/records/{SEGFAULT}/" in results[:3], results[:5]


def test_language_switch_keeps_the_record(browser, server, layout):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    data = load(layout, HAS_SHARDING)
    browser.get(f"{server}records/{HAS_SHARDING}/")
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == shown_title(data["title"]["en"])
    for lang, path, title in (
        ("zh", f"/zh/records/{HAS_SHARDING}/", shown_title(data["title"]["zh"])),
        ("en", f"/records/{HAS_SHARDING}/", shown_title(data["title"]["en"])),
    ):
        button = browser.find_element(By.CSS_SELECTOR, ".md-header__option .md-select button")
        ActionChains(browser).move_to_element(button).perform()
        selector = f"a.md-select__link[hreflang='{lang}']"
        link = wait(browser, lambda d: next((a for a in d.find_elements(By.CSS_SELECTOR, selector) if a.is_displayed()), None))
        # where the link leads (the browser resolves it against the page): the same record in the other
        # language; then follow it (a pointer click can land while the menu is still moving in)
        target = link.get_attribute("href")
        assert urlsplit(target).path == path, target
        browser.get(target)
        wait(browser, lambda d: urlsplit(d.current_url).path == path)
        assert browser.find_element(By.CSS_SELECTOR, "article h1").text == title
        assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == lang


def test_matrix_renders_with_a_cell_per_release(browser, server, layout):
    from selenium.webdriver.common.by import By

    ids = measured_ids(layout)
    real = [rid for rid in ids if not rid.startswith("synthetic-")]
    for rid in real[:3] + [BISECTED]:
        matrix = json.loads((layout / "bisect" / rid / "matrix.json").read_text("utf-8"))
        for prefix in ("", "zh/"):
            browser.get(f"{server}{prefix}records/{rid}/")
            table = browser.find_element(By.CSS_SELECTOR, "table.xlakb-matrix")
            assert table.is_displayed()
            rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
            assert len(rows) == len(matrix["results"])
            colours = set()
            for row, result in zip(rows, matrix["results"]):
                assert row.get_attribute("data-candidate") == result["candidate"]
                cell = row.find_element(By.CSS_SELECTOR, "td.xlakb-verdict")
                assert cell.get_attribute("data-verdict") == result["verdict"]
                assert cell.text.strip() and cell.size["width"] > 0 and cell.size["height"] > 0
                assert result["measured_at"][:10] in row.text
                colours.add((result["verdict"], cell.value_of_css_property("background-color")))
            # each verdict gets its own colour from the stylesheet
            assert len({c for _, c in colours}) == len({v for v, _ in colours})
            assert all(c not in ("rgba(0, 0, 0, 0)", "transparent") for _, c in colours)


def test_home_table_filters_by_status_tag_and_component(browser, server, layout):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server)
    ids = record_ids(layout)
    rows = browser.find_elements(By.CSS_SELECTOR, "table.xlakb-records tbody tr")
    assert len(rows) == len(ids)
    records = {rid: load(layout, rid) for rid in ids}

    def visible() -> set[str]:
        return {r.get_attribute("data-id") for r in rows if r.is_displayed()}

    target = records[SCALAR]
    for name, value, keep in (
        ("status", target["status"], lambda d: d["status"] == target["status"]),
        ("component", target["component"], lambda d: d["component"] == target["component"]),
        ("tag", target["tags"][0], lambda d: target["tags"][0] in d["tags"]),
    ):
        select = Select(browser.find_element(By.CSS_SELECTOR, f"select[data-filter='{name}']"))
        select.select_by_value(value)
        expected = {rid for rid, d in records.items() if keep(d)}
        assert visible() == expected
        assert browser.find_element(By.CSS_SELECTOR, ".xlakb-count-n").text == str(len(expected))
        assert f"{name}={value}" in browser.current_url
        select.select_by_value("")
    assert visible() == set(ids)
    # a filtered view can be linked to
    browser.get(f"{server}zh/?status={target['status']}")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.xlakb-records tbody tr")
    assert visible() == {rid for rid, d in records.items() if d["status"] == target["status"]}


def test_coverage_heat_map_filters_by_component(browser, server, layout):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(f"{server}coverage/")
    records = {rid: load(layout, rid) for rid in record_ids(layout)}
    rows = browser.find_elements(By.CSS_SELECTOR, "table.xlakb-coverage tbody tr[data-id]")
    assert {r.get_attribute("data-id") for r in rows} == set(records)
    component = records[SCALAR]["component"]
    Select(browser.find_element(By.CSS_SELECTOR, "select[data-filter='component']")).select_by_value(component)
    shown = {r.get_attribute("data-id") for r in rows if r.is_displayed()}
    assert shown == {rid for rid, d in records.items() if d["component"] == component}
    assert browser.find_element(By.CSS_SELECTOR, ".xlakb-count-n").text == str(len(shown))
    groups = browser.find_elements(By.CSS_SELECTOR, "table.xlakb-coverage tr.xlakb-group")
    assert [g.get_attribute("data-component") for g in groups if g.is_displayed()] == [component]
    cell = browser.find_element(By.CSS_SELECTOR, f"tr[data-id='{SCALAR}'] td[data-release='2.6.1']")
    assert cell.value_of_css_property("background-color") != cell.find_element(By.XPATH, "..").value_of_css_property(
        "background-color"
    )


CORPUS = REPO / "tests" / "data" / "triage"


def _paste_box_ready(browser) -> bool:
    """Wait until the paste box has loaded the exported signatures."""
    browser.set_script_timeout(30)
    return browser.execute_async_script(
        "var done = arguments[0]; (function wait() { if (document.querySelector('form.xlakb-triage').dataset.ready) done(true);"
        " else setTimeout(wait, 50); })();"
    )


def test_paste_box_gives_the_same_answer_as_xlakb_triage(browser, server, layout):
    """The site's engine (triage.js on the exported data) and the Python one, on every log of both corpora:
    reproducer logs, unrelated logs and real pastes."""
    from xlakb.knowledge import export, upstream_clusters
    from xlakb.triage import engine, log_from_text, result_json, triage
    from xlakb.upstream.index import match

    records, catalog = engine(export(layout))
    clusters = upstream_clusters(layout)
    assert len(clusters) > 100  # the seeded reported tier came with the layout
    browser.get(f"{server}triage/")
    assert _paste_box_ready(browser)
    logs = (
        sorted(CORPUS.glob("positive/*.log"))
        + sorted(CORPUS.glob("negative/measured/*.log"))
        + sorted((REPO / "src" / "xlakb" / "data" / "background").glob("*.log"))
        + sorted(CORPUS.glob("pasted/*.txt"))
    )
    assert len(logs) >= 200
    seen_reported = seen_generic = 0
    for path in logs:
        text = path.read_text("utf-8")
        for version in (None, "2.5.1"):
            js = browser.execute_async_script(
                "var text = arguments[0], version = arguments[1], done = arguments[2];"
                "window.__xlakbData = window.__xlakbData || fetch(document.querySelector('form.xlakb-triage').dataset.src)"
                "  .then(function (r) { return r.json(); });"
                "window.__xlakbData.then(function (d) { done(window.xlakbTriage.triage(text, d, version)); })"
                "  .catch(function (e) { done({error: String(e)}); });",
                text,
                version,
            )
            py = result_json(triage(log_from_text(text, path.name), records, torch_xla=version, catalog=catalog))
            reported = js.pop("upstream", None)
            assert js == py, path.name
            from xlakb.triage_report import generic_hit

            result = triage(log_from_text(text, path.name), records, torch_xla=version, catalog=catalog)
            assert reported == [
                {"cluster": h.cluster.to_json(), "line": h.line.line, "exact": h.exact, "generic": generic_hit(h, result)}
                for h in match(text, clusters)
            ], path.name
            seen_generic += any(h["generic"] for h in reported)
            seen_reported += bool(reported)
    assert seen_reported >= 10  # real pastes answered with upstream reports, the same in both engines
    assert seen_generic >= 1  # and told when the error they share is one a generic helper prints


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paste_box_shows_strong_matches_advice_and_workaround(browser, server, layout, lang):
    from selenium.webdriver.common.by import By

    log = sorted((CORPUS / "positive").glob(f"{SCALAR}@*.log"))[0].read_text("utf-8")
    browser.get(f"{server}{'' if lang == 'en' else 'zh/'}triage/")
    _paste_box_ready(browser)
    browser.execute_script(
        "document.querySelector('textarea').value = arguments[0];"
        "document.querySelector('input[name=torch_xla]').value = '2.5.1';",
        log,
    )
    browser.find_element(By.CSS_SELECTOR, "form.xlakb-triage button[type=submit]").click()
    first = browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-match")
    assert first.get_attribute("data-id") == SCALAR and first.get_attribute("data-strength") == "strong"
    advice = first.find_element(By.CSS_SELECTOR, ".xlakb-triage-advice").text
    assert ("torch_xla 2.5.1 shows this bug" in advice) if lang == "en" else ("torch_xla 2.5.1 存在这个问题" in advice)
    href = first.find_element(By.CSS_SELECTOR, "h3 a").get_attribute("href")
    assert href.endswith(f"records/{SCALAR}/")
    browser.get(href)  # the link leads to the record, in the same language
    assert ("/zh/" in browser.current_url) == (lang == "zh")
    # a log without torch_xla says so and names nothing
    browser.back()
    _paste_box_ready(browser)
    browser.execute_script(
        "document.querySelector('textarea').value = arguments[0];",
        "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nTypeError: unhashable type: 'list'\n",
    )
    browser.find_element(By.CSS_SELECTOR, "form.xlakb-triage button[type=submit]").click()
    assert browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-none")
    assert not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match")


# -- a site for people: what a visitor with an error meets, in both languages ------------------------------
def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2])


def _contrast(fg: str, bg: str) -> float:

    a, b = (tuple(float(x) for x in re.findall(r"[\d.]+", c)[:3]) for c in (fg, bg))
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _console_errors(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_paste_page_and_the_coverage_map_are_reached_from_the_home_page(browser, server, width, lang):
    from selenium.webdriver.common.by import By

    prefix = "" if lang == "en" else "zh/"
    browser.set_window_size(width, 900)
    try:
        for target in ("triage", "coverage"):
            browser.get(server + prefix)
            button = next(
                a
                for a in browser.find_elements(By.CSS_SELECTOR, ".xlakb-start a")
                if a.get_attribute("href").rstrip("/").endswith(target)
            )
            assert button.is_displayed() and button.size["width"] > 40
            button.click()
            wait(browser, lambda d: urlsplit(d.current_url).path == f"/{prefix}{target}/")
        if width >= 1220:  # the site's navigation is shown beside the page on a wide screen
            nav = browser.find_element(By.CSS_SELECTOR, ".md-sidebar--primary .md-nav")
            assert nav.is_displayed()
    finally:
        browser.set_window_size(1280, 900)


def test_every_page_reads_right_without_colour_or_a_mouse(browser, server, layout):
    """On every page of the real records and the hand-written pages, in both languages: no console error
    (the sitemap requests included), no raw Markdown backtick in the text, no space between two Chinese
    characters on a Chinese page, and every verdict cell says what it means in words or a symbol, named for
    screen readers in the page's language, with text at WCAG AA contrast."""

    from selenium.webdriver.common.by import By
    from sitetest import record_ids

    # (innerText puts a tab, not a space, between two table cells)
    stray = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef] +[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    real = [rid for rid in record_ids(layout) if not rid.startswith("synthetic-")]
    pages = ["", "triage/", "coverage/", "contributing/"] + [f"records/{rid}/" for rid in real]
    english_words = re.compile(r"\b(reproduced|not reproduced|not measured|untestable|exit \d)\b")
    browser.get_log("browser")  # drop what earlier tests left
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        for page in pages:
            browser.get(server + prefix + page)
            text = browser.execute_script(
                "var a = document.querySelector('article').cloneNode(true);"
                "a.querySelectorAll('pre, .highlight, form').forEach(function (e) { e.remove(); });"
                "a.querySelectorAll('code').forEach(function (e) { e.textContent = 'CODE'; });"
                "return a.innerText;"
            )
            assert "`" not in text, (prefix + page, text[max(0, text.find("`") - 80) : text.find("`") + 80])
            if lang == "zh":
                m = stray.search(text)
                assert not m, (page, text[max(0, m.start() - 30) : m.end() + 30])
            cells = browser.find_elements(By.CSS_SELECTOR, ".xlakb-heat, .xlakb-cell, td.xlakb-verdict")
            for cell in cells[:60]:
                label = cell.get_attribute("aria-label") or cell.text
                assert cell.text.strip(), (page, cell.get_attribute("outerHTML"))
                assert label.strip(), (page, cell.get_attribute("outerHTML"))
                if lang == "zh" and cell.get_attribute("aria-label"):
                    assert not english_words.search(cell.get_attribute("aria-label")), cell.get_attribute("aria-label")
                fg, bg = cell.value_of_css_property("color"), cell.value_of_css_property("background-color")
                if "rgba(0, 0, 0, 0)" not in bg:
                    assert _contrast(fg, bg) >= 4.5, (page, cell.get_attribute("data-verdict"), fg, bg)
            for badge in browser.find_elements(By.CSS_SELECTOR, ".xlakb-badge")[:5]:
                fg, bg = badge.value_of_css_property("color"), badge.value_of_css_property("background-color")
                assert _contrast(fg, bg) >= 4.5, (page, badge.text, fg, bg)
            errors = _console_errors(browser)
            assert not errors, (prefix + page, errors)


@pytest.mark.parametrize(
    "lang, query", [("en", "amp"), ("en", "Check failed: xtensor"), ("zh", "段错误"), ("en", "段错误"), ("zh", "has_sharding")]
)
def test_search_lists_each_page_once_by_whole_words_with_no_empty_highlight(browser, server, lang, query):
    """The entries search.js puts above Material's results are not listed again below them; a glossary term finds the
    records that use it as a word (`amp`: not per_device_samples, not "example"); no result link ends in an empty
    `?h=`."""
    prefix = "" if lang == "en" else "zh/"
    assert search(browser, server + prefix, query)
    paths = browser.execute_script(  # a page's hit: the first link of its item (the others are its sections)
        "return Array.prototype.map.call(document.querySelectorAll('.md-search-result__list > li:not([hidden])'),"
        " function (li) { return new URL(li.querySelector('a[href]').href).pathname; });"
    )
    assert len(paths) == len(set(paths)), paths
    links = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('.md-search-result__list a[href]'),"
        " function (a) { return a.getAttribute('href'); });"
    )
    assert links and not [h for h in links if re.search(r"[?&]h=(?:$|[&#])", h)], links
    if query == "amp":
        terms = browser.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('.xlakb-search-term a'),"
            " function (a) { return new URL(a.href).pathname; });"
        )
        assert "/records/amp-norm-dtype-float16/" in terms
        assert not [t for t in terms if "parallel-loader" in t or "mul-wider-scalar" in t or "upsample" in t], terms
