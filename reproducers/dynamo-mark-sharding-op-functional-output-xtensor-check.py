"""torch.ops.xla.dynamo_mark_sharding inside torch.compile(backend="openxla") fails with
`Check failed: xtensor` (2.9: "Expected XLA tensor. Got: XLAFloatType").

Upstream: https://github.com/pytorch/xla/issues/7645 (open).

Under SPMD, a compiled function that annotates its input with the custom op
`torch.ops.xla.dynamo_mark_sharding(...)` and then computes `x.pow(2).mean(-1, keepdim=True)`
fails on its first call: the graph output that reaches the Dynamo bridge's `Deduper.dedup` is
still a functional-tensor wrapper, not an XLA tensor. Without the op the same function compiles.

`--workaround` marks the sharding with `xs.mark_sharding` on the input before calling the compiled
function (no custom op inside) and must report "not reproduced".

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python reproducers/dynamo-mark-sharding-op-functional-output-xtensor-check.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on this
release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    try:
        import numpy as np
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.spmd as xs
        import torch_xla.runtime as xr
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    xr.use_spmd()
    try:
        import torch_xla.experimental.custom_kernel  # noqa: F401  (registers the op on old releases)
    except ImportError:
        pass
    if not hasattr(torch.ops.xla, "dynamo_mark_sharding"):
        print("untestable: torch.ops.xla.dynamo_mark_sharding does not exist")
        return UNTESTABLE

    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    device_ids, mesh_shape, axis_names = list(range(n)), [n, 1], str(("fsdp", "model"))

    def annotated(x):
        torch.ops.xla.dynamo_mark_sharding(x, device_ids, mesh_shape, axis_names, "('fsdp', None)")
        return x.pow(2).mean(-1, keepdim=True)

    def plain(x):
        return x.pow(2).mean(-1, keepdim=True)

    x = torch.randn(16, 64, device=xm.xla_device())
    if workaround:
        xs.mark_sharding(x, mesh, ("fsdp", None))
    compiled = torch.compile(plain if workaround else annotated, backend="openxla", fullgraph=True)
    try:
        out = compiled(x)
        got = out.cpu()
    except RuntimeError as err:
        text = str(err)
        if "Check failed: xtensor" in text or "Expected XLA tensor" in text:
            traceback.print_exc()
            first = text.strip().splitlines()[0]
            print(f"XLAKB-REPRODUCED: dynamo_mark_sharding under torch.compile(backend='openxla') failed: {first}")
            return REPRODUCED
        raise
    if not torch.allclose(got, x.cpu().pow(2).mean(-1, keepdim=True), atol=1e-5):
        print("error: compiled result differs from eager")
        return 2
    print(f"not reproduced ({'sharding marked outside' if workaround else 'op inside'}): {tuple(got.shape)}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
