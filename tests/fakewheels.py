"""Tiny fake `torch` and `torch_xla` wheels, built inside the tests.

A fake torch_xla's behaviour is set by the test (``BUG`` and any extra files),
so environments, runners, verdicts, matrices and bisections are exercised for
real — real wheels, a real uv install — without the 5 GB of the real ones.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    dest: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = (), tag: str = "py3-none-any"
) -> Path:
    """Write ``{name}-{version}-{tag}.whl`` into ``dest`` and return its path."""
    dest.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"] + [f"Requires-Dist: {r}" for r in requires]
    contents = dict(files)
    contents[f"{info}/METADATA"] = "\n".join(meta) + "\n"
    contents[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: xlakb-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    record_lines = []
    path = dest / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, text in contents.items():
            data = text.encode()
            zf.writestr(arc, data)
            record_lines.append(f"{arc},{_digest(data)},{len(data)}")
        record_lines.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record_lines) + "\n")
    return path


def fake_torch(dest: Path, version: str) -> Path:
    return build_wheel(dest, "torch", version, {"torch/__init__.py": f"__version__ = {version!r}\n"})


def fake_torch_xla(
    dest: Path,
    version: str,
    *,
    bug: str = "none",
    gitrev: str = "0" * 40,
    torch: str | None = None,
    extra: dict[str, str] | None = None,
) -> Path:
    """A torch_xla whose ``BUG`` attribute the fake reproducers read.

    ``bug``: "none" | "present" | "missing-api" | "crash" | "hang" | "fork" (what the
    fake reproducer does with it is up to the reproducer)."""
    files = {
        "torch_xla/__init__.py": f"__version__ = {version!r}\nBUG = {bug!r}\n",
        "torch_xla/version.py": f"__version__ = {version!r}\n__xla_gitrev__ = {gitrev!r}\n",
    }
    files.update(extra or {})
    requires = (f"torch=={torch}",) if torch else ()
    return build_wheel(dest, "torch_xla", version, files, requires)


def fake_wheelhouse(house: Path, behaviour: dict[str, str]) -> Path:
    """Fake releases in ``house``: torch_xla ``version`` with ``bug`` for each of ``behaviour``, the torch each
    pairs with, and the pins the oldest releases ask for in data/releases.yaml."""
    for version, bug in behaviour.items():
        fake_torch_xla(house, version, bug=bug)
        fake_torch(house, {"2.6.1": "2.6.0", "2.8.1": "2.8.0"}.get(version, version))
    build_wheel(house, "numpy", "1.26.4", {"numpy/__init__.py": "__version__ = '1.26.4'\n"})
    build_wheel(house, "setuptools", "69.5.1", {"setuptools/__init__.py": "__version__ = '69.5.1'\n"})
    return house


FAKE_REPRODUCER = """\
import sys, time, os
try:
    import torch_xla
except ImportError as err:
    print("untestable:", err); sys.exit(125)
bug = torch_xla.BUG
print("torch_xla", torch_xla.__version__, "PJRT_DEVICE", os.environ.get("PJRT_DEVICE"), "devices", os.environ.get("CPU_NUM_DEVICES"))
if bug == "present":
    print("TypeError: unhashable type: 'list'"); sys.exit(1)
if bug == "missing-api":
    print("this release has no such API"); sys.exit(125)
if bug == "crash":
    print("Segmentation fault (unrelated)"); sys.exit(1)
if bug == "hang":
    import subprocess
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    time.sleep(600)
if bug == "abort":
    os.abort()
sys.exit(0)
"""


def fake_record(
    root: Path,
    record_id: str = "fake-bug",
    *,
    timeout: int = 60,
    env: dict | None = None,
    signatures: tuple[str, ...] = ("unhashable type: 'list'",),
    affected: str = ">=2.4,<2.6",
    fixed_in: str | None = "2.6.0",
    reproducer: str = FAKE_REPRODUCER,
    packages: tuple[str, ...] = (),
) -> Path:
    """A schema-valid record plus reproducer under ``root`` (issues/, reproducers/)."""
    import yaml

    (root / "issues").mkdir(parents=True, exist_ok=True)
    (root / "reproducers").mkdir(parents=True, exist_ok=True)
    (root / "reproducers" / f"{record_id}.py").write_text(reproducer)
    data = {
        "id": record_id,
        "title": {"en": "Fake bug for tests", "zh": "测试用的假问题"},
        "summary": {"en": "A fake bug.", "zh": "一个假的问题。"},
        "symptoms": {"en": ["TypeError: unhashable type: 'list'"], "zh": ["报错 TypeError: unhashable type: 'list'"]},
        "root_cause": {"en": "The fake package says so.", "zh": "假包中设置了该问题。"},
        "workaround": {"en": "Upgrade the fake package.", "zh": "升级假包。"},
        "status": "fixed",
        "component": "testing",
        "tags": ["fake", "spmd"],
        "upstream": {"repo": "pytorch/xla", "issues": [1], "fixed_by": [2]},
        "environment": {"hardware": "cpu", "devices": 4, "env": dict(env or {}), "packages": list(packages)},
        "reproducer": {
            "path": f"reproducers/{record_id}.py",
            "fidelity": "exact",
            "timeout": timeout,
            "signatures": list(signatures),
        },
        "versions": {"affected": affected, **({"fixed_in": fixed_in} if fixed_in else {})},
    }
    path = root / "issues" / f"{record_id}.yaml"
    path.write_text(
        "# yaml-language-server: $schema=../src/xlakb/data/record.schema.json\n"
        + yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    )
    return path
