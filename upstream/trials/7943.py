# User saw: .cpu() in an SPMD ResNet-50 loop raises CompileTime and slows the loop; each .cpu() of sharded data
# compiles an uncached ReplicateShardedData program. https://github.com/pytorch/xla/issues/7943
import numpy as np, torch, torch_xla, torch_xla.core.xla_model as xm, torch_xla.runtime as xr
import torch_xla.debug.metrics as met
try:
  import torch_xla.distributed.spmd as xs
except ImportError:
  import torch_xla.experimental.xla_sharding as xs
xr.use_spmd(); n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ("a", "b"))
dev = xm.xla_device()
ct = lambda: (met.metric_data("CompileTime") or [0])[0]
for i in range(4):
  x = torch.randn(16, 8).to(dev)
  xs.mark_sharding(x, mesh, ("a", None))
  y = x * 2
  xm.mark_step()
  c0 = ct(); y.cpu(); c1 = ct()
  print(i, "compiles during .cpu():", c1 - c0, "total", c1, "counters", met.counter_names()[:0])
