"""A small fake pytorch/xla: a real git history, wheels built from it, a nightly server.

Used by the commit, nightly and narrowing bisection tests.  The package in the
history is the fake ``torch_xla`` the reproducers in :mod:`fakewheels` read
(``BUG``; ``BUG2`` for a second bug), so a wheel "built at commit N" behaves as
commit N's Python says, and an overlay of commit M on it behaves as M says.

First-parent history of ``master`` (index: subject — what changes), two commits a
day from 2024-11-01 (index i at day i // 2, 10:00 or 16:00 UTC)::

     0  Initial import                            everything (BUG = none, BUG2 = none)
     1  Test change 1 (#101)                      test/
     2  Tidy up xla_model helpers (#102)          python            tag v2.5.1
     3  Document the debug variables (#103)       docs
     4  Test the helpers (#104)                   test/
     5  Clean up imports (#105)                   python
     6  Merge pull request #106 from dev/feature  torch_xla/feature.py (two branch commits)
     7  Drop the sharding API for a refactor (#107)   BUG = missing-api (untestable)
     8  Bring the sharding API back (#108)        BUG = none
     9..11                                        python / test fillers
    12  Cache sharding specs by list (#112)       BUG = present      <- bug introduced (Python only)
    13..15                                        fillers
    16  Start rewriting the mark API (#116)       BUG2 = missing-api
    17  Speed up the C++ lowering (#117)          torch_xla/csrc/x.cpp only (native)
    18  Finish the mark API rewrite (#118)        BUG2 = present     <- second bug introduced
    19..21                                        fillers
    22  Hash sharding specs as tuples (#122)      BUG = none         <- bug fixed (Python only)
    23..31                                        fillers            tag v2.6.0 at 26

Fillers: "Document change i (#1ii)" (docs/), "Test change i" (test/), "Refine helper i" (python).

``torch_xla/version.py`` is generated at build time (ignored by git, as upstream);
wheels carry it with ``__xla_gitrev__`` set to the commit they were built from.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import git

from fakewheels import build_wheel

CULPRIT, NATIVE, CULPRIT2, FIX, SKIP = 12, 17, 18, 22, 7
BASE_OLD, BASE_NEW = 2, 26
LENGTH = 32
DAY0 = _dt.date(2024, 11, 1)
NIGHTLY_TAG = "cp311-cp311-linux_x86_64"
TORCH_TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _init(bug: str = "none", bug2: str = "none", extra: str = "") -> str:
    return f"from .version import __version__, __xla_gitrev__\nBUG = {bug!r}\nBUG2 = {bug2!r}\n{extra}"


def _cpp(n: int) -> str:
    return f"int lower() {{ return {n}; }}\n"


class FakeHistory:
    def __init__(self, root: Path) -> None:
        self.path = root / "xla"
        self.repo = git.Repo.init(self.path, initial_branch="master")
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Tester")
            cw.set_value("user", "email", "tester@example.com")
        self.sha: list[str] = []
        self.subject: list[str] = []
        bug, bug2, helpers = "none", "none", 0
        for i in range(LENGTH):
            pr = 100 + i
            files: dict[str, str] = {}
            if i == 0:
                subject = "Initial import"
                files = {
                    ".gitignore": "torch_xla/version.py\nbuild/\n",
                    "torch_xla/__init__.py": _init(),
                    "torch_xla/core/__init__.py": "",
                    "torch_xla/core/xla_model.py": "def helper():\n    return 0\n",
                    "torch_xla/csrc/x.cpp": _cpp(0),
                    "setup.py": "from setuptools import setup\nsetup(name='torch_xla')\n",
                    "README.md": "# fake xla\n",
                }
            elif i == 6:
                self._merge(pr)
                continue
            elif i == SKIP:
                bug, subject = "missing-api", f"Drop the sharding API for a refactor (#{pr})"
            elif i == SKIP + 1:
                bug, subject = "none", f"Bring the sharding API back (#{pr})"
            elif i == CULPRIT:
                bug, subject = "present", f"Cache sharding specs by list (#{pr})"
            elif i == 16:
                bug2, subject = "missing-api", f"Start rewriting the mark API (#{pr})"
            elif i == NATIVE:
                subject, files = f"Speed up the C++ lowering (#{pr})", {"torch_xla/csrc/x.cpp": _cpp(1)}
            elif i == CULPRIT2:
                bug2, subject = "present", f"Finish the mark API rewrite (#{pr})"
            elif i == FIX:
                bug, subject = "none", f"Hash sharding specs as tuples (#{pr})"
            elif i % 3 == 0:
                subject, files = f"Document change {i} (#{pr})", {f"docs/note{i}.md": f"note {i}\n"}
            elif i % 3 == 1:
                subject, files = f"Test change {i} (#{pr})", {f"test/test_{i}.py": "def test():\n    pass\n"}
            else:
                helpers += 1
                subject = f"Refine helper {i} (#{pr})"
                files = {"torch_xla/core/xla_model.py": f"def helper():\n    return {helpers}\n"}
            if i in (SKIP, SKIP + 1, CULPRIT, 16, CULPRIT2, FIX):
                files["torch_xla/__init__.py"] = _init(bug, bug2, self._feature_import(i))
            self._commit(subject, files, self.when(i))
        self.repo.create_tag("v2.5.1", ref=self.sha[BASE_OLD])
        self.repo.create_tag("v2.6.0", ref=self.sha[BASE_NEW])

    @staticmethod
    def _feature_import(i: int) -> str:
        return "from . import feature\n" if i > 6 else ""

    @staticmethod
    def when(i: int, minute: int = 0) -> int:
        day = DAY0 + _dt.timedelta(days=i // 2)
        return calendar.timegm((day.year, day.month, day.day, 10 if i % 2 == 0 else 16, minute, 0))

    def _commit(self, subject: str, files: dict[str, str], when: int, parents=None, record: bool = True) -> str:
        for rel, text in files.items():
            p = self.path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        if files:
            self.repo.index.add(list(files))
        stamp = f"{when} +0000"
        c = self.repo.index.commit(subject, parent_commits=parents, author_date=stamp, commit_date=stamp)
        if record:
            self.sha.append(c.hexsha)
            self.subject.append(subject)
        return c.hexsha

    def _merge(self, pr: int) -> None:
        """A feature branch merged with a merge commit (not squashed)."""
        master = self.repo.heads.master
        tip = self.sha[-1]
        branch = self.repo.create_head("dev/feature", tip)
        branch.checkout()
        f1 = self._commit("wip feature", {"torch_xla/feature.py": "X = 1\n"}, self.when(6, 5) - 3600, record=False)
        f2 = self._commit("feature done", {"torch_xla/feature.py": "X = 2\n"}, self.when(6, 10) - 3600, record=False)
        master.checkout()
        self._commit(
            f"Merge pull request #{pr} from dev/feature",
            {"torch_xla/feature.py": "X = 2\n"},
            self.when(6),
            parents=(self.repo.commit(tip), self.repo.commit(f2)),
        )
        assert f1 != f2

    # ---------------------------------------------------------------- queries
    def index_of_pr(self, pr: int) -> int:
        return pr - 100

    def label(self, i: int) -> str:
        sha = self.sha[i]
        return f"{sha[:8]} (#{100 + i})" if i else sha[:8]

    def package_files(self, i: int) -> dict[str, str]:
        """The torch_xla/*.py files of commit ``i`` (paths relative to the repo)."""
        tree = self.repo.commit(self.sha[i]).tree / "torch_xla"
        return {
            item.path: item.data_stream.read().decode()
            for item in tree.traverse()
            if item.type == "blob" and item.path.endswith(".py")
        }

    def nightly_index(self, day: _dt.date) -> int:
        """The commit the nightly of ``day`` is built from: the last one before that day began (UTC)."""
        start = calendar.timegm((day.year, day.month, day.day, 0, 0, 0))
        return max(i for i in range(LENGTH) if self.when(i) < start)

    # ---------------------------------------------------------------- wheels
    def torch_xla_wheel(self, dest: Path, version: str, i: int, tag: str = "py3-none-any") -> Path:
        """A torch_xla wheel "built at" commit ``i``: its Python, a generated version.py, a fake binary."""
        files = self.package_files(i)
        files["torch_xla/version.py"] = f"__version__ = {version!r}\n__xla_gitrev__ = {self.sha[i]!r}\n"
        cpp = (self.repo.commit(self.sha[i]).tree / "torch_xla/csrc/x.cpp").data_stream.read().decode()
        files["torch_xla/_XLAC.cpython-311-x86_64-linux-gnu.so"] = f"fake binary built from: {cpp}"
        return build_wheel(dest, "torch_xla", version, files, tag=tag)


def torch_wheel(dest: Path, version: str, tag: str = "py3-none-any") -> Path:
    return build_wheel(dest, "torch", version, {"torch/__init__.py": f"__version__ = {version!r}\n"}, tag=tag)


# -------------------------------------------------------------------- nightly server
XLA_TEMPLATE = "/xla/torch_xla-{version}.dev{date}-{py}-{py}-linux_x86_64.whl"
TORCH_TEMPLATE = "/torch/torch-{version}.dev{date}%2Bcpu-{py}-{py}-manylinux_2_28_x86_64.whl"


class NightlyServer:
    """A real HTTP server on 127.0.0.1 serving files from memory and counting requests."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.gets: Counter[str] = Counter()
        self.heads: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _lookup(self, count: Counter) -> bytes | None:
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                with server.lock:
                    count[path] += 1
                data = server.files.get(path)
                if data is None:
                    self.send_error(404, "Not Found")
                return data

            def do_HEAD(self) -> None:
                data = self._lookup(server.heads)
                if data is not None:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()

            def do_GET(self) -> None:
                data = self._lookup(server.gets)
                if data is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def torch_xla_url(self) -> str:
        return self.base + XLA_TEMPLATE

    @property
    def torch_url(self) -> str:
        return self.base + TORCH_TEMPLATE

    def publish(self, wheel: Path, template: str, *, date: _dt.date, version: str) -> str:
        """Serve ``wheel`` at the path ``template`` gives for this day (its file name must be the template's)."""
        path = urllib.parse.unquote(template.format(date=date.strftime("%Y%m%d"), version=version, py="cp311"))
        assert path.rsplit("/", 1)[1] == wheel.name, (path, wheel.name)
        self.files[path] = wheel.read_bytes()
        return path

    def wheel_gets(self) -> Counter[str]:
        with self.lock:
            return Counter({p: n for p, n in self.gets.items() if p.endswith(".whl")})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def publish_nightly(
    server: NightlyServer, house: Path, day: _dt.date, version: str, wheel_of, *, torch: bool = True, torch_xla: bool = True
) -> None:
    """Build and serve the two nightly wheels of ``day``; ``wheel_of(dest, full_version, tag)`` builds torch_xla."""
    stamp = day.strftime("%Y%m%d")
    full = f"{version}.dev{stamp}"
    if torch_xla:
        server.publish(wheel_of(house, full, NIGHTLY_TAG), XLA_TEMPLATE, date=day, version=version)
    if torch:
        server.publish(torch_wheel(house, f"{full}+cpu", TORCH_TAG), TORCH_TEMPLATE, date=day, version=version)
