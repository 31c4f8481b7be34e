# What the user saw: under SPMD, xm.send_cpu_data_to_device of a 1-D int64 tensor with a
# ShardingSpec whose partition spec names only the first axis of a 2-D mesh crashed the process.
# https://github.com/pytorch/xla/issues/8606
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
mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
x = torch.zeros((128,), dtype=torch.int64)
out = xm.send_cpu_data_to_device(x, xm.xla_device(), xs.ShardingSpec(mesh, ("fsdp",)))
t = out[0] if isinstance(out, (list, tuple)) else out
print("sum:", t.cpu().sum().item())
print("OK no crash")
