"""The release table and the package index, against a real PEP 691 server on 127.0.0.1."""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from xlakb.candidates.releases import all_releases, published_versions, release, releases_between
from xlakb.errors import XlakbError


def serve(versions):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.rstrip("/") != "/simple/torch-xla":
                self.send_error(404)
                return
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "torch-xla", "versions": versions,
                               "files": [{"filename": f"torch_xla-{v}-cp311-cp311-manylinux_2_28_x86_64.whl"} for v in versions]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
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
        r = subprocess.run([sys.executable, "-m", "xlakb", "--root", str(tmp_path), "releases", "--check", "--index-url", url],
                           capture_output=True, text=True)
        assert r.returncode == 1 and "not in the release table" in r.stderr and "3.0.0" in r.stderr
    finally:
        server.shutdown()
    server, url = serve(all_releases())
    try:
        r = subprocess.run([sys.executable, "-m", "xlakb", "releases", "--check", "--index-url", url], capture_output=True, text=True)
        assert r.returncode == 0 and f"covers all {len(all_releases())} published releases" in r.stdout
    finally:
        server.shutdown()


def test_unreachable_index_is_one_clear_error():
    with pytest.raises(XlakbError, match="cannot read the package index at http://127.0.0.1:9/simple/torch-xla/"):
        published_versions("http://127.0.0.1:9/simple", timeout=2)
