"""Synthetic records and measured results, for the site's tests and benchmark only.

:func:`make_layout` copies the parts of a checkout the site is built from
(``mkdocs.yml``, ``site/``, ``issues/``, ``reproducers/``, ``bisect/``) into a
scratch folder and adds generated, schema-valid records there.  Nothing here is
ever written into the repository, and the "measured" files it writes are
fixtures: they are not results of real runs.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import yaml

RELEASES = [
    ("2.1.0", "2.1.0"),
    ("2.2.0", "2.2.0"),
    ("2.3.0", "2.3.0"),
    ("2.4.0", "2.4.0"),
    ("2.5.0", "2.5.0"),
    ("2.5.1", "2.5.1"),
    ("2.6.0", "2.6.0"),
    ("2.6.1", "2.6.0"),
    ("2.7.0", "2.7.0"),
    ("2.8.0", "2.8.0"),
    ("2.8.1", "2.8.0"),
    ("2.9.0", "2.9.0"),
]

COPY = ("mkdocs.yml", "site", "issues", "limitations", "reproducers", "bisect", "upstream", "mined")

_EN_WORDS = (
    "tensor",
    "graph",
    "compile",
    "cache",
    "device",
    "buffer",
    "sharding",
    "mesh",
    "optimizer",
    "gradient",
    "checkpoint",
    "dataloader",
    "collective",
    "allreduce",
    "profiler",
    "dynamo",
    "autocast",
    "bfloat16",
    "lowering",
    "runtime",
    "replica",
    "barrier",
    "layout",
    "padding",
)
_ZH_WORDS = (
    "张量",
    "计算图",
    "编译",
    "缓存",
    "设备",
    "缓冲区",
    "优化器",
    "梯度",
    "检查点",
    "数据加载",
    "集合通信",
    "性能分析",
    "混合精度",
    "降级",
    "运行时",
    "副本",
    "屏障",
    "布局",
    "填充",
    "内存",
)
_COMPONENTS = ("spmd", "fsdp", "dynamo", "pjrt", "lowering", "runtime", "dataloader", "profiler")
_TAGS = (
    "crash",
    "wrong-result",
    "hang",
    "memory",
    "performance",
    "tpu",
    "gpu",
    "cpu",
    "sharding",
    "compile",
    "checkpoint",
    "distributed",
)
_STATUSES = ("open", "fixed", "regressed", "workaround-only", "wontfix")

REPRODUCER = '''"""Synthetic reproducer for {id} (a site test fixture; it is never run).

Shaped like a real reproducer, so pages and benchmarks carry a realistic amount of code.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  import numpy as np
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  try:
    import torch_xla.distributed.spmd as xs
  except ImportError as e:  # releases before torch_xla.distributed.spmd
    print(f"UNTESTABLE: torch_xla.distributed.spmd is missing ({{e}})")
    return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))

  class Model(nn.Module):

    def __init__(self):
      super().__init__()
      self.fc1 = nn.Linear(16, 32)
      self.fc2 = nn.Linear(32, 16)
      self.scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
      return self.fc2(torch.relu(self.fc1(x))) * self.scale

  device = xm.xla_device()
  model = Model().to(device)
  try:
    xs.mark_sharding(model.fc1.weight, mesh, ("data", None))
    x = torch.randn(4 * n, 16, device=device)
    xs.mark_sharding(x, mesh, ("data", None))
    loss = model(x).sum()
    loss.backward()
    xm.mark_step()
  except RuntimeError as e:
    if "SyntheticError" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: {{e}}")
      return REPRODUCED
    raise

  spec = torch_xla._XLAC._get_xla_sharding_spec(model.fc1.weight)
  print(f"NOT REPRODUCED: {id} (sharding {{spec or '<none>'!r}}), loss={{loss.item():.4f}}")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
'''


def make_layout(dest: Path, root: Path | None = None) -> Path:
    """A scratch copy of the site sources of ``root`` (the checkout) at ``dest``."""
    root = root or Path(__file__).resolve().parents[1]
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, dirs_exist_ok=True)
        elif src.is_file():
            shutil.copy2(src, dest / name)
        else:
            (dest / name).mkdir(exist_ok=True)
    # The hook and the jieba dictionary are named by path in mkdocs.yml.
    sitegen = Path(__file__).resolve().parents[1] / "src" / "xlakb" / "sitegen"
    target = dest / "src" / "xlakb" / "sitegen"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("hooks.py", "jieba_dict.txt"):
        shutil.copy2(sitegen / name, target / name)
    return dest


def write_record(root: Path, data: dict, source: str | None = None) -> Path:
    path = root / "issues" / f"{data['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "# yaml-language-server: $schema=../src/xlakb/data/record.schema.json\n"
    text += yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    path.write_text(text, "utf-8")
    repro = root / data["reproducer"]["path"]
    repro.parent.mkdir(parents=True, exist_ok=True)
    repro.write_text(source or REPRODUCER.format(id=data["id"]), "utf-8")
    return path


def record(
    rid: str,
    *,
    title_en: str,
    title_zh: str,
    summary_en: str,
    summary_zh: str,
    symptoms_en: list[str],
    symptoms_zh: list[str],
    signature: str,
    status: str = "fixed",
    component: str = "spmd",
    tags: list[str] | None = None,
    affected: str = ">=2.4,<2.6",
    fixed_in: str | None = "2.6.0",
    env: dict | None = None,
    issue: int = 8000,
    proxy: bool = False,
) -> dict:
    data = {
        "id": rid,
        "title": {"en": title_en, "zh": title_zh},
        "summary": {"en": summary_en, "zh": summary_zh},
        "symptoms": {"en": symptoms_en, "zh": symptoms_zh},
        "root_cause": {"en": f"Synthetic root cause of {rid}.", "zh": f"{rid} 的根本原因（测试数据）。"},
        "workaround": {"en": f"Synthetic workaround for {rid}.", "zh": f"{rid} 的规避方法（测试数据）。"},
        "status": status,
        "component": component,
        "tags": tags or [component],
        "signatures": [signature],
        "upstream": {"repo": "pytorch/xla", "issues": [issue], "fixed_by": [issue + 91] if fixed_in else []},
        "environment": {"hardware": "cpu", "devices": 4, "env": env or {}, "packages": ["numpy"]},
        "reproducer": {"path": f"reproducers/{rid}.py", "fidelity": "exact", "timeout": 300, "signatures": [signature]},
        "versions": {"affected": affected},
    }
    if proxy:
        data["reproducer"]["fidelity"] = "proxy"
        data["reproducer"]["proxy_checks"] = {
            "en": f"Synthetic proxy: checks the cause of {rid} on CPU; cannot show the failure itself.",
            "zh": f"测试用代理：在 CPU 上检查 {rid} 的成因，无法展示故障本身。",
        }
    if fixed_in:
        data["versions"]["fixed_in"] = fixed_in
    elif status == "fixed":
        data["status"] = "open"
    return data


def random_record(i: int, rng: random.Random) -> dict:
    """A filler record made of generic words, unlike any real error message."""
    en = rng.sample(_EN_WORDS, 4)
    zh = rng.sample(_ZH_WORDS, 4)
    status = rng.choice(_STATUSES)
    lo = rng.randrange(1, 8)
    hi = rng.randrange(lo + 1, 10)
    fixed = f"2.{hi}.0" if status in ("fixed", "regressed") else None
    return record(
        f"synthetic-{i:04d}-{en[0]}-{en[1]}",
        title_en=f"{en[0].capitalize()} {en[1]} fails after {en[2]} with {en[3]} (synthetic {i})",
        title_zh=f"{zh[0]}在{zh[1]}之后与{zh[2]}一起使用时出错（测试数据 {i}）",
        summary_en=f"When {en[0]} meets {en[1]}, the {en[2]} step breaks; see the {en[3]} notes.",
        summary_zh=f"当{zh[0]}遇到{zh[1]}时，{zh[2]}这一步会出错；参见{zh[3]}的说明。",
        symptoms_en=[f"SyntheticError{i}: {en[2]} {en[3]} mismatch"],
        symptoms_zh=[f"SyntheticError{i}：{zh[2]}与{zh[3]}不匹配"],
        signature=f"SyntheticError{i}",
        status=status,
        component=rng.choice(_COMPONENTS),
        tags=rng.sample(_TAGS, 2),
        affected=f">=2.{lo},<2.{hi}",
        fixed_in=fixed,
        issue=5000 + i,
        proxy=i % 5 == 4,
    )


def stand_in_records() -> list[dict]:
    """Stand-ins for the project's first records, used only when the real ones are absent."""
    return [
        record(
            "fsdpv2-scalar-param-unhashable-list",
            title_en="FSDPv2 cannot wrap a model with a scalar (0-d) parameter",
            title_zh="FSDPv2 无法包装带有标量参数的模型",
            summary_en="Wrapping a module that owns a 0-d parameter with SPMD FSDPv2 raises a TypeError.",
            summary_zh="用 SPMD 的 FSDPv2 包装含有零维参数的模块时抛出 TypeError。",
            symptoms_en=["TypeError: unhashable type: 'list' from Mesh.get_op_sharding"],
            symptoms_zh=["Mesh.get_op_sharding 抛出 TypeError: unhashable type: 'list'"],
            signature="TypeError: unhashable type: 'list'",
            component="fsdp",
            tags=["fsdpv2", "spmd"],
            affected=">=2.4,<2.6",
            fixed_in="2.6.0",
            issue=8522,
        ),
        record(
            "fsdpv2-nofunc-has-sharding",
            title_en="FSDPv2 with functionalization disabled aborts on has_sharding()",
            title_zh="关闭功能化后 FSDPv2 在 has_sharding() 检查处中止",
            summary_en="With XLA_DISABLE_FUNCTIONALIZATION=1 the sharded parameters end up replicated and a check fails.",
            summary_zh="设置 XLA_DISABLE_FUNCTIONALIZATION=1 后分片参数变成了复制，检查失败。",
            symptoms_en=["Check failed: has_sharding()"],
            symptoms_zh=["检查失败：Check failed: has_sharding()"],
            signature=r"Check failed: has_sharding\(\)",
            status="open",
            component="spmd",
            tags=["fsdpv2", "functionalization"],
            affected=">=2.5",
            fixed_in=None,
            env={"XLA_DISABLE_FUNCTIONALIZATION": "1"},
            issue=8607,
        ),
        record(
            "dtensor-parallelize-module-functional-assert",
            title_en="DTensor parallelize_module on an XLA device mesh hits an internal assert",
            title_zh="在 XLA 设备网格上使用 DTensor 张量并行时触发内部断言",
            summary_en="parallelize_module fails with an isFunctionalTensor assert; distribute_tensor per parameter works.",
            summary_zh="parallelize_module 因 isFunctionalTensor 断言失败；逐个参数调用 distribute_tensor 可以规避。",
            symptoms_en=["isFunctionalTensor INTERNAL ASSERT FAILED"],
            symptoms_zh=["isFunctionalTensor 内部断言失败"],
            signature="isFunctionalTensor",
            status="workaround-only",
            component="dtensor",
            tags=["dtensor", "tensor-parallel"],
            affected=">=2.5",
            fixed_in=None,
            issue=8534,
        ),
        record(
            "multislice-megascale-double-discovery",
            title_en="Multislice training runs MegaScale device discovery twice",
            title_zh="多切片训练重复进行 MegaScale 设备发现",
            summary_en="Tracing flash attention on a multislice mesh triggers MegaScale discovery a second time.",
            summary_zh="在多切片网格上追踪闪存注意力时会再次触发 MegaScale 设备发现。",
            symptoms_en=["MegaScale discovery runs twice while tracing"],
            symptoms_zh=["追踪时 MegaScale 设备发现执行了两次"],
            signature="discovery ran twice",
            status="regressed",
            component="runtime",
            tags=["multislice", "tpu"],
            affected=">=2.6,<2.7",
            fixed_in="2.7.0",
            issue=8609,
            proxy=True,
        ),
    ]


def write_matrix(root: Path, data: dict, *, measured_at: str = "2026-11-22T03:04:05Z") -> Path:
    """A fixture ``matrix.json`` following the record's claims (plus one untestable release)."""
    from xlakb.records import claim

    results = []
    for tx, torch in RELEASES:
        c = claim(data, tx)
        verdict = "untestable" if tx == "2.1.0" else ("reproduced" if c else "not-reproduced")
        results.append(
            {
                "candidate": tx,
                "kind": "release",
                "torch_xla": tx,
                "torch": torch,
                "verdict": verdict,
                "exit_code": {"reproduced": 1, "not-reproduced": 0, "untestable": 125}[verdict],
                "duration_s": 11.2,
                "measured_at": measured_at,
                "env_key": f"fixture-{tx}",
                "detail": "fixture: exit 1, signature matched" if verdict == "reproduced" else f"fixture: {verdict}",
            }
        )
    path = root / "bisect" / data["id"] / "matrix.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "record": data["id"],
                "kind": "matrix",
                "reproducer": {"path": data["reproducer"].get("path", ""), "sha256": "0" * 64},
                "runner": "uv",
                "host": {"platform": "fixture"},
                "results": results,
            },
            indent=2,
        ),
        "utf-8",
    )
    return path


def write_bisect(root: Path, data: dict, source: str = "commits") -> Path:
    """A fixture ``bisect-<source>.json`` with commits and PRs to link to."""
    sha_old, sha_new = "a" * 40, "b" * 40
    report = {
        "record": data["id"],
        "kind": "bisect",
        "source": source,
        "direction": "fixed",
        "old_label": "reproduced",
        "new_label": "not-reproduced",
        "range": {"first": "2.5.1", "last": "2.6.0", "count": 42},
        "last_old": {"label": sha_old[:12], "kind": "commit", "meta": {"sha": sha_old, "pr": 8600, "date": "2025-01-20"}},
        "first_new": {
            "label": sha_new[:12],
            "kind": "commit",
            "meta": {
                "sha": sha_new,
                "pr": 8613,
                "url": f"https://github.com/pytorch/xla/commit/{sha_new}",
                "pr_url": "https://github.com/pytorch/xla/pull/8613",
                "date": "2025-01-22",
            },
        },
        "exact": False,
        "between": [{"sha": "c" * 40, "subject": "Fix partition spec of scalars <fixture>", "pr": 8613, "python_only": True}],
        "confidence": "high",
        "confidence_reasons": ["both ends verified (fixture)"],
        "probes": [
            {"candidate": "2.5.1", "verdict": "reproduced", "duration_s": 10.0},
            {"candidate": "2.6.0", "verdict": "not-reproduced", "duration_s": 9.0},
        ],
        "command": f"xlakb bisect {data['id']} --source {source}",
        "measured_at": "2026-11-22T04:05:06Z",
    }
    path = root / "bisect" / data["id"] / f"bisect-{source}-{report['direction']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2), "utf-8")
    return path


def populate(root: Path, n: int, *, seed: int = 1, stand_ins: bool = True, matrices: bool = True) -> list[str]:
    """Add ``n`` filler records (and the stand-ins missing from ``root``); return the new ids."""
    rng = random.Random(seed)
    new = []
    datas = [random_record(i, rng) for i in range(n)]
    if stand_ins:
        datas += [d for d in stand_in_records() if not (root / "issues" / f"{d['id']}.yaml").exists()]
    for d in datas:
        write_record(root, d)
        if matrices and not (root / "bisect" / d["id"] / "matrix.json").exists():
            write_matrix(root, d)
        new.append(d["id"])
    return new
