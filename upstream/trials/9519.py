# What the user asked: under SPMD, xm.all_gather(t, 0, groups=..., pin_layout=False) of a tensor sharded on
# dim 0 over a (batch, model) mesh returned a tensor twice the global size whose halves both equal t.
# https://github.com/pytorch/xla/issues/9519  (8 devices in a 2x4 mesh there; 4 devices in a 2x2 mesh here)
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
mesh = xs.Mesh(np.arange(n), (2, n // 2), ("batch", "model"))
host = torch.arange(8 * 4, dtype=torch.float32).reshape(8, 4)
t = host.to(xm.xla_device())
xs.mark_sharding(t, mesh, ("batch", None))
groups = [[i, i + n // 2] for i in range(n // 2)]
y = xm.all_gather(t, 0, groups=groups, pin_layout=False)
y = y.cpu()
print("input", tuple(host.shape), "output", tuple(y.shape))
print("halves equal input:", torch.equal(y[:8], host) and torch.equal(y[8:], host))
