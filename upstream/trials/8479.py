# User saw: xs.mark_sharding on an nn.Parameter of a module that was still on the CPU fails with
# "Check failed: xtensor ... Input tensor is not an XLA tensor". The thread later found the model had
# simply not been moved to the XLA device. https://github.com/pytorch/xla/issues/8479
import numpy as np
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
try:
    import torch_xla.distributed.spmd as xs
except ImportError:
    import torch_xla.experimental.xla_sharding as xs
xr.use_spmd()
device = xm.xla_device()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1, 1), ('expert', 'a', 'b'))

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.empty(n, 8, 16, dtype=torch.bfloat16))

m = MLP()
try:
    xs.mark_sharding(m.w1.data, mesh, ('expert', None, None))
    print("cpu parameter: no error")
except Exception as e:
    print("cpu parameter raised:", type(e).__name__, str(e)[:200])
m = m.to(device)
xs.mark_sharding(m.w1, mesh, ('expert', None, None))
print("after .to(device):", torch_xla._XLAC._get_xla_sharding_spec(m.w1))
