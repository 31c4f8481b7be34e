"""The built site in headless Chromium: searches land on the right record, in the reader's
language; the language switch keeps the record; the matrix and the home filters work."""

from __future__ import annotations

import contextlib
import json
import re
import time
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
    """Wait until ``condition(driver)`` is true; an element gone stale meanwhile (re-rendered) is a look to repeat."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
        condition
    )


def result_hrefs(driver) -> list[str]:
    """The result links as they are now, read in one script (no element to go stale)."""
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll(arguments[0]), function (a) { return a.href; });",
        RESULT_LINKS,
    )


def settled_results(driver, timeout: float = 20, quiet: float = 1.0) -> list[str]:
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
    # three records print it word for word (the dynamo in-place view op, einsum traced with FakeTensors, a compiled
    # function returning a CPU tensor): they come first, before records that only share a word of it
    word_for_word = {
        f"/{prefix}records/{XTENSOR}/",
        f"/{prefix}records/dynamo-einsum-faketensor-xtensor-check/",
        f"/{prefix}records/dynamo-cpu-output-xtensor-check/",
    }
    assert set(results[:3]) == word_for_word, results[:4]


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
    for lang, html_lang, path, title in (
        ("zh", "zh-Hans", f"/zh/records/{HAS_SHARDING}/", shown_title(data["title"]["zh"])),
        ("en", "en", f"/records/{HAS_SHARDING}/", shown_title(data["title"]["en"])),
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
        assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == html_lang


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


def _paste(browser, text: str) -> None:
    browser.execute_script("document.querySelector('form.xlakb-triage textarea').value = arguments[0];", text)


def _submit(browser) -> None:
    """Click the paste box's button as a reader does (centred first: after an answer it is under the fixed header)."""
    from selenium.webdriver.common.by import By

    button = browser.find_element(By.CSS_SELECTOR, "form.xlakb-triage button[type=submit]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    button.click()


def _scalar_log() -> str:
    return sorted((CORPUS / "positive").glob(f"{SCALAR}@*.log"))[0].read_text("utf-8")


def test_paste_box_gives_the_same_answer_as_xlakb_triage(browser, server, layout):
    """The site's engine (triage.js on the exported data) and the Python one, on every log of both corpora:
    reproducer logs, unrelated logs and real pastes."""
    from xlakb.knowledge import export, upstream_clusters
    from xlakb.triage import engine, log_from_text, reported_hits, result_json, triage

    records, catalog = engine(export(layout))
    clusters = upstream_clusters(layout)
    assert len(clusters) > 100  # the seeded reported tier came with the layout
    browser.get(f"{server}triage/")
    assert _paste_box_ready(browser)
    # what the page loads (packed, gzipped) is unpacked into the very catalog the Python engine reads
    shipped = browser.execute_async_script(
        "var done = arguments[0]; window.xlakbTriage.load(document.querySelector('form.xlakb-triage').dataset.src)"
        "  .then(function (d) { done(d.catalog); }, function (e) { done(String(e)); });"
    )
    assert shipped == export(layout)["catalog"]
    logs = (
        sorted(CORPUS.glob("positive/*.log"))
        + sorted(CORPUS.glob("negative/measured/*.log"))
        + sorted((REPO / "src" / "xlakb" / "data" / "background").glob("*.log"))
        + sorted(CORPUS.glob("pasted/*.txt"))
        + sorted(CORPUS.glob("heldout-reported*/*.txt"))  # spent rounds: bare messages, cut lines, stacks alone
    )
    assert len(logs) >= 200
    seen_reported = seen_generic = 0
    for path in logs:
        text = path.read_text("utf-8")
        for version in (None, "2.5.1"):
            js = browser.execute_async_script(
                "var text = arguments[0], version = arguments[1], done = arguments[2];"
                "window.__xlakbData = window.__xlakbData ||"
                "  window.xlakbTriage.load(document.querySelector('form.xlakb-triage').dataset.src);"
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
                {
                    "cluster": h.cluster.to_json(),
                    "line": h.line.line if h.line else None,
                    "frames": list(h.frames),
                    "exact": h.exact,
                    "how": h.how,
                    "generic": generic_hit(h, result),
                }
                for h in reported_hits(result, text, clusters)
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
    _submit(browser)
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
        "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nTypeError: frobnicate() takes no keyword argument 'spam'\n",
    )
    _submit(browser)
    none = browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-none")
    assert none and not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match")
    said = "reported to pytorch/xla" if lang == "en" else "报告给 pytorch/xla"
    assert said not in none[0].text
    # torch_xla 1.x's message, which no catalog release knows: not called torch_xla-free, since its users reported it
    _paste(browser, "RuntimeError: Missing XLA configuration\n")
    _submit(browser)
    assert said in browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-none").text
    assert not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-stack-only")
    # a stack whose message was left out is asked for the message
    _paste(browser, 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    step(batch)\n')
    _submit(browser)
    hint = browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-stack-only").text
    assert ("paste it too" in hint) if lang == "en" else ("请把它也贴上" in hint)
    assert not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-stacked")
    # a stack alone that leaves torch_xla in a record's frame lists the records whose bugs fail there
    _paste(
        browser,
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    xm.save(state, "a.pt")\n'
        '  File "/v/site-packages/torch_xla/utils/utils.py", line 206, in _for_each_instance_rewrite\n'
        "    result.__dict__[k] = v\n",
    )
    _submit(browser)
    listed = browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-stacked + ul > li")
    assert "xm-save-class-object-mappingproxy-typeerror" in [li.get_attribute("data-id") for li in listed]
    assert not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match")
    assert browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-stack-only")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paste_box_shows_what_a_developer_said_was_the_cause(browser, server, layout, lang):
    """A paste of a stored report's error is answered with the report and, under it, the cause a pytorch/xla
    developer gave in its thread (upstream/causes.yaml), in the page's language."""
    from selenium.webdriver.common.by import By

    from xlakb.upstream import causes, store

    said = causes.load(layout)
    reports = store.load(layout)
    cause = next(c for n, c in sorted(said.items()) if reports[n].errors)
    line = reports[cause.issue].errors[0]["line"]
    browser.get(f"{server}{'' if lang == 'en' else 'zh/'}triage/")
    _paste_box_ready(browser)
    _paste(browser, line + "\n")
    _submit(browser)
    shown = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".xlakb-triage-cause"))
    text = " ".join(el.text for el in shown)
    assert f"@{cause.by}" in text and (cause.en if lang == "en" else cause.zh) in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paste_box_says_a_tests_verdict_may_be_any_failing_test(browser, server, layout, lang):
    """A failing test's verdict (`AssertionError: Tensor-likes are not close!`) finds the stored report that
    shows nothing more, listed with the warning that it may be any failing test, in the page's language.
    Real paste: https://github.com/pytorch/xla/issues/7500."""
    from selenium.webdriver.common.by import By

    from xlakb.words import ui

    paste = (CORPUS / "heldout-reported-12" / "xla7500-spmd-reduce-scatter-v5e-tensor-likes-not-close-control.txt").read_text(
        "utf-8"
    )
    browser.get(f"{server}{'' if lang == 'en' else 'zh/'}triage/")
    _paste_box_ready(browser)
    _paste(browser, paste)
    _submit(browser)
    shown = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".xlakb-triage-generic"))
    assert ui()[lang]["triage"]["reported_test"] in " ".join(el.text for el in shown)
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


@contextlib.contextmanager
def screen(browser, width: int, height: int):
    """Pages seen on a ``width`` x ``height`` screen (CSS pixels): below 700 wide, a phone's (its viewport, touch,
    scroll bars over the page)."""
    phone = width < 700
    if phone:
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True}
        )
        browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    else:
        browser.set_window_size(width, height)
    try:
        yield
    finally:
        if phone:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})
        browser.set_window_size(1280, 1000)


SCREENS = [(1280, 900), (390, 844)]

# Where the answer is: its heading below Material's fixed header and inside the window, and focused.
ANSWER_IN_VIEW = """
var head = document.querySelector('.xlakb-triage-result .xlakb-triage-head');
if (!head) return null;
var r = head.getBoundingClientRect(), bar = document.querySelector('.md-header').getBoundingClientRect();
var box = head.parentNode, loading = box.querySelector('.xlakb-triage-loading');
return {inView: r.top >= bar.bottom - 1 && r.bottom <= window.innerHeight && r.height > 0,
        focused: document.activeElement === head, live: box.getAttribute('aria-live'),
        answered: !!box.querySelector('.xlakb-triage-match'),
        loading: !!loading && loading.getBoundingClientRect().height > 0 && loading.textContent};
"""


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_leads_with_the_paste_box_and_answers_in_view(browser, server, size, lang):
    """The home page's first thing is the paste box, on the first screen; the click's answer (or, before the data
    has come, a visible loading state) is in view within a second, announced and its heading focused; then the
    answer comes by itself."""
    from selenium.webdriver.common.by import By

    prefix = "" if lang == "en" else "zh/"
    with screen(browser, *size):
        browser.get(server + prefix)
        first = browser.execute_script(
            "var h = document.querySelector('article h1'); var n = h.nextElementSibling;"
            "return n && n.matches('form.xlakb-triage') && n.querySelector('textarea').getBoundingClientRect().top < innerHeight;"
        )
        assert first
        _paste(browser, _scalar_log())
        _submit(browser)
        start = time.monotonic()
        state = wait(browser, lambda d: d.execute_script(ANSWER_IN_VIEW), timeout=5)
        assert time.monotonic() - start < 1.0
        assert state["inView"] and state["focused"] and state["live"] == "polite", state
        assert state["answered"] or state["loading"], state
        state = wait(browser, lambda d: (lambda x: x if x and x["answered"] else None)(d.execute_script(ANSWER_IN_VIEW)))
        assert state["inView"] and state["focused"], state
        first = browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-match")
        assert first.get_attribute("data-id") == SCALAR


HOLD_DATA = """
(function () {
  var fetch0 = window.fetch, held = [];
  window.fetch = function (url, opts) {
    if (String(url).indexOf("triage.json") === -1) return fetch0.apply(this, arguments);
    return new Promise(function (resolve) { held.push(function () { resolve(fetch0(url, opts)); }); });
  };
  window.__xlakbRelease = function () { held.splice(0).forEach(function (go) { go(); }); return true; };
})();
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_click_before_the_data_arrives_says_loading_and_is_answered_when_it_comes(browser, server, lang):
    from selenium.webdriver.common.by import By

    prefix = "" if lang == "en" else "zh/"
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_DATA})["identifier"]
    try:
        browser.get(server + prefix)
        _paste(browser, _scalar_log())
        _submit(browser)
        state = wait(browser, lambda d: d.execute_script(ANSWER_IN_VIEW), timeout=5)
        assert state["loading"] and not state["answered"], state
        assert ("Loading" in state["loading"]) if lang == "en" else ("正在加载" in state["loading"])
        assert state["inView"] and state["focused"], state
        assert browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-result").get_attribute("aria-busy") == "true"
        browser.execute_script("return window.__xlakbRelease();")
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match"))
        assert browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-match").get_attribute("data-id") == SCALAR
        assert not browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-loading")
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})


# How much wider than the window the page is. Material hides the page's sideways overflow (html overflow-x), which a
# phone may still pan to: measured with that off.
PAGE_OVERFLOW = """
var html = document.documentElement, was = html.style.overflowX;
html.style.overflowX = 'visible';
var width = html.clientWidth, scroll = html.scrollWidth, wide = [];
document.querySelectorAll('body *').forEach(function (e) {
  var r = e.getBoundingClientRect();
  if (r.right <= width + 0.5 || !r.width) return;
  for (var p = e.parentElement; p && p !== html; p = p.parentElement) {
    var c = getComputedStyle(p);
    if (c.overflowX !== 'visible' || (c.position === 'absolute' && c.clip !== 'auto')) return;
  }
  wide.push(e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(r.right));
});
html.style.overflowX = was;
return {width: width, scroll: scroll, wide: wide.slice(0, 5)};
"""


@pytest.mark.parametrize("size", SCREENS + [(360, 740)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_page_is_wider_than_the_screen(browser, server, layout, size, lang):
    """Home, a record page (with a measured matrix and a bisection), the heat map, the paste page with an answer,
    a component page, the maintainer's guide (wide tables) and the 404 page: no sideways panning. Wide tables
    scroll in their own box."""
    from selenium.webdriver.common.by import By

    prefix = "" if lang == "en" else "zh/"
    component = load(layout, SCALAR)["component"]
    pages = ["", f"records/{SCALAR}/", f"records/{BISECTED}/", "coverage/", "triage/", f"components/{component}/"]
    pages += ["maintainers/", "reported/", "404.html"]
    with screen(browser, *size):
        for page in pages:
            browser.get(server + prefix + page)
            if page == "triage/":
                _paste_box_ready(browser)
                _paste(browser, _scalar_log())
                _submit(browser)
                wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match"))
            got = browser.execute_script(PAGE_OVERFLOW)
            assert got["scroll"] <= got["width"] and not got["wide"], (prefix + page, size, got)
            if page.startswith("records/") and size[0] < 700:  # a verdict row is a row, not a column of text
                heights = browser.execute_script(
                    "return Array.prototype.map.call(document.querySelectorAll('table.xlakb-matrix tbody tr'),"
                    " function (r) { return r.getBoundingClientRect().height; });"
                )
                assert heights and max(heights) < 130, (page, heights)


# Each release cell of one record on the heat map: where it is, its release label (::before), its detail (::after).
CELLS = """
var row = document.querySelector(arguments[0]);
var width = document.documentElement.clientWidth;
return Array.prototype.map.call(row.querySelectorAll('.xlakb-heat'), function (c) {
  var r = c.getBoundingClientRect(), before = getComputedStyle(c, '::before'), after = getComputedStyle(c, '::after');
  return {release: c.dataset.release, left: r.left, right: r.right, top: r.top, width: r.width, height: r.height,
          label: before.content, labelSize: parseFloat(before.fontSize), text: c.textContent.trim(),
          open: c.classList.contains('xlakb-open'), detail: after.content, name: c.getAttribute('aria-label'), width0: width};
});
"""


@pytest.mark.parametrize("width", [390, 360])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_release_is_readable_on_a_phone(browser, server, width, lang):
    """On a phone the heat map is a card per record with every release in view, each cell labelled with its
    release; a tap shows the cell's detail (not a hover); the home table's strip shows every release too."""
    from selenium.webdriver.common.by import By

    from xlakb.candidates.releases import all_releases

    prefix = "" if lang == "en" else "zh/"
    releases = set(all_releases())
    with screen(browser, width, 844):
        browser.get(f"{server}{prefix}coverage/")
        row = f"table.xlakb-coverage tr[data-id='{SCALAR}']"
        browser.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", row)
        cells = browser.execute_script(CELLS, row)
        assert {c["release"] for c in cells} >= releases
        for c in cells:
            assert 0 <= c["left"] and c["right"] <= c["width0"], c  # in view: no sideways scrolling to reach it
            assert c["width"] >= 24 and c["height"] >= 20 and c["text"], c
            assert c["label"].strip('"') == c["release"] and c["labelSize"] >= 9, c
        assert len({(round(c["left"]), round(c["top"])) for c in cells}) == len(cells)  # none on top of another
        # a tap on a cell shows what it is, inside the screen
        cell = browser.find_element(By.CSS_SELECTOR, f"{row} td.xlakb-heat[data-release='2.6.1']")
        cell.click()
        after = {c["release"]: c for c in browser.execute_script(CELLS, row)}["2.6.1"]
        assert after["open"] and after["detail"].strip('"') == after["name"], after
        assert browser.execute_script(PAGE_OVERFLOW)["scroll"] <= width
        # the home table: a card per record, its strip of every release in view
        browser.get(server + prefix)
        strip = f"table.xlakb-records tr[data-id='{SCALAR}']"
        browser.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'});", strip)
        cells = browser.execute_script(CELLS, strip)
        assert {c["release"] for c in cells} >= releases
        assert all(0 <= c["left"] and c["right"] <= c["width0"] and c["width"] >= 8 for c in cells), cells


TAB_STOPS = """
return Array.prototype.filter.call(document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]'),
  function (e) { return e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0; });
"""


@pytest.mark.parametrize("page", ["", "coverage/"])
def test_the_release_cells_are_one_tab_stop_moved_through_with_the_arrow_keys(browser, server, layout, page):
    from selenium.webdriver.common.keys import Keys

    browser.get(server + page)
    stops = browser.execute_script(TAB_STOPS)
    cells = [e for e in stops if "xlakb-heat" in (e.get_attribute("class") or "")]
    assert len(cells) == 1, len(cells)
    rows = len(record_ids(layout))
    assert len(stops) < rows + 120, len(stops)  # a link per record and the page's own controls, not a stop per cell
    first = cells[0]
    releases = browser.execute_script(
        "return Array.prototype.map.call(arguments[0].closest('tr').querySelectorAll('.xlakb-heat'),"
        " function (c) { return c.dataset.release; });",
        first,
    )
    browser.execute_script("arguments[0].focus();", first)
    active = lambda: browser.execute_script(  # noqa: E731
        "var a = document.activeElement; return [a.dataset.release, a.closest('tr').dataset.id, a.classList.contains('xlakb-open')];"
    )
    row = active()[1]
    first.send_keys(Keys.ARROW_RIGHT)
    assert active()[:2] == [releases[1], row]
    browser.switch_to.active_element.send_keys(Keys.END)
    assert active()[0] == releases[-1]
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert active()[0] == releases[-1] and active()[1] != row
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    assert active()[2]  # Enter shows the cell's detail
    assert len([e for e in browser.execute_script(TAB_STOPS) if "xlakb-heat" in (e.get_attribute("class") or "")]) == 1
    browser.switch_to.active_element.send_keys(Keys.TAB)  # Tab leaves the cells
    assert "xlakb-heat" not in (browser.switch_to.active_element.get_attribute("class") or "")


def test_on_a_record_page_the_verdict_table_comes_before_any_tab_stop_in_code(browser, server):
    browser.get(f"{server}records/{SCALAR}/")
    stops = browser.execute_script(TAB_STOPS)
    in_code = browser.execute_script(
        "var t = document.querySelector('table.xlakb-matrix');"
        "return arguments[0].filter(function (e) { return e.closest('.highlight, pre'); }).map(function (e) {"
        "  return [e.tagName, !!(t.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)]; });",
        stops,
    )
    assert all(tag != "A" for tag, _ in in_code), in_code  # no line of code is a link
    assert all(after for _, after in in_code), in_code


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_404_page_answers_a_paste_and_switches_to_the_other_404(browser, server, lang):
    from selenium.webdriver.common.by import By

    path, other, heading, other_heading = (
        ("404.html", "/zh/404.html", "Page not found", "页面不存在")
        if lang == "en"
        else ("zh/404.html", "/404.html", "页面不存在", "Page not found")
    )
    browser.get(server + path)
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == heading
    assert browser.find_element(By.CSS_SELECTOR, "form.xlakb-404-search input[name=q]").is_displayed()
    _paste(browser, _scalar_log())
    _submit(browser)
    match = wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".xlakb-triage-match"))
    href = match.find_element(By.CSS_SELECTOR, "h3 a").get_attribute("href")
    assert urlsplit(href).path == f"/{'' if lang == 'en' else 'zh/'}records/{SCALAR}/"
    link = browser.find_element(By.CSS_SELECTOR, f"a.md-select__link[hreflang='{'zh' if lang == 'en' else 'en'}']")
    assert urlsplit(link.get_attribute("href")).path == other
    browser.get(link.get_attribute("href"))
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == other_heading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_paste_answer_leads_with_words_and_keeps_patterns_under_how_it_was_matched(browser, server, lang):
    """Every answer to the reproducer logs of the first records: the record's words first (the error, what it is,
    which release fixes it, the workaround); no regular expression outside a <details> element."""
    from selenium.webdriver.common.by import By
    from sitetest import regexes_outside_details

    browser.get(f"{server}{'' if lang == 'en' else 'zh/'}triage/")
    _paste_box_ready(browser)
    logs = sorted((CORPUS / "positive").glob("*.log"))[::6]
    seen = 0
    for path in logs:
        _paste(browser, path.read_text("utf-8"))
        _submit(browser)
        answer = browser.find_element(By.CSS_SELECTOR, ".xlakb-triage-result").get_attribute("innerHTML")
        assert regexes_outside_details(answer) == [], path.name
        for match in browser.find_elements(By.CSS_SELECTOR, ".xlakb-triage-match"):
            parts = match.get_attribute("innerHTML")
            order = [
                parts.find(f'class="{c}"')
                for c in ("xlakb-triage-summary", "xlakb-triage-advice", "xlakb-triage-workaround", "xlakb-triage-how")
            ]
            assert -1 not in order and order == sorted(order), path.name
            seen += 1
    assert seen >= len(logs) // 2


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
    pages = ["", "triage/", "coverage/", "contributing/", "404.html"] + [f"records/{rid}/" for rid in real]
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

    def listed(d):  # a page's hit: the first link of its item (the others are its sections)
        return d.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('.md-search-result__list > li:not([hidden])'),"
            " function (li) { var a = li.querySelector('a[href]'); return a ? new URL(a.href).pathname : ''; });"
        )

    # search.js hides a page Material lists again after its own entries; on a busy machine that comes a moment
    # after the list settles, so wait for the state checked (a page listed twice stays a failure after the wait)
    from selenium.common.exceptions import TimeoutException

    try:
        wait(browser, lambda d: len(listed(d)) == len(set(listed(d))), 20)
    except TimeoutException:  # the assertion below names the duplicates
        pass
    paths = listed(browser)
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
