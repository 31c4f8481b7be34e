"""Local virtualenvs made with uv, cached by exactly what they hold.

Layout under ``<cache>/envs/uv/``::

    <key>/venv/                 the virtualenv
    <key>/overlay/torch_xla/    (commits only) the commit's Python files over the wheel's package
    <key>/xlakb-env.json        the marker: written last, atomically; without it the
                                directory is a half-built leftover and is removed
    <key>.lock                  file lock held while building

A cached environment is reused after a cheap check (marker + interpreter
present), so a second request costs milliseconds; a new one is health-checked
(the installed versions are the ones asked for) before its marker is written.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from filelock import FileLock

from .. import proc
from ..errors import XlakbError
from ..progress import NullProgress, Progress
from . import EnvSpec, Prepared, cache_dir
from .cache import Entry, disk_usage, exclusive, is_in_use, touch
from .warm import Host, pool, server_env, site_dists

MARKER = "xlakb-env.json"
LAST_USED = ".last-used"  # its mtime: when the environment was last used (xlakb env list/prune)

_HEALTH = r"""
import json, sys
from importlib import metadata
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        out[name] = None
print(json.dumps(out))
"""


def find_uv() -> str:
    """The uv executable: ``$XLAKB_UV``, the one installed with xlakb, or one on PATH."""
    explicit = os.environ.get("XLAKB_UV")
    if explicit:
        return explicit
    try:
        from uv import find_uv_bin  # the PyPI package `uv`, a dependency of xlakb

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise XlakbError("uv not found", hint="pip install uv, or set XLAKB_UV to its path")


def find_python(version: str) -> str:
    """An interpreter for ``version`` ("3.11"): this one if it matches, else ``python3.11`` on PATH."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    found = shutil.which(f"python{version}")
    if found:
        return found
    raise XlakbError(
        f"no Python {version} interpreter found", hint=f"install python{version} or set environment.python in the record"
    )


def pinned_names(spec: EnvSpec) -> dict[str, str]:
    """Package name -> exact version for every ``name==version`` requirement (health check)."""
    out = {}
    for req in spec.requirements:
        if "==" in req and not req.endswith(".whl"):
            name, _, version = req.partition("==")
            out[name.strip().lower().replace("_", "-")] = version.strip()
    return out


class UvBackend:
    name = "uv"

    def __init__(self, root: Path | None = None) -> None:
        self.cache = root or cache_dir()
        self.root = self.cache / "envs" / "uv"
        self._dists: dict[str, dict] = {}  # environment key -> its distributions (an environment never changes)
        self._hosts: dict[str, tuple[Path, tuple]] = {}  # environment key -> its host's venv and what it adds

    def available(self) -> str | None:
        try:
            find_uv()
        except XlakbError as err:
            return str(err)
        return None

    def ready(self) -> str | None:
        return self.available()

    def path_for(self, spec: EnvSpec) -> Path:
        return self.root / spec.key()

    # -- the cache protocol: check, lock, check again -----------------------------
    def cached(self, spec: EnvSpec) -> Prepared | None:
        where = self.path_for(spec)
        marker = where / MARKER
        if not marker.is_file():
            return None
        try:
            info = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        python = where / "venv" / "bin" / "python"
        if not python.exists() or info.get("key") != spec.key():
            return None
        extra = (str(where / "overlay"),) if spec.overlay else ()
        touch(where / LAST_USED)
        return Prepared(self.name, spec.key(), spec, str(where), str(python), extra, info)

    def ensure(self, spec: EnvSpec, progress: Progress | None = None) -> Prepared:
        progress = progress or NullProgress()
        hit = self.cached(spec)
        if hit is not None:
            return hit
        self.root.mkdir(parents=True, exist_ok=True)
        base = None
        if spec.overlay:  # the binary environment first, under its own lock
            base = self.ensure(spec.base(), progress)
        with FileLock(str(self.root / f"{spec.key()}.lock")):
            hit = self.cached(spec)
            if hit is not None:
                return hit
            where = self.path_for(spec)
            if where.exists():
                progress.info(f"removing half-built environment {where}")
                shutil.rmtree(where)
            try:
                self._build(spec, where, base, progress)
            except BaseException:
                shutil.rmtree(where, ignore_errors=True)
                raise
        hit = self.cached(spec)
        if hit is None:  # removed right after its build (a prune, or a test's cache going away)
            raise XlakbError(f"environment {self.path_for(spec)} vanished right after it was built")
        return hit

    def _build(self, spec: EnvSpec, where: Path, base: Prepared | None, progress: Progress) -> None:
        start = time.monotonic()
        where.mkdir(parents=True)
        if base is not None:
            from .overlay import overlay_commit

            repo, sha = spec.overlay  # type: ignore[misc]
            progress.info(f"laying torch_xla/*.py of {sha[:10]} over {base.key}")
            installed = self._package_dir(base, "torch_xla")
            overlay_commit(Path(repo), sha, installed, where / "overlay")
            (where / "venv").symlink_to(Path(base.location) / "venv")
        else:
            uv = find_uv()
            env = self._uv_env()
            progress.info(f"creating virtualenv ({', '.join(spec.requirements)})")
            self._uv([uv, "venv", "--quiet", "--python", find_python(spec.python), str(where / "venv")], env, progress)
            # bytecode compiled once here: probes run with PYTHONDONTWRITEBYTECODE and would
            # otherwise recompile torch on every run (about 9 s per real torch_xla probe)
            cmd = [uv, "pip", "install", "--compile-bytecode", "--python", str(where / "venv" / "bin" / "python")]
            for link in spec.find_links:
                cmd += ["--find-links", link]
            if spec.index_url == "none":
                cmd += ["--no-index"]
            elif spec.index_url:
                cmd += ["--index-url", spec.index_url]
            cmd += list(spec.requirements)
            self._uv(cmd, env, progress)
        self._health_check(spec, where)
        info = {
            "key": spec.key(),
            "spec": spec.describe(),
            "built_s": round(time.monotonic() - start, 2),
            "built_at": time.time(),
        }
        tmp = where / (MARKER + ".tmp")
        tmp.write_text(json.dumps(info, indent=2))
        os.replace(tmp, where / MARKER)

    def _uv_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("UV_PYTHON_DOWNLOADS", "never")
        env.pop("VIRTUAL_ENV", None)
        return env

    def _uv(self, cmd: list[str], env: dict[str, str], progress: Progress) -> None:
        def relay(line: str) -> None:
            if line.strip() and any(w in line for w in ("Download", "Prepared", "Installed", "Resolved")):
                progress.info(line.strip())

        result = proc.run(cmd, env=env, on_line=relay)
        if result.exit_code != 0:
            lines = [ln.strip(" ×╰─▶│").strip() for ln in result.output.splitlines() if ln.strip()]
            lines = [ln.removeprefix("cause:").strip() for ln in lines]
            because = next((i for i, ln in enumerate(lines) if ln.startswith("Because")), None)
            if because is not None:  # uv wraps its explanation over several lines: join the sentence
                sentence = [lines[because]]
                for ln in lines[because + 1 :]:
                    if ln.startswith(("hint:", "help:", "error:", "warning:")):
                        break
                    sentence.append(ln)
                reason = " ".join(sentence)
            else:
                reason = next((ln for ln in lines if ln.startswith("error:")), None) or (
                    lines[-1] if lines else f"exit {result.exit_code}"
                )
            what = (
                "installing " + " ".join(a for a in cmd if "==" in a or a.endswith(".whl"))
                if "install" in cmd
                else "creating the virtualenv"
            )
            raise XlakbError(f"{what} failed: {reason}")

    def _package_dir(self, prepared: Prepared, package: str) -> Path:
        result = proc.run(
            [prepared.python, "-c", f"import importlib.util as u; print(u.find_spec('{package}').submodule_search_locations[0])"]
        )
        if result.exit_code != 0:
            raise XlakbError(f"{package} is not importable in environment {prepared.key}")
        return Path(result.output.strip().splitlines()[-1])

    def _health_check(self, spec: EnvSpec, where: Path) -> None:
        python = where / "venv" / "bin" / "python"
        wanted = pinned_names(spec)
        result = proc.run([str(python), "-c", _HEALTH, *wanted], timeout=120)
        if result.exit_code != 0:
            raise XlakbError(f"new environment {where} failed its health check: {result.output.strip()[-200:]}")
        found = json.loads(result.output.strip().splitlines()[-1])
        for name, version in wanted.items():
            if found.get(name) != version:
                raise XlakbError(f"new environment {where}: {name} is {found.get(name)}, wanted {version}")

    # -- running -------------------------------------------------------------------
    def run(
        self,
        prepared: Prepared,
        script: Path,
        *,
        env: Mapping[str, str],
        timeout: float,
        log_path: Path,
        on_line: Callable[[str], None] | None = None,
        args: Sequence[str] = (),
        warm: bool = False,
    ) -> proc.RunResult:
        touch(Path(prepared.location) / LAST_USED)
        script, log_path = Path(script).resolve(), Path(log_path).resolve()  # a server's own folder is its cwd
        full = _full_env(prepared, env)

        def cold() -> proc.RunResult:
            return proc.run(
                [prepared.python, str(script), *args],
                env=full,
                cwd=script.parent,
                timeout=timeout,
                log_path=log_path,
                on_line=on_line,
            )

        if not warm:
            return cold()
        return pool().run(
            prepared.python,
            script,
            args=args,
            env=full,
            release=_release(prepared.spec),
            cwd=script.parent,
            timeout=timeout,
            log_path=log_path,
            on_line=on_line,
            cold=cold,
            host=self.host(prepared, full),
        )

    def prestart(self, prepared: Prepared, env: Mapping[str, str]) -> None:
        full = _full_env(prepared, env)
        host = self.host(prepared, full)
        python, server = (host.python, host.env) if host is not None else (prepared.python, full)
        pool().start(python, server_env(_release(prepared.spec), server))

    # -- one warm server for environments that only add packages ---------------------
    def _site_dists(self, key: str, venv: Path) -> dict:
        if key not in self._dists:
            sites = sorted(venv.glob("lib/python*/site-packages"))
            self._dists[key] = site_dists(sites[0]) if len(sites) == 1 else {}
        return self._dists[key]

    def host(self, prepared: Prepared, env: Mapping[str, str]) -> Host | None:
        """The environment whose warm server may stand for ``prepared``'s (:class:`xlakb.envs.warm.Host`): the
        cached one of the same interpreter, index and wheelhouses whose requirements are fewest and all among
        ``prepared``'s, when ``prepared`` holds all its distributions at the same versions (what it adds is
        judged against the server's import when the server is up). None when there is none (or ``prepared``
        is a commit overlay: its files lie over the package, not beside it)."""
        spec = prepared.spec
        if spec.overlay or prepared.extra_path:
            return None
        mine = Path(prepared.location) / "venv"
        known = self._hosts.get(prepared.key)
        if known is None or not (known[0] / "bin" / "python").exists():  # found once, unless pruned since
            known = self._find_host(prepared, mine)
        if known is None:
            return None
        self._hosts[prepared.key] = known
        venv, extras = known
        host_env = dict(env)
        host_env["VIRTUAL_ENV"] = str(venv)
        host_env["PATH"] = str(venv / "bin") + env.get("PATH", "")[len(str(mine / "bin")) :]
        return Host(str(venv / "bin" / "python"), host_env, str(mine), prepared.python, extras)

    def _find_host(self, prepared: Prepared, mine: Path) -> tuple[Path, tuple] | None:
        """The host of :meth:`host` among the cached environments: its venv and the distributions ``prepared``
        adds to it."""
        spec = prepared.spec
        options = []
        for marker in self.root.glob(f"*/{MARKER}"):
            try:
                other = json.loads(marker.read_text()).get("spec") or {}
            except (OSError, ValueError):
                continue
            reqs = set(other.get("requirements") or ())
            if (
                other.get("overlay")
                or other.get("python") != spec.python
                or tuple(other.get("find_links") or ()) != tuple(spec.find_links)
                or other.get("index_url") != spec.index_url
                or not reqs < set(spec.requirements)
            ):
                continue
            options.append((len(reqs), marker.parent.name))
        for _, key in sorted(options):
            venv = self.root / key / "venv"
            if not (venv / "bin" / "python").exists() or _pyvenv(venv) != _pyvenv(mine) or not _pyvenv(mine):
                continue
            theirs, ours = self._site_dists(key, venv), self._site_dists(prepared.key, mine)
            if not theirs or any(ours.get(name) is None or ours[name].version != d.version for name, d in theirs.items()):
                continue
            return venv, tuple(d for name, d in sorted(ours.items()) if name not in theirs)
        return None

    def remove(self, key: str) -> bool:
        """Delete one environment unless a probe is using or building it; True when something was removed."""
        where = self.root / key
        if not where.exists():
            return False
        with exclusive(self.cache, self.name, key) as free:
            if not free:
                return False
            build = FileLock(str(self.root / f"{key}.lock"))
            try:
                build.acquire(timeout=0)
            except TimeoutError:
                return False  # being built right now
            try:
                shutil.rmtree(where)
            finally:
                build.release()
        return True

    def list(self) -> list[dict]:
        out = []
        if not self.root.is_dir():
            return out
        for marker in sorted(self.root.glob(f"*/{MARKER}")):
            try:
                out.append(json.loads(marker.read_text()))
            except (OSError, ValueError):
                continue
        return out

    def entries(self, seen: set | None = None) -> list[Entry]:
        """Every environment folder, complete or half-built, with its size and last use."""
        seen = set() if seen is None else seen
        out = []
        if not self.root.is_dir():
            return out
        for where in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.is_symlink()):
            key = where.name
            try:
                info = json.loads((where / MARKER).read_text())
            except (OSError, ValueError):
                info = None
            spec = (info or {}).get("spec") or {}
            if info is None:
                kind, holds = "partial", "(half-built, no marker)"
            elif spec.get("overlay"):
                base = EnvSpec(
                    spec["python"], tuple(spec["requirements"]), tuple(spec.get("find_links") or ()), spec.get("index_url")
                ).key()
                kind, holds = "overlay", f"torch_xla/*.py of {spec['overlay'][1][:10]} over {base}"
            else:
                kind, holds = "env", " ".join(_short_req(r) for r in spec.get("requirements", []))
            try:
                last = (where / LAST_USED).stat().st_mtime
            except OSError:
                try:
                    last = (info or {}).get("built_at") or where.stat().st_mtime
                except FileNotFoundError:  # removed while being listed (another command's pruning)
                    continue
            out.append(
                Entry(
                    self.name,
                    key,
                    kind,
                    holds,
                    disk_usage(where, seen),
                    float(last),
                    is_in_use(self.cache, self.name, key),
                    str(where),
                )
            )
        return out


def _full_env(prepared: Prepared, env: Mapping[str, str]) -> dict[str, str]:
    """A probe's variables in ``prepared``: its own and the virtualenv's (VIRTUAL_ENV, its bin first on PATH,
    a commit overlay on PYTHONPATH)."""
    full = dict(env)
    full["VIRTUAL_ENV"] = str(Path(prepared.python).parent.parent)
    full["PATH"] = f"{Path(prepared.python).parent}{os.pathsep}{full.get('PATH', os.defpath)}"
    if prepared.extra_path:
        full["PYTHONPATH"] = os.pathsep.join(prepared.extra_path)
    return full


def _pyvenv(venv: Path) -> tuple:
    """The interpreter a virtualenv was made from (``pyvenv.cfg``: its home and version), () when unknown."""
    try:
        lines = (venv / "pyvenv.cfg").read_text().splitlines()
    except OSError:
        return ()
    cfg = {k.strip(): v.strip() for k, _, v in (ln.partition("=") for ln in lines)}
    return (cfg.get("home"), cfg.get("version_info") or cfg.get("version")) if cfg.get("home") else ()


def _short_req(req: str) -> str:
    return Path(req).name if req.endswith(".whl") else req


def _release(spec: EnvSpec) -> str | None:
    """The torch_xla release an environment holds ("2.5.1"), or None for a wheel file (a nightly, a commit's base)."""
    import re

    for req in spec.requirements:
        m = re.fullmatch(r"torch[_-]xla(?:\[\w,]+\])?\s*==\s*(\d+\.\d+\.\d+)", req.strip(), re.I)
        if m:
            return m.group(1)
    return None
