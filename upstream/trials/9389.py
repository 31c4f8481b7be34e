# A user defining an SPMD mesh over a subset of devices whose ids do not start
# at 0 (e.g. devices 2 and 3 of four) saw mark_sharding fail with
# "RuntimeError: Passing an empty index list to Tensor::index() is not valid syntax".
# https://github.com/pytorch/xla/issues/9389
import sys

import numpy as np
import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

try:
  import torch_xla.distributed.spmd as xs
except ImportError:
  import torch_xla.experimental.xla_sharding as xs

xr.use_spmd()
n = xr.global_runtime_device_count()
print("devices", n)
device = xm.xla_device()

# full mesh works
t0 = torch.arange(8, dtype=torch.float32).to(device)
xs.mark_sharding(t0, xs.Mesh(np.arange(n), (n,), ("x",)), ("x",))
print("full mesh ok", t0.cpu().tolist())

ids = np.array([2, 3])
try:
  mesh = xs.Mesh(ids, (2,), ("x",))
  t = torch.arange(8, dtype=torch.float32).to(device)
  xs.mark_sharding(t, mesh, ("x",))
  out = (t * 2).cpu()
  print("sub mesh [2,3] result", out.tolist())
except Exception as e:
  print("ERROR", type(e).__name__, (str(e).splitlines() or [""])[0][:300])
  sys.exit(1)
