# What the user saw: (1) on a (1, n) mesh, xs.mark_sharding(t, mesh, (0, 1)) and (1, 0) gave the same
# sharding; (2) with both operands sharded, A - B and A / B came back as B - A and B / A (A + B, A * B fine).
# https://github.com/pytorch/xla/issues/5264
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

try:
    import torch_xla.distributed.spmd as xs
except ImportError:
    import torch_xla.experimental.xla_sharding as xs

xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (1, n))
a = torch.randn(64, 32).to(xm.xla_device())
b = torch.randn(64, 32).to(xm.xla_device())
xs.mark_sharding(a, mesh, (0, 1))
xs.mark_sharding(b, mesh, (1, 0))
sa = torch_xla._XLAC._get_xla_sharding_spec(a)
sb = torch_xla._XLAC._get_xla_sharding_spec(b)
print("(0, 1):", sa, " (1, 0):", sb, "-> SAME (bug 1)" if sa == sb else "-> different (ok)")

t1 = torch.ones(64, 32)
t2 = torch.randn(64, 32)
for name, op in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)]:
    x1, x2 = t1.to(xm.xla_device()), t2.to(xm.xla_device())
    xs.mark_sharding(x1, mesh, (0, 1))
    xs.mark_sharding(x2, mesh, (0, 1))
    ok = torch.allclose(op(t1, t2), op(x1, x2).cpu(), atol=1e-5)
    print(name, "matches CPU" if ok else "WRONG (bug 2)")
