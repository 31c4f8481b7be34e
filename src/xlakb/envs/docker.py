"""Containers made with the Docker SDK: each probe in its own locked-down container.

Reproducers come from people we do not know, so under this runner a probe runs
in a fresh container with no network, a read-only root filesystem (a small
tmpfs on /tmp, which is also HOME), the non-root user 65534, no capabilities,
memory, CPU and process-count limits, and a read-only copy of the reproducer.
An init (``docker-init``) is PID 1, so the reproducer sees signals as on the
host.  A timeout kills and removes the container; an out-of-memory kill is
reported in ``RunResult.note`` so the verdict is "error", never "bad".

What is cached where:

* ``<cache>/wheelhouse/``: wheels the host downloads once (``pip download``, pip being a
  dependency of xlakb, run by xlakb's own interpreter, for
  manylinux/CPython ``spec.python``) and every build container reads, mounted
  read-only; ``.sets/<hash>.json`` records that a requirement set is complete.
  Specs with ``--index-url none`` install from their ``find_links`` folders
  (and local wheel files) directly, mounted read-only.
* Environments are images ``xlakb-env:<spec key>-<base image id>``: a
  short-lived build container (no network) runs ``uv venv`` + ``uv pip install
  --no-index --compile-bytecode`` (the host's uv binary, mounted read-only) into
  ``/xlakb/env/venv``, checks the installed versions, and is committed.  The
  tag is the marker: it exists only once the environment is complete; leftover
  build containers are removed under the file lock.  A second probe on the same
  version reuses the image: its container starts and exits in well under a second.
* Commit overlays: ``<cache>/envs/docker/<key>/overlay/torch_xla`` on the host
  (the base image's installed package copied out, with the commit's Python files
  laid over it), mounted read-only and put first on PYTHONPATH.

Everything made here carries the label ``xlakb=1`` (plus ``xlakb.kind``:
build | probe | env | base), so :func:`gc` can remove it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from filelock import FileLock

from .. import proc
from ..errors import XlakbError
from ..progress import NullProgress, Progress
from . import BUNDLE_MARKER, EnvSpec, Prepared, cache_dir
from .cache import Entry, disk_usage, exclusive, is_in_use, touch
from .uv import _HEALTH, MARKER, _short_req, find_uv, pinned_names

DEFAULT_IMAGE = "python:3.11-slim"
ENV_REPOSITORY = "xlakb-env"
LABEL = "xlakb"
ENV_DIR = "/xlakb/env"
VENV_PYTHON = f"{ENV_DIR}/venv/bin/python"
REPRO_DIR = "/xlakb/repro"
OVERLAY_DIR = "/xlakb/overlay"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PROBE_USER = "65534:65534"  # nobody:nogroup
# variables of the host that make no sense inside a container
_HOST_ONLY = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")


def _parse_bytes(value: str | int) -> int:
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", value.lower())
    if not match:
        raise XlakbError(f"memory size {value!r} is not understood", hint="e.g. 4g, 512m")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2)]
    return int(float(match.group(1)) * scale)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def _short_reason(err: BaseException) -> str:
    """The most telling line of a (chained) docker/requests exception."""
    explanation = getattr(err, "explanation", None)
    if explanation:
        return str(explanation).splitlines()[0][:200]
    seen = err
    while seen is not None:
        if isinstance(seen, FileNotFoundError):
            return "its socket does not exist"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, PermissionError):
            return "permission denied on its socket"
        seen = seen.__cause__ or seen.__context__
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    for pattern in (r"Connection refused", r"No such file or directory", r"Permission denied", r"timed out"):
        if re.search(pattern, text, re.IGNORECASE):
            return pattern.lower()
    return text[:200]


def connect(timeout: float = 600):
    """A Docker client from the environment (DOCKER_HOST...), or XlakbError with the hint to use uv."""
    try:
        import docker
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise XlakbError(
            f"the docker Python SDK is not installed: {err}", hint="pip install docker, or use --runner uv"
        ) from None
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.from_env(timeout=10)  # a dead daemon must not keep us waiting long
        client.ping()
        client.api.timeout = timeout  # long operations (commit, import) once it answers
    except Exception as err:  # noqa: BLE001 - DockerException, requests' ConnectionError, OSError...
        raise XlakbError(
            f"no Docker daemon answers at {host}: {_short_reason(err)}",
            hint="start dockerd (or Docker Desktop), or use --runner uv",
        ) from None
    return client


class DockerBackend:
    name = "docker"

    def __init__(
        self,
        root: Path | None = None,
        image: str | None = None,
        *,
        mem_limit: str | int | None = None,
        cpus: float | None = None,
        pids_limit: int | None = None,
        tmpfs_size: str = "64m",
        build_timeout: float = 3600,
        labels: Mapping[str, str] | None = None,
        wheelhouse: Path | None = None,
        client=None,
    ) -> None:
        self.cache = root or cache_dir()
        self.root = self.cache / "envs" / "docker"
        self.wheelhouse = Path(wheelhouse) if wheelhouse else self.cache / "wheelhouse"
        self.image = image or os.environ.get("XLAKB_DOCKER_IMAGE") or DEFAULT_IMAGE
        self.mem_limit = _parse_bytes(mem_limit or os.environ.get("XLAKB_DOCKER_MEMORY") or "4g")
        self.cpus = float(cpus or os.environ.get("XLAKB_DOCKER_CPUS") or min(4, os.cpu_count() or 1))
        self.pids_limit = int(pids_limit or os.environ.get("XLAKB_DOCKER_PIDS") or 1024)
        self.tmpfs_size = tmpfs_size
        self.build_timeout = build_timeout
        self.labels = {LABEL: "1", **dict(labels or {})}
        self._client = client

    # -- the daemon ---------------------------------------------------------------
    @property
    def client(self):
        if self._client is None:
            self._client = connect()
        return self._client

    def available(self) -> str | None:
        try:
            if self._client is None:
                self._client = connect()
            else:
                self._client.ping()
        except XlakbError as err:
            return err.message
        except Exception as err:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
            return f"the Docker daemon does not answer: {_short_reason(err)}"
        return None

    def ready(self) -> str | None:
        """Available, and the base image is present or can be pulled now (a local xlakb-base image that
        is missing counts as not ready: building it takes minutes and needs debootstrap)."""
        import docker.errors

        reason = self.available()
        if reason is not None:
            return reason
        try:
            self.client.images.get(self.image)
            return None
        except docker.errors.ImageNotFound:
            pass
        except Exception as err:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
            return f"the Docker daemon cannot look up image {self.image}: {_short_reason(err)}"
        if self.image.startswith("xlakb-base"):
            return (
                f"the local base image {self.image} is not built "
                f"(python3 -m xlakb.envs.docker_image --tag {self.image} builds it)"
            )
        from .docker_image import split_tag

        repository, tag = split_tag(self.image)
        try:
            self.client.images.pull(repository, tag=tag)
        except Exception as err:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
            return f"docker image {self.image} is not present and cannot be pulled: {_short_reason(err)}"
        return None

    def _labels(self, kind: str, **extra: str) -> dict[str, str]:
        return {**self.labels, "xlakb.kind": kind, **{f"xlakb.{k}": v for k, v in extra.items()}}

    def base_image(self, progress: Progress | None = None):
        """The base image object; pulled, or built when it is xlakb's own local one, when missing."""
        import docker.errors

        progress = progress or NullProgress()
        try:
            return self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            pass
        from .docker_image import build_base_image, split_tag

        if self.image.startswith("xlakb-base"):
            build_base_image(self.image, progress, client=self.client)
            return self.client.images.get(self.image)
        progress.info(f"pulling docker image {self.image}")
        repository, tag = split_tag(self.image)
        try:
            return self.client.images.pull(repository, tag=tag)
        except Exception as err:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
            raise XlakbError(
                f"docker image {self.image} is not present and cannot be pulled: {_short_reason(err)}",
                hint="docker pull it, set XLAKB_DOCKER_IMAGE to an image you have, or build a local one with "
                "python3 -m xlakb.envs.docker_image --tag xlakb-base:bookworm (then XLAKB_DOCKER_IMAGE=xlakb-base:bookworm)",
            ) from None

    # -- environments ---------------------------------------------------------------
    def env_tag(self, spec: EnvSpec, base_id: str) -> str:
        return f"{ENV_REPOSITORY}:{spec.base().key()}-{base_id.split(':')[-1][:12]}"

    def cached(self, spec: EnvSpec, base_id: str | None = None) -> Prepared | None:
        import docker.errors

        if base_id is None:
            try:
                base_id = self.client.images.get(self.image).id
            except docker.errors.ImageNotFound:
                return None
        tag = self.env_tag(spec, base_id)
        try:
            image = self.client.images.get(tag)
        except docker.errors.ImageNotFound:
            return None
        labels = image.labels or {}
        if labels.get("xlakb.key") != spec.base().key():
            return None
        try:
            info = json.loads(labels.get("xlakb.info", "{}"))
        except ValueError:
            info = {}
        info.update({"image": tag, "image_id": image.id, "base_image": self.image, "base_image_id": base_id})
        if not spec.overlay:
            return Prepared(self.name, spec.key(), spec, tag, VENV_PYTHON, (), info)
        where = self.root / spec.key()
        marker = where / MARKER
        try:
            overlay_info = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        if (
            overlay_info.get("key") != spec.key()
            or overlay_info.get("base_image_id") != image.id
            or not (where / "overlay").is_dir()
        ):
            return None
        info["overlay_dir"] = str(where / "overlay")
        return Prepared(self.name, spec.key(), spec, tag, VENV_PYTHON, (OVERLAY_DIR,), info)

    def ensure(self, spec: EnvSpec, progress: Progress | None = None) -> Prepared:
        progress = progress or NullProgress()
        base_image = self.base_image(progress)
        hit = self.cached(spec, base_image.id)
        if hit is not None:
            return hit
        self.root.mkdir(parents=True, exist_ok=True)
        if spec.overlay:  # the binary environment first, under its own lock
            self.ensure(spec.base(), progress)
        with FileLock(str(self.root / f"{spec.key()}.lock")):
            hit = self.cached(spec, base_image.id)
            if hit is not None:
                return hit
            if spec.overlay:
                self._build_overlay(spec, base_image.id, progress)
            else:
                self._build_env(spec, base_image, progress)
        hit = self.cached(spec, base_image.id)
        if hit is None:
            raise XlakbError(f"docker environment {spec.key()} was built but cannot be found again")
        return hit

    def _remove_leftovers(self, key: str, progress: Progress) -> None:
        for container in self.client.containers.list(
            all=True, filters={"label": [f"{LABEL}=1", "xlakb.kind=build", f"xlakb.key={key}"]}
        ):
            if container.status != "running":
                progress.info(f"removing half-built environment container {container.short_id}")
                try:
                    container.remove(force=True, v=True)
                except Exception:  # noqa: BLE001 - cleanup of what a failed step left: nothing more to do
                    pass

    def _build_env(self, spec: EnvSpec, base_image, progress: Progress) -> None:
        import docker.errors

        key = spec.key()
        self._remove_leftovers(key, progress)
        start = time.monotonic()
        mounts: list = []
        links: list[str] = []
        requirements: list[str] = []

        def mount_dir(host: str, prefix: str) -> str:
            target = f"/xlakb/{prefix}/{len(mounts)}"
            mounts.append(_bind(host, target))
            return target

        for link in spec.find_links:
            if not Path(link).is_dir():
                raise XlakbError(f"find-links folder {link} does not exist")
            links.append(mount_dir(str(Path(link).resolve()), "links"))
        for req in spec.requirements:
            if req.endswith(".whl"):
                wheel = Path(req)
                if not wheel.is_file():
                    raise XlakbError(f"wheel {req} does not exist")
                requirements.append(f"{mount_dir(str(wheel.resolve().parent), 'whl')}/{wheel.name}")
            else:
                requirements.append(req)
        if spec.index_url != "none":
            house = self.fill_wheelhouse(spec, progress)
            links.append(mount_dir(str(house), "wheelhouse"))
        uv = find_uv()
        mounts.append(_bind(str(Path(uv).resolve()), "/xlakb/bin/uv"))
        install = ["/xlakb/bin/uv", "pip", "install", "--python", VENV_PYTHON, "--no-index", "--compile-bytecode"]
        for link in links:
            install += ["--find-links", link]
        install += requirements
        names = list(pinned_names(spec))
        script = "\n".join(
            [
                "set -e",
                f"/xlakb/bin/uv venv --quiet --python python{spec.python} {ENV_DIR}/venv",
                _sh(install),
                "rm -rf /xlakb/uv-cache",
                f"chmod -R a+rX {ENV_DIR}",
                f"echo XLAKB-HEALTH $({VENV_PYTHON} -c {_quote(_HEALTH)} {' '.join(names)})",
                f"echo XLAKB-SITE $({VENV_PYTHON} -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')",
            ]
        )
        progress.info(f"building docker environment {key} on {self.image} ({', '.join(spec.requirements)})")
        container = self.client.containers.create(
            base_image.id,
            ["sh", "-c", script],
            environment={
                "UV_CACHE_DIR": "/xlakb/uv-cache",
                "UV_LINK_MODE": "hardlink",
                "UV_PYTHON_DOWNLOADS": "never",
                "UV_NO_PROGRESS": "1",
                "PATH": SYSTEM_PATH,
            },
            network_mode="none",
            mounts=mounts,
            tmpfs={"/tmp": "rw,exec,mode=1777"},
            labels=self._labels("build", key=key),
            user="0:0",
        )
        try:
            lines: list[str] = []

            def relay(line: str) -> None:
                lines.append(line)
                if any(w in line for w in ("Prepared", "Installed", "Resolved")):
                    progress.info(line.strip())

            status, _, _ = self._wait(container, self.build_timeout, relay, None)
            if status is None:
                raise XlakbError(f"building docker environment {key} timed out after {self.build_timeout:.0f} s")
            output = "\n".join(lines)
            if status != 0:
                tail = [ln for ln in lines if ln.strip()]
                reason = tail[-1].strip() if tail else f"exit {status}"
                for ln in tail:
                    if "No solution" in ln or "not found" in ln or "error:" in ln or "No interpreter" in ln:
                        reason = ln.strip(" ╰─▶")
                        break
                hint = None
                if "interpreter" in reason.lower() or f"python{spec.python}" in reason:
                    hint = f"the image {self.image} has no python{spec.python}; set XLAKB_DOCKER_IMAGE to one that has"
                raise XlakbError(
                    f"installing {' '.join(spec.requirements)} in docker image {self.image} failed: {reason}", hint=hint
                )
            health = re.search(r"^XLAKB-HEALTH (.*)$", output, re.MULTILINE)
            site = re.search(r"^XLAKB-SITE (.*)$", output, re.MULTILINE)
            try:
                found = json.loads(health.group(1)) if health else None
            except ValueError:
                found = None
            if found is None or site is None:
                raise XlakbError(f"new docker environment {key} failed its health check: {output.strip()[-200:]}")
            for name, version in pinned_names(spec).items():
                if found.get(name) != version:
                    raise XlakbError(f"new docker environment {key}: {name} is {found.get(name)}, wanted {version}")
            info = {
                "key": key,
                "spec": spec.describe(),
                "base_image": self.image,
                "base_image_id": base_image.id,
                "site_packages": site.group(1).strip(),
                "built_s": round(time.monotonic() - start, 2),
                "built_at": time.time(),
            }
            _put_file(container, ENV_DIR, MARKER, json.dumps(info, indent=2).encode())
            repository, tag = self.env_tag(spec, base_image.id).split(":", 1)
            progress.info(f"saving docker environment as {repository}:{tag}")
            container.commit(
                repository=repository,
                tag=tag,
                conf={
                    "Labels": {**self._labels("env", key=key), "xlakb.base": base_image.id, "xlakb.info": json.dumps(info)},
                    "User": PROBE_USER,
                    "WorkingDir": REPRO_DIR,
                    "Cmd": [VENV_PYTHON],
                    "Entrypoint": [],
                    "Env": [f"PATH={ENV_DIR}/venv/bin:{SYSTEM_PATH}", f"VIRTUAL_ENV={ENV_DIR}/venv", "HOME=/tmp", "LANG=C.UTF-8"],
                },
            )
        finally:
            try:
                container.remove(force=True, v=True)
            except docker.errors.NotFound:
                pass

    def _build_overlay(self, spec: EnvSpec, base_id: str, progress: Progress) -> None:
        from .overlay import overlay_commit

        base = self.cached(spec.base(), base_id)
        if base is None:
            raise XlakbError(f"base environment for {spec.key()} vanished while building its overlay")
        where = self.root / spec.key()
        if where.exists():
            progress.info(f"removing half-built overlay {where}")
            shutil.rmtree(where)
        where.mkdir(parents=True)
        repo, sha = spec.overlay  # type: ignore[misc]
        try:
            site = base.info.get("site_packages") or f"{ENV_DIR}/venv/lib/python{spec.python}/site-packages"
            progress.info(f"laying torch_xla/*.py of {sha[:10]} over {base.location}")
            extracted = where / "base-pkg"
            self._copy_out(base.location, f"{site}/torch_xla", extracted)
            overlay_commit(Path(repo), sha, extracted / "torch_xla", where / "overlay")
            shutil.rmtree(extracted, ignore_errors=True)
            _world_readable(where / "overlay")
            info = {"key": spec.key(), "spec": spec.describe(), "base_image_id": base.info["image_id"], "built_at": time.time()}
            tmp = where / (MARKER + ".tmp")
            tmp.write_text(json.dumps(info, indent=2))
            os.replace(tmp, where / MARKER)
        except BaseException:
            shutil.rmtree(where, ignore_errors=True)
            raise

    def _copy_out(self, image: str, path: str, dest: Path) -> None:
        """Copy ``path`` out of ``image`` into the host folder ``dest``."""
        import docker.errors

        container = self.client.containers.create(image, ["true"], network_mode="none", labels=self._labels("build"))
        try:
            try:
                stream, _ = container.get_archive(path)
            except docker.errors.NotFound:
                raise XlakbError(f"{path} does not exist in docker environment {image}") from None
            with tempfile.TemporaryFile() as buf:
                for chunk in stream:
                    buf.write(chunk)
                buf.seek(0)
                dest.mkdir(parents=True, exist_ok=True)
                with tarfile.open(fileobj=buf) as tar:
                    if hasattr(tarfile, "data_filter"):
                        tar.extractall(dest, filter="data")
                    else:  # pragma: no cover - Python < 3.11.4
                        tar.extractall(dest)
        finally:
            container.remove(force=True)

    # -- the wheelhouse -------------------------------------------------------------
    def fill_wheelhouse(self, spec: EnvSpec, progress: Progress) -> Path:
        """Download the wheels ``spec`` needs (for Linux, CPython ``spec.python``) into the shared wheelhouse, once."""
        house = self.wheelhouse
        sets = house / ".sets"
        sets.mkdir(parents=True, exist_ok=True)
        arch = os.uname().machine
        what = {
            "requirements": list(spec.requirements),
            "find_links": list(spec.find_links),
            "index_url": spec.index_url,
            "python": spec.python,
            "arch": arch,
        }
        digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]
        marker = sets / f"{digest}.json"

        def complete() -> bool:
            try:
                files = json.loads(marker.read_text())["files"]
            except (OSError, ValueError, KeyError):
                return False
            return all((house / f).is_file() for f in files)

        if complete():
            return house
        with FileLock(str(house / ".lock")):
            if complete():
                return house
            before = {p.name for p in house.glob("*.whl")}
            cmd = [
                *pip_command(),
                "download",
                "--disable-pip-version-check",
                "--progress-bar",
                "off",
                "--only-binary=:all:",
                "--implementation",
                "cp",
                "--python-version",
                spec.python,
                "-d",
                str(house),
            ]
            for tag in ("manylinux_2_28", "manylinux2014", "manylinux2010", "manylinux1"):  # pip does not widen these itself
                cmd += ["--platform", f"{tag}_{arch}"]
            if spec.index_url:
                cmd += ["--index-url", spec.index_url]
            for link in spec.find_links:
                cmd += ["--find-links", link]
            cmd += list(spec.requirements)
            progress.info(f"downloading wheels for {', '.join(spec.requirements)} into {house}")
            used: list[str] = []

            def relay(line: str) -> None:
                text = line.strip()
                m = re.match(r"(?:Saved|File was already downloaded) (\S+)", text)
                if m:
                    used.append(Path(m.group(1)).name)
                    size = (house / Path(m.group(1)).name).stat().st_size if (house / Path(m.group(1)).name).exists() else None
                    progress.download(Path(m.group(1)).name, size or 0, size)
                elif text.startswith("Downloading"):
                    progress.info(text)

            result = proc.run(cmd, on_line=relay, env={**os.environ, "PIP_NO_INPUT": "1"})
            if result.exit_code != 0:
                tail = [ln.strip() for ln in result.output.splitlines() if ln.strip()]
                reason = next((ln for ln in tail if ln.startswith("ERROR:")), tail[-1] if tail else f"exit {result.exit_code}")
                raise XlakbError(
                    f"downloading wheels for {' '.join(spec.requirements)} failed: {reason}",
                    hint="check the package index is reachable, or pass --find-links with a wheelhouse",
                )
            files = sorted(set(used) | ({p.name for p in house.glob("*.whl")} - before))
            tmp = marker.with_suffix(".tmp")
            tmp.write_text(json.dumps({**what, "files": files}, indent=1))
            os.replace(tmp, marker)
        return house

    # -- running ---------------------------------------------------------------------
    def prestart(self, prepared: Prepared, env: Mapping[str, str]) -> None:
        """Nothing ahead: a container's server serves one probe at a time and is started for it."""

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
        if warm:
            return self._run_warm(
                prepared, Path(script).resolve(), env=env, timeout=timeout, log_path=log_path, on_line=on_line, args=args
            )
        return self._run_cold(prepared, script, env=env, timeout=timeout, log_path=log_path, on_line=on_line, args=args)

    def _variables(self, prepared: Prepared, env: Mapping[str, str]) -> dict[str, str]:
        """A probe's variables inside the container: the host's own ones replaced by the container's."""
        variables = {k: v for k, v in env.items() if k not in _HOST_ONLY}
        variables.update(
            {
                "PATH": f"{Path(prepared.python).parent}:{SYSTEM_PATH}",
                "HOME": "/tmp",
                "TMPDIR": "/tmp",
                "VIRTUAL_ENV": str(Path(prepared.python).parent.parent),
            }
        )
        if prepared.extra_path:
            variables["PYTHONPATH"] = ":".join(prepared.extra_path)
        return variables

    def _confinement(self) -> dict:
        """What every probe container is held to: no network, a read-only root, a non-root user, limits."""
        return dict(
            user=PROBE_USER,
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={self.tmpfs_size},mode=1777"},
            mem_limit=self.mem_limit,
            memswap_limit=self.mem_limit,
            nano_cpus=int(self.cpus * 1e9),
            pids_limit=self.pids_limit,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            hostname="xlakb-probe",
            init=True,
        )

    def _run_warm(
        self,
        prepared: Prepared,
        script: Path,
        *,
        env: Mapping[str, str],
        timeout: float,
        log_path: Path,
        on_line: Callable[[str], None] | None,
        args: Sequence[str],
    ) -> proc.RunResult:
        """A probe forked from a server in one long-lived container per environment (and import-time settings),
        held to the same confinement as a cold probe's container (see :mod:`xlakb.envs.warm`)."""
        from . import warm as warm_start
        from .uv import _release

        touch(self._used_file(prepared.key))
        variables = self._variables(prepared, env)

        def start(folder: Path) -> _WarmContainer:
            return _WarmContainer(
                self,
                prepared,
                warm_start.server_env(_release(prepared.spec), variables),
                folder,
                warm_start.pool().idle,
                warm_start.PRELOAD,
            )

        def cold() -> proc.RunResult:
            return self._run_cold(prepared, script, env=env, timeout=timeout, log_path=log_path, on_line=on_line, args=args)

        return warm_start.pool().run(
            f"docker:{prepared.location}",
            script,
            args=args,
            env=variables,
            release=_release(prepared.spec),
            cwd=script.parent,
            timeout=timeout,
            log_path=log_path,
            on_line=on_line,
            cold=cold,
            start=start,
        )

    def _run_cold(
        self,
        prepared: Prepared,
        script: Path,
        *,
        env: Mapping[str, str],
        timeout: float,
        log_path: Path,
        on_line: Callable[[str], None] | None,
        args: Sequence[str],
    ) -> proc.RunResult:
        import docker.errors

        script = Path(script).resolve()
        argv = (prepared.python, f"{REPRO_DIR}/{script.name}", *args)
        touch(self._used_file(prepared.key))
        if prepared.spec.overlay:
            touch(self._used_file(prepared.spec.base().key()))
        # a private copy of the reproducer, readable by the container's user whatever the host's umask
        stage = self.cache / "docker-run" / uuid.uuid4().hex
        stage.mkdir(parents=True)
        try:
            os.chmod(stage, 0o755)
            _stage(script, stage)
            variables = self._variables(prepared, env)
            mounts = [_bind(str(stage), REPRO_DIR)]
            if prepared.extra_path:
                mounts.append(_bind(prepared.info["overlay_dir"], OVERLAY_DIR))
            try:
                container = self.client.containers.create(
                    prepared.location,
                    list(argv),
                    environment=variables,
                    working_dir=REPRO_DIR,
                    mounts=mounts,
                    labels=self._labels("probe", key=prepared.key),
                    **self._confinement(),  # init: the reproducer is not PID 1, signals behave as on the host
                )
            except docker.errors.ImageNotFound:
                raise XlakbError(
                    f"docker environment image {prepared.location} is gone", hint="run the command again to rebuild it"
                ) from None
            except docker.errors.APIError as err:
                raise XlakbError(f"cannot create the probe container: {err.explanation or err}") from None
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(log_path, "wb") as log:
                try:
                    status, chunks, duration = self._wait(container, timeout, on_line, log)
                    note = ""
                    if status is not None:
                        try:
                            container.reload()
                            state = container.attrs.get("State", {})
                            if state.get("OOMKilled"):
                                note = f"killed: out of memory (limit {_human(self.mem_limit)})"
                        except docker.errors.NotFound:
                            note = "the container was removed mid-run"
                    else:
                        self._kill(container)
                except BaseException:  # Ctrl-C, a lost daemon...: leave nothing running behind us
                    self._kill(container)
                    self._remove(container)
                    raise
                self._remove(container)
            output = b"".join(chunks).decode("utf-8", "replace")
            if status is not None and 128 < status < 128 + 65:
                status = 128 - status  # the init (tini) reports a child killed by signal N as 128+N; uv's runner says -N
            return proc.RunResult(
                argv=argv,
                exit_code=status,
                timed_out=status is None,
                duration_s=duration,
                output=output,
                log_path=log_path,
                note=note,
            )
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _wait(
        self, container, timeout: float, on_line: Callable[[str], None] | None, log
    ) -> tuple[int | None, list[bytes], float]:
        """Start ``container``, stream its output, wait up to ``timeout`` s from its start.

        Returns (exit status, or None on timeout; the output; seconds from start to exit or kill)."""
        import docker.errors

        chunks: list[bytes] = []
        done = threading.Event()
        outcome: dict = {}

        def pump() -> None:
            pending = b""
            try:
                for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
                    chunks.append(chunk)
                    if log is not None:
                        log.write(chunk)
                        log.flush()
                    if on_line is not None:
                        pending += chunk
                        *lines, pending = pending.split(b"\n")
                        for line in lines:
                            on_line(line.decode("utf-8", "replace"))
            except Exception:  # noqa: BLE001 - the container vanished or the daemon went away: the waiter reports it
                pass
            if on_line is not None and pending:
                on_line(pending.decode("utf-8", "replace"))

        def waiter() -> None:
            try:
                outcome["status"] = container.wait()["StatusCode"]
            except docker.errors.NotFound:
                outcome["status"] = 137
            except Exception as err:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
                outcome["error"] = err
            done.set()

        try:
            container.start()
        except docker.errors.APIError as err:
            raise XlakbError(
                f"cannot start a container from {container.image.tags or container.image.id}: {_short_reason(err)}"
            ) from None
        started = time.monotonic()
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        threading.Thread(target=waiter, daemon=True).start()
        finished = done.wait(timeout)
        duration = time.monotonic() - started
        if not finished:
            self._kill(container)
            done.wait(30)
        reader.join(timeout=10)
        if "error" in outcome:
            raise XlakbError(f"lost the docker daemon while a container ran: {_short_reason(outcome['error'])}")
        return (outcome.get("status") if finished else None), chunks, duration

    def _kill(self, container) -> None:
        try:
            container.kill()
        except Exception:  # noqa: BLE001 - cleanup of what a failed step left: nothing more to do
            pass

    def _remove(self, container) -> None:
        try:
            container.remove(force=True, v=True)
        except Exception:  # noqa: BLE001 - cleanup of what a failed step left: nothing more to do
            pass

    # -- housekeeping ----------------------------------------------------------------
    def _used_file(self, key: str) -> Path:
        return self.root / "used" / key

    def remove(self, key: str) -> bool:
        """Remove an environment's image and overlay folder unless a probe is using it."""
        import docker.errors

        with exclusive(self.cache, self.name, key) as free:
            if not free or self.client.containers.list(filters={"label": [f"{LABEL}=1", "xlakb.kind=probe", f"xlakb.key={key}"]}):
                return False
            removed = False
            for image in self.client.images.list(filters={"label": [f"{LABEL}=1", "xlakb.kind=env", f"xlakb.key={key}"]}):
                for tag in image.tags or [image.id]:
                    try:
                        self.client.images.remove(tag, force=True)
                        removed = True
                    except docker.errors.APIError:
                        pass
            where = self.root / key
            if where.exists():
                shutil.rmtree(where)
                removed = True
            self._used_file(key).unlink(missing_ok=True)
            if key.startswith("volume:"):
                try:
                    self.client.volumes.get(key.split(":", 1)[1]).remove()
                    removed = True
                except docker.errors.APIError:
                    pass
        return removed

    def list(self) -> list[dict]:
        out = []
        for image in self.client.images.list(filters={"label": [f"{LABEL}=1", "xlakb.kind=env"]}):
            try:
                info = json.loads((image.labels or {}).get("xlakb.info", "{}"))
            except ValueError:
                continue
            info["image"] = (image.tags or [image.id])[0]
            out.append(info)
        return out

    def entries(self, seen: set | None = None) -> list[Entry]:
        """Environment images (their own layer: the base image's size is not counted again), overlay
        folders on the host, and volumes xlakb made."""
        seen = set() if seen is None else seen
        out: list[Entry] = []
        base_sizes: dict[str, int] = {}
        for image in self.client.images.list(filters={"label": [f"{LABEL}=1", "xlakb.kind=env"]}):
            labels = image.labels or {}
            key = labels.get("xlakb.key", image.id)
            try:
                info = json.loads(labels.get("xlakb.info", "{}"))
            except ValueError:
                info = {}
            base_id = labels.get("xlakb.base", "")
            if base_id not in base_sizes:
                try:
                    base_sizes[base_id] = int(self.client.images.get(base_id).attrs.get("Size", 0)) if base_id else 0
                except Exception:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
                    base_sizes[base_id] = 0
            size = max(0, int(image.attrs.get("Size", 0)) - base_sizes[base_id])
            holds = " ".join(_short_req(r) for r in (info.get("spec") or {}).get("requirements", []))
            out.append(
                Entry(
                    self.name,
                    key,
                    "env",
                    holds or "(unknown)",
                    size,
                    self._last_used(key, info.get("built_at")),
                    self._busy(key),
                    (image.tags or [image.id])[0],
                )
            )
        if self.root.is_dir():
            for where in sorted(p for p in self.root.iterdir() if p.is_dir() and p.name not in ("used",)):
                try:
                    info = json.loads((where / MARKER).read_text())
                except (OSError, ValueError):
                    info = None
                spec = (info or {}).get("spec") or {}
                kind = "overlay" if info else "partial"
                holds = (
                    f"torch_xla/*.py of {spec['overlay'][1][:10]}" if info and spec.get("overlay") else "(half-built, no marker)"
                )
                out.append(
                    Entry(
                        self.name,
                        where.name,
                        kind,
                        holds,
                        disk_usage(where, seen),
                        self._last_used(where.name, (info or {}).get("built_at") or where.stat().st_mtime),
                        self._busy(where.name),
                        str(where),
                    )
                )
        try:
            volumes = {v["Name"]: v for v in (self.client.df().get("Volumes") or [])}
        except Exception:  # noqa: BLE001 - the Docker SDK raises requests' and its own errors alike: the reason is reported
            volumes = {}
        for volume in self.client.volumes.list(filters={"label": f"{LABEL}=1"}):
            usage = (volumes.get(volume.name) or {}).get("UsageData") or {}
            created = volume.attrs.get("CreatedAt", "")
            out.append(
                Entry(
                    self.name,
                    f"volume:{volume.name}",
                    "volume",
                    f"docker volume {volume.name}",
                    max(0, int(usage.get("Size", 0) or 0)),
                    self._last_used(f"volume:{volume.name}", _epoch(created)),
                    int(usage.get("RefCount", 0) or 0) > 0,
                    volume.name,
                )
            )
        return out

    def _last_used(self, key: str, fallback: float | None) -> float:
        try:
            return self._used_file(key).stat().st_mtime
        except OSError:
            return float(fallback or 0.0)

    def _busy(self, key: str) -> bool:
        return is_in_use(self.cache, self.name, key) or bool(
            self.client.containers.list(filters={"label": [f"{LABEL}=1", "xlakb.kind=probe", f"xlakb.key={key}"]})
        )


def _epoch(stamp: str) -> float:
    import datetime as _dt

    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def gc(client=None, *, labels: Mapping[str, str] | None = None, base: bool = False) -> dict:
    """Remove every container, volume and image xlakb made (label ``xlakb=1``; and ``labels``, when given).

    Tagged base images (``xlakb.kind=base``, slow to build again) are kept unless ``base``;
    untagged ones (replaced by a rebuild) are removed.
    Returns counts: ``{"containers": n, "volumes": n, "images": n}``."""
    import docker.errors

    client = client or connect()
    wanted = [f"{LABEL}=1"] + [f"{k}={v}" for k, v in (labels or {}).items()]
    counts = {"containers": 0, "volumes": 0, "images": 0}
    for container in client.containers.list(all=True, filters={"label": wanted}):
        try:
            container.remove(force=True, v=True)
            counts["containers"] += 1
        except docker.errors.NotFound:
            pass
    for volume in client.volumes.list(filters={"label": wanted}):
        try:
            volume.remove(force=True)
            counts["volumes"] += 1
        except docker.errors.NotFound:
            pass
    images = client.images.list(filters={"label": wanted})
    images.sort(key=lambda im: (im.labels or {}).get("xlakb.kind") == "base")  # children before their base
    for image in images:
        if (image.labels or {}).get("xlakb.kind") == "base" and image.tags and not base:
            continue  # a tagged base image is kept; one replaced by a rebuild (untagged) goes
        try:
            client.images.remove(image.id, force=True)
            counts["images"] += 1
        except docker.errors.NotFound:
            pass
    return counts


def pip_command() -> list[str]:
    """pip as a module of xlakb's own interpreter: pip is a declared dependency of xlakb (an
    environment made by uv or pipx has no pip of its own), so it is there however xlakb was installed."""
    import importlib.util

    if importlib.util.find_spec("pip") is None:
        raise XlakbError(
            f"pip, a dependency of xlakb, is missing from {sys.prefix}; the Docker runner downloads wheels with it",
            hint="reinstall xlakb with its dependencies (pip install xlakb / uv pip install xlakb), or use --runner uv",
        )
    return [sys.executable, "-m", "pip"]


WARM_DIR = "/xlakb/warm"


class _WarmContainer:
    """A warm server (data/warm_server.py) in a container of its own, one per environment and import-time
    settings and one probe at a time (``exclusive``): each probe is forked inside it, and after each the server
    kills what is left and empties /tmp of what the probe made (``--contained``). It is held to a cold probe
    container's confinement: no network, nobody, read-only root, the same limits. Its folder on the host holds
    the socket and, per probe, a root-owned folder with the script and the log: the container may write only the
    log; the folder itself is made read-only once the server listens."""

    exclusive = True

    def __init__(
        self,
        backend: DockerBackend,
        prepared: Prepared,
        env: Mapping[str, str],
        folder: Path,
        idle: float,
        preload: Sequence[str],
    ):
        from importlib import resources

        import docker.errors

        self.backend = backend
        self.folder = folder
        self.python = f"docker:{prepared.location}"
        self.socket = folder / "s"
        os.chmod(folder, 0o777)  # the container's user (nobody) makes its socket here; read-only once it has
        shutil.copyfile(str(resources.files("xlakb") / "data" / "warm_server.py"), folder / "warm_server.py")
        os.chmod(folder / "warm_server.py", 0o644)
        mounts = [_bind(str(folder), WARM_DIR, writable=True)]
        if prepared.extra_path:
            mounts.append(_bind(prepared.info["overlay_dir"], OVERLAY_DIR))
        try:
            self.container = backend.client.containers.run(
                prepared.location,
                [
                    prepared.python,
                    f"{WARM_DIR}/warm_server.py",
                    "--socket",
                    f"{WARM_DIR}/s",
                    "--preload",
                    ",".join(preload),
                    "--idle",
                    str(idle),
                    "--contained",
                    "1",
                ],
                environment=dict(env),
                working_dir=WARM_DIR,
                mounts=mounts,
                detach=True,
                labels=backend._labels("warm", key=prepared.key),
                **backend._confinement(),
            )
        except docker.errors.APIError as err:
            raise XlakbError(f"cannot start a warm server container: {err.explanation or err}") from None

    def wait_ready(self, timeout: float) -> None:
        import docker.errors

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.container.reload()
                logs = self.container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
            except docker.errors.NotFound:
                break
            if '"ready"' in logs and self.socket.exists():
                ready = next((ln for ln in logs.splitlines() if '"ready"' in ln), "{}")
                try:
                    unrestorable = json.loads(ready).get("unrestorable")
                except ValueError:
                    unrestorable = None
                if unrestorable:  # a child could not be given what a cold import would make
                    self.stop()
                    raise XlakbError(f"warm server container: {unrestorable}")
                os.chmod(self.folder, 0o755)  # from now on a probe cannot add, remove or replace anything here
                return
            if self.container.status == "exited":
                break
            time.sleep(0.2)
        tail = ""
        try:
            tail = self.container.logs().decode("utf-8", "replace").strip().splitlines()[-1:]
        except Exception:  # noqa: BLE001 - only for the message
            pass
        self.stop()
        raise XlakbError("warm server container did not start" + (f": {tail[0]}" if tail else ""))

    def alive(self) -> bool:
        import docker.errors

        try:
            self.container.reload()
            return self.container.status == "running"
        except docker.errors.NotFound:
            return False

    def stop(self) -> None:
        self.backend._kill(self.container)
        self.backend._remove(self.container)

    def kill(self, pid: int) -> None:
        from .warm import kill_request

        kill_request(self.socket, pid)  # its pids are the container's: the server kills the group

    def note(self, code: int | None, reply: Mapping) -> str:
        if reply.get("oom_kills"):  # the kernel killed a process of this probe (itself or a child) for memory
            return f"killed: out of memory (limit {_human(self.backend.mem_limit)})"
        return ""

    def run(
        self,
        script: Path,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        timeout: float,
        log_path: Path,
        become: Mapping[str, str] | None = None,
    ):
        from .warm import request

        if become:  # a container holds one environment: the pool never asks it to be another
            raise XlakbError("a warm container cannot serve another environment's probe")

        runs = self.folder / "run"
        runs.mkdir(mode=0o755, exist_ok=True)
        run = runs / uuid.uuid4().hex
        run.mkdir(mode=0o755)
        try:
            _stage(script, run)
            (run / "log").touch()
            os.chmod(run / "log", 0o666)  # the only file the probe may write outside /tmp: its own output
            inside = f"{WARM_DIR}/run/{run.name}"
            reply = request(
                self.socket,
                {
                    "script": f"{inside}/{script.name}",
                    "args": list(args),
                    "env": dict(env),
                    "cwd": inside,
                    "log": f"{inside}/log",
                },
                timeout,
                self.kill,
                self.python,
            )
        finally:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            if (run / "log").exists():
                shutil.copyfile(run / "log", log_path)
            shutil.rmtree(run, ignore_errors=True)
        return reply


def _stage(script: Path, dest: Path) -> None:
    """Put a probe's reproducer in ``dest``, readable by the container's user: the script, or the whole folder
    of a script that is part of a bundle (a mined record's test tree: :mod:`xlakb.mining.bundle`)."""
    if (script.parent / BUNDLE_MARKER).exists():
        shutil.copytree(script.parent, dest, dirs_exist_ok=True)
        return
    shutil.copyfile(script, dest / script.name)
    os.chmod(dest / script.name, 0o644)


def _bind(source: str, target: str, *, writable: bool = False):
    """A bind mount, read-only unless ``writable`` (only a warm server's own folder: its socket, the logs)."""
    from docker.types import Mount

    return Mount(target=target, source=source, type="bind", read_only=not writable)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _sh(argv: Iterable[str]) -> str:
    return " ".join(_quote(a) for a in argv)


def _put_file(container, directory: str, name: str, data: bytes) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        item = tarfile.TarInfo(name)
        item.size = len(data)
        item.mode = 0o644
        item.mtime = int(time.time())
        tar.addfile(item, io.BytesIO(data))
    container.put_archive(directory, buf.getvalue())


def _world_readable(top: Path) -> None:
    """Let the container's non-root user read a host folder mounted into it."""
    for dirpath, dirnames, filenames in os.walk(top):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)
