"""Fixtures for the site tests: a scratch copy of the repository's site sources with the
real records plus generated ones, built once per session; a local HTTP server; Chromium."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest
from sitetest import BISECTED, CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS, REPO, UNMEASURED

import sitesynthetic as synthetic
from xlakb.sitegen.build import build_site


@pytest.fixture(scope="session")
def layout(tmp_path_factory) -> Path:
    """Real records (whatever exists in issues/ now) + 12 generated ones + stand-ins, in a tmp copy."""
    root = synthetic.make_layout(tmp_path_factory.mktemp("site") / "kb", REPO)
    synthetic.populate(root, 12, seed=7)
    # One record without any measured data: its page must say "not measured yet".
    data = synthetic.record(
        UNMEASURED,
        title_en="Unmeasured synthetic record",
        title_zh="尚未实测的测试记录",
        summary_en="A record with no results yet.",
        summary_zh="一条还没有结果的记录。",
        symptoms_en=["SyntheticUnmeasured"],
        symptoms_zh=["SyntheticUnmeasured 出现"],
        signature="SyntheticUnmeasured",
        component="runtime",
        tags=["crash"],
        issue=4242,
    )
    synthetic.write_record(root, data)
    shutil.rmtree(root / "bisect" / UNMEASURED, ignore_errors=True)
    # A generated record with a matrix and a bisection report linking commits and PRs.
    data = synthetic.record(
        BISECTED,
        title_en="Bisected synthetic record",
        title_zh="已二分查找的测试记录",
        summary_en="A record with a bisection report.",
        summary_zh="一条带有二分查找报告的记录。",
        symptoms_en=["SyntheticBisected"],
        symptoms_zh=["SyntheticBisected 出现"],
        signature="SyntheticBisected",
        component="spmd",
        tags=["sharding"],
        issue=4343,
    )
    synthetic.write_record(root, data)
    synthetic.write_matrix(root, data)
    synthetic.write_bisect(root, data)
    return root


@pytest.fixture(scope="session")
def built(layout) -> Path:
    return build_site(layout, layout / "build" / "site")


@pytest.fixture(scope="session")
def indexes(built) -> dict[str, dict]:
    return {
        "en": json.loads((built / "search" / "search_index.json").read_text("utf-8")),
        "zh": json.loads((built / "zh" / "search" / "search_index.json").read_text("utf-8")),
    }


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="session")
def server(built):
    """The built site over HTTP on 127.0.0.1, a random port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(built)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Debian's headless Chromium driven by Selenium through /usr/bin/chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.exists():
            pytest.fail(f"{binary} is missing: run .ci/setup-site.sh (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console errors, read by the tests
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
