"""The release table and the package index, against a real simple-API server on 127.0.0.1 (JSON and HTML)."""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from xlakb.candidates.releases import all_releases, published_versions, release, releases_between
from xlakb.errors import XlakbError


def serve(versions, *, mode="json", sdist=False):
    """A simple-API index on 127.0.0.1 listing torch-xla ``versions``.

    ``mode``: "json" (PEP 691, honouring the Accept header like PyPI), "html-only" (PEP 503 HTML
    whatever is asked, as some mirrors do), "bad-type" (a content type that is neither),
    "bad-json" (says JSON, sends HTML), "binary" (says HTML, sends bytes that are not UTF-8)."""
    seen: list[str] = []
    files = [f"torch_xla-{v}-cp311-cp311-manylinux_2_28_x86_64.whl" for v in versions] + (
        ["torch_xla-1.13.tar.gz"] if sdist else []
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Accept", ""))
            if self.path.rstrip("/") != "/simple/torch-xla":
                self.send_error(404)
                return
            html = (
                "<!DOCTYPE html><html><head><title>Links for torch-xla</title></head><body><h1>Links for torch-xla</h1>"
                + "".join(f'<a href="../../packages/{f}#sha256=00">{f}</a><br/>' for f in files)
                + '<a href="https://example.invalid/weird">not-a-distribution</a></body></html>'
            ).encode()
            wants_json = "application/vnd.pypi.simple.v1+json" in (self.headers.get("Accept") or "")
            if mode == "json" and wants_json:
                body = json.dumps(
                    {
                        "meta": {"api-version": "1.1"},
                        "name": "torch-xla",
                        "files": [{"filename": f, "url": f"../../packages/{f}"} for f in files],
                    }
                ).encode()
                ctype = "application/vnd.pypi.simple.v1+json"
            elif mode in ("json", "html-only"):
                body, ctype = html, "text/html; charset=utf-8"
            elif mode == "bad-type":
                body, ctype = b"versions: 2.1.0", "text/plain"
            elif mode == "bad-json":
                body, ctype = html, "application/vnd.pypi.simple.v1+json"
            else:
                body, ctype = b"\xff\xfe\x00<a>" * 8, "text/html"
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.seen = seen
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/simple"


def test_table_pairs_and_pins():
    assert release("2.6.1").torch == "2.6.0" and release("2.8.1").torch == "2.8.0"
    assert "numpy<2" in release("2.1.0").pins and release("2.9.0").pins == ()
    assert [c.label for c in releases_between("2.5.0", "2.6.1")] == ["2.5.0", "2.5.1", "2.6.0", "2.6.1"]
    with pytest.raises(XlakbError, match="after its end"):
        releases_between("2.7.0", "2.6.0")


def test_published_versions_and_check(tmp_path):
    server, url = serve(all_releases() + ["2.1.0rc5", "3.0.0"])
    try:
        assert published_versions(url) == all_releases() + ["3.0.0"]  # pre-releases left out
        r = subprocess.run(
            [sys.executable, "-m", "xlakb", "--root", str(tmp_path), "releases", "--check", "--index-url", url],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 1 and "not in the release table" in r.stderr and "3.0.0" in r.stderr
    finally:
        server.shutdown()
    server, url = serve(all_releases())
    try:
        r = subprocess.run(
            [sys.executable, "-m", "xlakb", "releases", "--check", "--index-url", url], capture_output=True, text=True
        )
        assert r.returncode == 0 and f"covers all {len(all_releases())} published releases" in r.stdout
    finally:
        server.shutdown()


def test_unreachable_index_is_one_clear_error():
    with pytest.raises(XlakbError, match="cannot read the package index at http://127.0.0.1:9/simple/torch-xla/"):
        published_versions("http://127.0.0.1:9/simple", timeout=2)


@pytest.mark.parametrize("mode", ["json", "html-only"])
def test_json_preferred_html_accepted(mode):
    server, url = serve(all_releases() + ["2.10.0rc1"], mode=mode, sdist=True)
    try:
        # 1.13 comes from an sdist; pre-releases and links that are no distribution are left out
        assert published_versions(url) == ["1.13"] + all_releases()
        accept = server.seen[-1]
        assert accept.index("vnd.pypi.simple.v1+json") < accept.index("text/html")  # JSON asked for first
    finally:
        server.shutdown()


def test_check_reads_an_html_only_index(tmp_path):
    server, url = serve(all_releases() + ["3.0.0"], mode="html-only", sdist=True)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "xlakb", "releases", "--check", "--index-url", url], capture_output=True, text=True
        )
        assert r.returncode == 1 and r.stderr.strip().endswith("releases.yaml): 1.13, 3.0.0"), r.stderr
    finally:
        server.shutdown()


@pytest.mark.parametrize(
    "mode,said",
    [
        ("bad-type", "content type 'text/plain', neither PEP 691 JSON nor PEP 503 HTML"),
        ("bad-json", "says application/vnd.pypi.simple.v1+json but the body is not JSON"),
        ("binary", "says text/html but the body is not UTF-8 text"),
    ],
)
def test_unreadable_answers_are_one_line(mode, said):
    server, url = serve(all_releases(), mode=mode)
    try:
        with pytest.raises(XlakbError) as err:
            published_versions(url)
        text = str(err.value)
        assert f"cannot read the package index at {url}/torch-xla/" in text and said in text and "\n" not in text
        r = subprocess.run(
            [sys.executable, "-m", "xlakb", "releases", "--check", "--index-url", url], capture_output=True, text=True
        )
        assert r.returncode == 1 and said in r.stderr and "Traceback" not in r.stderr
        assert len([ln for ln in r.stderr.splitlines() if ln.startswith("xlakb: error")]) == 1
    finally:
        server.shutdown()
