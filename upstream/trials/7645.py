# Calling torch.ops.xla.dynamo_mark_sharding inside a function compiled with
# torch.compile(backend="openxla", fullgraph=True) under SPMD failed with
# "Input tensor is not an XLA tensor: XLAFloatType". https://github.com/pytorch/xla/issues/7645
import numpy as np
import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

try:
    import torch_xla.distributed.spmd as xs
    import torch_xla.experimental.custom_kernel  # noqa: F401  (registers dynamo_mark_sharding)
except ImportError as e:
    print("untestable:", e)
    raise SystemExit(125)

xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
device_ids = list(range(n))
mesh_shape = [n, 1]
axis_names = str(("fsdp", "model"))

if not hasattr(torch.ops.xla, "dynamo_mark_sharding"):
    print("untestable: no torch.ops.xla.dynamo_mark_sharding")
    raise SystemExit(125)


def important_fn(inputs):
    torch.ops.xla.dynamo_mark_sharding(inputs, device_ids, mesh_shape, axis_names, "('fsdp', None)")
    inputs = inputs.to(torch.float32)
    return inputs.pow(2).mean(-1, keepdim=True)


compiled = torch.compile(important_fn, backend="openxla", fullgraph=True)
inputs = torch.randn((16, 64), device=xm.xla_device())
try:
    out = compiled(inputs)
    print("result", out.shape, out.cpu().sum().item())
except Exception as e:
    print("BUG:", type(e).__name__, str(e).strip().splitlines()[0][:300])
    raise SystemExit(1)
print("OK")
