# User saw: a SIGSEGV when xm.set_rng_state() or torch_xla.device() is called before
# xr.use_spmd(), then a sharded tensor is multiplied with an unsharded one.
# https://github.com/pytorch/xla/issues/9735
import faulthandler; faulthandler.enable()
import numpy as np
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
try:
    import torch_xla.distributed.spmd as xs
except ImportError:
    import torch_xla.experimental.xla_sharding as xs

import sys
CONTROL = 'control' in sys.argv   # control run: call use_spmd first
if not CONTROL:
    xm.set_rng_state(42)          # touching the runtime before use_spmd is the trigger
    device = xm.xla_device()
xr.use_spmd()
if CONTROL:
    device = xm.xla_device()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ('data', 'model'))
t = torch.randn(64, 32).to(device)
xs.mark_sharding(t, mesh, ('data', 'model'))
x = torch.randn(16, 64).to(device)   # left unsharded
y = x @ t
xm.mark_step()
print("sum:", y.sum().item(), "-> no crash")
