"""Tests of xlakb.candidates.nightlies against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import threading
import time
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from xlakb.candidates import Candidate
from xlakb.candidates.nightlies import (
    DEFAULT_TORCH_URL,
    DEFAULT_TORCH_XLA_URL,
    ENV_TORCH_URL,
    ENV_TORCH_XLA_URL,
    WheelCache,
    WheelNotFound,
    fetch_nightly,
    format_url,
    list_nightlies,
    nightly_templates,
)
from xlakb.errors import XlakbError
from xlakb.progress import RecordingProgress

XLA_NAME = "torch_xla-{v}.dev{d}-cp311-cp311-linux_x86_64.whl"
TORCH_NAME = "torch-{v}.dev{d}+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"


def wheel_bytes(name: str, size: int = 5000) -> bytes:
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


class Site:
    """What the fake server serves, and what it was asked."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: dict[str, int] = {}  # path -> bytes actually sent
        self.slow: set[str] = set()
        self.fail: set[str] = set()  # path -> HTTP 500
        self.gets: Counter[str] = Counter()
        self.heads: Counter[str] = Counter()
        self.lock = threading.Lock()

    def add(self, path: str, data: bytes) -> bytes:
        self.files[path] = data
        return data


class Handler(BaseHTTPRequestHandler):
    site: Site

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _lookup(self, count: Counter) -> tuple[str, bytes | None]:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        with self.site.lock:
            count[path] += 1
        if path in self.site.fail:
            self.send_error(500, "boom")
            return path, None
        data = self.site.files.get(path)
        if data is None:
            self.send_error(404, "Not Found")
        return path, data

    def do_HEAD(self) -> None:
        path, data = self._lookup(self.site.heads)
        if data is None:
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()

    def do_GET(self) -> None:
        path, data = self._lookup(self.site.gets)
        if data is None:
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if path in self.site.slow:
            time.sleep(0.3)
        sent = self.site.truncate.get(path, len(data))
        self.wfile.write(data[:sent])
        self.wfile.flush()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.delenv(ENV_TORCH_XLA_URL, raising=False)
    monkeypatch.delenv(ENV_TORCH_URL, raising=False)


@pytest.fixture
def server():
    site = Site()
    handler = type("H", (Handler,), {"site": site})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield site, base
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def nightly_site(server):
    """Nightlies 2025-01-01..06: 03 has no torch_xla, 04 no torch, 06 only exists as 2.8.0."""
    site, base = server
    for day in range(1, 7):
        d = f"202501{day:02d}"
        v = "2.8.0" if day == 6 else "2.7.0"
        if day != 3:
            site.add("/xla/" + XLA_NAME.format(v=v, d=d), wheel_bytes(XLA_NAME.format(v=v, d=d)))
        if day != 4:
            site.add("/torch/" + TORCH_NAME.format(v=v, d=d), wheel_bytes(TORCH_NAME.format(v=v, d=d), 7000))
    templates = {
        "torch_xla_url": base + "/xla/torch_xla-{version}.dev{date}-{py}-{py}-linux_x86_64.whl",
        "torch_url": base + "/torch/torch-{version}.dev{date}%2Bcpu-{py}-{py}-manylinux_2_28_x86_64.whl",
    }
    return site, base, templates


# ------------------------------------------------------------------ templates
def test_default_templates_follow_public_naming():
    assert nightly_templates() == (DEFAULT_TORCH_XLA_URL, DEFAULT_TORCH_URL)
    assert format_url(DEFAULT_TORCH_XLA_URL, date="2024-08-20", version="2.5.0", py="cp310") == (
        "https://storage.googleapis.com/pytorch-xla-releases/wheels/tpuvm/"
        "torch_xla-2.5.0.dev20240820-cp310-cp310-linux_x86_64.whl"
    )
    assert format_url(DEFAULT_TORCH_URL, date="20250116", version="2.7.0", py="cp311") == (
        "https://download.pytorch.org/whl/nightly/cpu/torch-2.7.0.dev20250116%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    )


def test_template_overrides(monkeypatch):
    monkeypatch.setenv(ENV_TORCH_XLA_URL, "https://mirror.example/xla-{date}-{py}.whl")
    monkeypatch.setenv(ENV_TORCH_URL, "https://mirror.example/torch-{date}.whl")
    assert nightly_templates() == ("https://mirror.example/xla-{date}-{py}.whl", "https://mirror.example/torch-{date}.whl")
    xla, torch = nightly_templates(torch_xla_url="file:///w/x-{version}-{date}.whl")
    assert xla == "file:///w/x-{version}-{date}.whl" and torch == "https://mirror.example/torch-{date}.whl"


@pytest.mark.parametrize(
    "template,message",
    [
        ("https://x/{date}-{abi}.whl", r"unknown placeholder\(s\) \['abi'\]"),
        ("https://x/{version}.whl", "no {date} placeholder"),
        ("https://x/{date.whl", "malformed"),
    ],
)
def test_bad_templates(template, message):
    with pytest.raises(XlakbError, match=message):
        nightly_templates(torch_xla_url=template)


# ------------------------------------------------------------------ listing
def test_list_leaves_missing_days_out(nightly_site):
    site, base, templates = nightly_site
    progress = RecordingProgress()
    got = list_nightlies("2025-01-01", "2025-01-06", versions=["2.7.0", "2.8.0"], progress=progress, **templates)
    assert [c.label for c in got] == ["nightly 2025-01-01", "nightly 2025-01-02", "nightly 2025-01-05", "nightly 2025-01-06"]
    assert got.missing == ["2025-01-03", "2025-01-04"]
    assert all(c.kind == "nightly" and c.torch_xla == "" and c.torch == "" for c in got)
    last = got[-1].meta
    assert last["torch_xla_version"] == "2.8.0.dev20250106" and last["torch_version"] == "2.8.0.dev20250106"
    assert last["torch_xla_size"] == 5000 and last["torch_size"] == 7000
    assert last["torch_xla_url"] == base + "/xla/" + XLA_NAME.format(v="2.8.0", d="20250106")
    assert sum(site.gets.values()) == 0  # listing downloads nothing
    assert ("info", "no nightly wheel for 2 day(s): 2025-01-03, 2025-01-04") in progress.events
    assert progress.events[-2][:3] == ("step", 6, 6)


def test_list_can_keep_missing_days_marked(nightly_site, tmp_path):
    site, base, templates = nightly_site
    got = list_nightlies("2025-01-02", "2025-01-05", versions="2.7.0", include_missing=True, **templates)
    assert [c.meta["missing"] for c in got] == [False, True, True, False]
    assert got[1].meta["why"] == "no torch_xla wheel" and got[2].meta["why"] == "no torch wheel"
    with pytest.raises(WheelNotFound, match="nightly 2025-01-03 has no torch_xla wheel"):
        fetch_nightly(got[1], WheelCache(tmp_path))


def test_list_without_check_makes_no_request(nightly_site):
    site, base, templates = nightly_site
    got = list_nightlies("2025-01-01", "2025-01-06", versions="2.7.0", check=False, **templates)
    assert len(got) == 6 and got.missing == []
    assert sum(site.heads.values()) == sum(site.gets.values()) == 0


@pytest.mark.parametrize(
    "start,end,message",
    [
        ("2025-01-05", "2025-01-01", "before start date"),
        ("2025-01-05", "2025-01-05", "single day"),
        ("2025-13-01", "2025-01-05", "is not a date"),
        ("2020-01-01", "2025-01-05", "more than 400"),
    ],
)
def test_list_errors(start, end, message):
    with pytest.raises(XlakbError, match=message):
        list_nightlies(start, end, versions="2.7.0", check=False)


def test_server_error_is_not_a_missing_day(nightly_site):
    site, base, templates = nightly_site
    site.fail.add("/xla/" + XLA_NAME.format(v="2.7.0", d="20250102"))
    with pytest.raises(XlakbError, match="HTTP 500") as err:
        list_nightlies("2025-01-01", "2025-01-02", versions="2.7.0", **templates)
    assert not isinstance(err.value, WheelNotFound)


# ------------------------------------------------------------------ downloads
def test_fetch_downloads_once(nightly_site, tmp_path):
    site, base, templates = nightly_site
    got = list_nightlies("2025-01-01", "2025-01-02", versions="2.7.0", **templates)
    cache = WheelCache(tmp_path / "cache", chunk_size=512)
    progress = RecordingProgress()
    ready = fetch_nightly(got[0], cache, progress=progress)
    xla_name = XLA_NAME.format(v="2.7.0", d="20250101")
    torch_name = TORCH_NAME.format(v="2.7.0", d="20250101")
    assert Path(ready.torch_xla).name == xla_name and Path(ready.torch).name == torch_name  # "+" decoded
    assert Path(ready.torch_xla).read_bytes() == site.files["/xla/" + xla_name]
    assert Path(ready.torch).read_bytes() == site.files["/torch/" + torch_name]
    assert Path(ready.torch_xla).is_relative_to(tmp_path / "cache")
    assert ready.meta["torch_xla_sha256"] == hashlib.sha256(site.files["/xla/" + xla_name]).hexdigest()
    assert ready.label == got[0].label and got[0].torch_xla == ""  # the listed candidate is unchanged
    # progress: chunked, growing, ending at the size
    events = [e for e in progress.events if e[0] == "download" and e[1] == xla_name]
    assert events[0][2:] == (0, 5000) and events[-1][2:] == (5000, 5000) and len(events) > 5
    assert [e[2] for e in events] == sorted(e[2] for e in events)
    # again, and from another cache object on the same directory: no new GET
    again = fetch_nightly(got[0], cache)
    other = fetch_nightly(got[0], WheelCache(tmp_path / "cache"))
    assert again.torch_xla == other.torch_xla == ready.torch_xla
    assert site.gets["/xla/" + xla_name] == 1 and site.gets["/torch/" + torch_name] == 1


def test_concurrent_callers_download_once(server, tmp_path):
    site, base = server
    data = site.add("/slow/w.whl", wheel_bytes("slow", 20000))
    site.slow.add("/slow/w.whl")
    cache = WheelCache(tmp_path)
    results: list[Path] = []
    errors: list[BaseException] = []

    def worker():
        try:
            results.append(cache.get(base + "/slow/w.whl"))
        except BaseException as e:  # noqa: BLE001 - pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(results) == 4 and len(set(results)) == 1
    assert results[0].read_bytes() == data
    assert site.gets["/slow/w.whl"] == 1


def leftovers(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.rglob("*") if p.is_file() and not p.name.endswith(".lock"))


def test_truncated_download_is_rejected_and_not_cached(server, tmp_path):
    site, base = server
    site.add("/bad/truncated.whl", wheel_bytes("t", 3000))
    site.truncate["/bad/truncated.whl"] = 1000
    cache = WheelCache(tmp_path)
    url = base + "/bad/truncated.whl"
    for attempt in (1, 2):  # nothing is cached, so the second call downloads again
        with pytest.raises(XlakbError, match="truncated: got 1000 of 3000 bytes"):
            cache.get(url)
        assert site.gets["/bad/truncated.whl"] == attempt
    assert cache.cached(url) is None and leftovers(tmp_path) == []


def test_checksum_sidecar(server, tmp_path):
    site, base = server
    good = site.add("/sum/good.whl", wheel_bytes("good"))
    site.add("/sum/good.whl.sha256", f"{hashlib.sha256(good).hexdigest()}  good.whl\n".encode())
    site.add("/sum/corrupt.whl", wheel_bytes("corrupt"))
    site.add("/sum/corrupt.whl.sha256", hashlib.sha256(b"something else").hexdigest().encode())
    site.add("/sum/garbled.whl", wheel_bytes("garbled"))
    site.add("/sum/garbled.whl.sha256", b"<html>not a checksum</html>")
    cache = WheelCache(tmp_path)
    path = cache.get(base + "/sum/good.whl")
    assert path.read_bytes() == good
    assert cache.record(base + "/sum/good.whl")["verified_against"] == base + "/sum/good.whl.sha256"
    with pytest.raises(XlakbError, match="corrupt: sha256 .* differs from"):
        cache.get(base + "/sum/corrupt.whl")
    assert cache.cached(base + "/sum/corrupt.whl") is None
    with pytest.raises(XlakbError, match="is not a sha256 hex digest"):
        cache.get(base + "/sum/garbled.whl")
    assert leftovers(tmp_path) == ["download.json", "good.whl"]
    # without sidecars the corrupt file is accepted as is: the check is what rejected it
    assert cache.get(base + "/sum/corrupt.whl", sidecar=False).read_bytes() == site.files["/sum/corrupt.whl"]


def test_checksum_fragment_and_argument(server, tmp_path):
    site, base = server
    data = site.add("/frag/w.whl", wheel_bytes("frag"))
    right = hashlib.sha256(data).hexdigest()
    wrong = hashlib.sha256(b"x").hexdigest()
    cache = WheelCache(tmp_path)
    with pytest.raises(XlakbError, match="url fragment"):
        cache.get(f"{base}/frag/w.whl#sha256={wrong}")
    with pytest.raises(XlakbError, match="argument"):
        cache.get(f"{base}/frag/w.whl", sha256=wrong)
    path = cache.get(f"{base}/frag/w.whl#sha256={right}")
    assert path.read_bytes() == data
    assert cache.record(f"{base}/frag/w.whl")["sha256"] == right
    assert site.gets["/frag/w.whl.sha256"] == 0  # a known checksum needs no sidecar


def test_size_mismatch(server, tmp_path):
    site, base = server
    site.add("/size/w.whl", wheel_bytes("size", 1234))
    with pytest.raises(XlakbError, match="is 1234 bytes on the server, expected 999"):
        WheelCache(tmp_path).get(base + "/size/w.whl", size=999)
    assert leftovers(tmp_path) == []


def test_missing_and_failing_urls(server, tmp_path):
    site, base = server
    cache = WheelCache(tmp_path)
    with pytest.raises(WheelNotFound, match="HTTP 404"):
        cache.get(base + "/nope.whl")
    site.fail.add("/err.whl")
    with pytest.raises(XlakbError, match="HTTP 500") as err:
        cache.get(base + "/err.whl")
    assert not isinstance(err.value, WheelNotFound)
    with pytest.raises(XlakbError, match="downloading http://127.0.0.1:1/x.whl failed"):
        cache.get("http://127.0.0.1:1/x.whl", sidecar=False)


def test_file_url_templates(tmp_path):
    """Templates may point at a local directory of wheels (file://)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for d in ("20250101", "20250103"):
        (wheels / XLA_NAME.format(v="2.7.0", d=d)).write_bytes(wheel_bytes(d))
        (wheels / f"torch-2.7.0.dev{d}-cp311.whl").write_bytes(wheel_bytes("t" + d))
    got = list_nightlies(
        "2025-01-01",
        "2025-01-03",
        versions="2.7.0",
        torch_xla_url=wheels.as_uri() + "/torch_xla-{version}.dev{date}-{py}-{py}-linux_x86_64.whl",
        torch_url=wheels.as_uri() + "/torch-{version}.dev{date}-{py}.whl",
    )
    assert [c.meta["date"] for c in got] == ["2025-01-01", "2025-01-03"] and got.missing == ["2025-01-02"]
    ready = fetch_nightly(got[1], WheelCache(tmp_path / "cache"))
    assert Path(ready.torch).read_bytes() == wheel_bytes("t20250103")


def test_fetch_rejects_other_kinds(tmp_path):
    cand = Candidate(kind="release", label="2.5.1", torch_xla="2.5.1", torch="2.5.1")
    with pytest.raises(XlakbError, match="got a release candidate"):
        fetch_nightly(cand, WheelCache(tmp_path))
