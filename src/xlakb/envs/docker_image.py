"""A local base image for the Docker runner, made from Debian packages.

Where no registry can be reached (CI, air-gapped machines), ``python:3.11-slim``
cannot be pulled; :func:`build_base_image` makes an equivalent image instead:
``debootstrap --variant=minbase`` of Debian with ``python3`` and ``python3-venv``
into a temporary folder, then ``docker import`` with the label ``xlakb=1``.
The Debian mirror is the one the host's apt sources name.  An image that is
already present is reused.

    python3 -m xlakb.envs.docker_image --tag xlakb-base:bookworm
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import proc
from ..errors import XlakbError
from ..progress import NullProgress, Progress

DEFAULT_TAG = "xlakb-base:bookworm"
DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# libpython3.X: torch_xla's native modules link against the shared libpython, which Debian's
# python3 (statically linked) does not need; python:3.X-slim images have it too.
PACKAGES = ("python3", "python3-venv", "ca-certificates")
SUITE_PYTHON = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
LABELS = {"xlakb": "1", "xlakb.kind": "base"}


def apt_mirror(suite: str = DEFAULT_SUITE, sources: Path = Path("/etc/apt")) -> str:
    """The Debian mirror the host's apt sources use for ``suite`` (not its -security or -updates)."""
    candidates: list[tuple[str, list[str]]] = []  # (uri, suites)
    files = (
        [sources / "sources.list"]
        + sorted((sources / "sources.list.d").glob("*.list"))
        + sorted((sources / "sources.list.d").glob("*.sources"))
    )
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":  # deb822
            for block in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in block.splitlines():
                    if line.startswith("#") or ":" not in line or line[:1].isspace():
                        continue
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
                if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
                    for uri in fields.get("uris", "").split():
                        candidates.append((uri, fields.get("suites", "").split()))
        else:
            for line in text.splitlines():
                line = re.sub(r"\[[^\]]*\]", " ", line.split("#", 1)[0]).split()  # type: ignore[assignment]
                if len(line) >= 3 and line[0] == "deb":
                    candidates.append((line[1], [line[2]]))
    for uri, suites in candidates:
        if suite in suites and "security" not in uri:
            return uri.rstrip("/")
    return DEFAULT_MIRROR


def split_tag(tag: str) -> tuple[str, str]:
    """``"repo/name:tag"`` -> ``("repo/name", "tag")``; no tag means ``latest``."""
    if ":" in tag.rsplit("/", 1)[-1]:
        repository, _, name_tag = tag.rpartition(":")
        return repository, name_tag
    return tag, "latest"


def build_base_image(
    tag: str = DEFAULT_TAG,
    progress: Progress | None = None,
    *,
    client=None,
    suite: str = DEFAULT_SUITE,
    mirror: str | None = None,
    rebuild: bool = False,
) -> str:
    """Make the local base image ``tag`` unless it exists; return its image id."""
    import docker
    import docker.errors

    progress = progress or NullProgress()
    client = client or docker.from_env()
    if not rebuild:
        try:
            return client.images.get(tag).id
        except docker.errors.ImageNotFound:
            pass
    debootstrap = shutil.which("debootstrap") or ("/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None)
    if debootstrap is None:
        raise XlakbError(
            f"docker image {tag} is missing and cannot be built: debootstrap is not installed",
            hint="apt-get install debootstrap, or set XLAKB_DOCKER_IMAGE to an image you have",
        )
    if os.geteuid() != 0:
        raise XlakbError(
            f"docker image {tag} is missing and cannot be built: debootstrap needs root",
            hint="run .ci/setup-docker.sh as root, or set XLAKB_DOCKER_IMAGE to an image you have",
        )
    mirror = mirror or apt_mirror(suite)
    progress.info(f"building base image {tag}: debootstrap {suite} from {mirror}")
    with tempfile.TemporaryDirectory(prefix="xlakb-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        packages = list(PACKAGES) + ([f"libpython{SUITE_PYTHON[suite]}"] if suite in SUITE_PYTHON else [])
        cmd = [debootstrap, "--variant=minbase", f"--include={','.join(packages)}", suite, str(rootfs), mirror]

        def relay(line: str) -> None:
            if line.startswith(("I: Retrieving", "I: Installing", "I: Configuring", "I: Base system")) and "Release" not in line:
                progress.info(line[3:].strip())

        result = proc.run(cmd, on_line=relay, timeout=1800)
        if result.exit_code != 0:
            tail = [ln for ln in result.output.splitlines() if ln.strip()]
            reason = tail[-1] if tail else f"exit {result.exit_code}"
            raise XlakbError(
                f"docker image {tag} could not be built: debootstrap {suite} from {mirror} failed: {reason}",
                hint="check the apt mirror is reachable, or set XLAKB_DOCKER_IMAGE to an image you have",
            )
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / junk).glob("*"):
                if item.is_file():
                    item.unlink()
        try:
            version = subprocess.run(
                ["chroot", str(rootfs), "python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
            ).stdout.strip()
        except OSError:
            version = ""
        progress.info(f"importing the root filesystem into docker as {tag} (python {version or '?'})")
        tarball = Path(tmp) / "rootfs.tar"
        packed = proc.run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."])
        if packed.exit_code != 0:
            raise XlakbError(
                f"docker image {tag} could not be built: tar of the root filesystem failed: {packed.output.strip()[-200:]}"
            )
        repository, name_tag = split_tag(tag)
        changes = [f"LABEL {k}={v}" for k, v in LABELS.items()] + [
            f"LABEL xlakb.python={version}" if version else "LABEL xlakb.python=unknown",
            "ENV LANG=C.UTF-8",
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            'CMD ["python3"]',
        ]
        try:
            client.api.import_image_from_file(str(tarball), repository=repository, tag=name_tag, changes=changes)
        except docker.errors.APIError as err:
            raise XlakbError(f"docker import of {tag} failed: {err.explanation or err}") from None
    image = client.images.get(tag)
    progress.info(f"base image {tag} ready ({image.short_id})")
    return image.id


def _main(argv: list[str] | None = None) -> int:  # the one place in this module that prints
    import argparse
    import sys

    class _Print(NullProgress):
        def info(self, message: str) -> None:
            print(f"  {message}", flush=True)

    parser = argparse.ArgumentParser(
        prog="python3 -m xlakb.envs.docker_image", description="build the local Docker base image for xlakb"
    )
    parser.add_argument("--tag", default=os.environ.get("XLAKB_DOCKER_IMAGE") or DEFAULT_TAG)
    parser.add_argument("--suite", default=DEFAULT_SUITE)
    parser.add_argument("--mirror", help="Debian mirror (default: the one in the host's apt sources)")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    try:
        image_id = build_base_image(args.tag, _Print(), suite=args.suite, mirror=args.mirror, rebuild=args.rebuild)
    except XlakbError as err:
        print(f"docker_image: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the daemon does not answer, etc.
        print(f"docker_image: error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    print(f"{args.tag} {image_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
