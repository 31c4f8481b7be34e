# What was reported: on a (1, n) mesh, xs.mark_sharding(t, mesh, (0, 1)) and (1, 0) produced the same
# sharding (the partition spec was not respected), so a row-wise request gave column shards.
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
print("(0, 1):", sa)
print("(1, 0):", sb)
print("SAME sharding (bug)" if sa == sb else "different shardings (as expected)")
