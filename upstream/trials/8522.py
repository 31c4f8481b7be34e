# Issue 8522: wrapping a model that has a 0-d (scalar) parameter in SpmdFullyShardedDataParallel (FSDPv2)
# failed in mark_sharding with "TypeError: unhashable type: 'list'" (scalar partition spec returned as a list).
# https://github.com/pytorch/xla/issues/8522
import numpy as np
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
xr.use_spmd()
import torch_xla.distributed.spmd as xs
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2

device = xm.xla_device()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.scale = torch.nn.Parameter(torch.tensor(2.0))
    def forward(self, x):
        return self.fc(x) * self.scale

try:
    model = FSDPv2(Net().to(device), mesh=mesh)
    out = model(torch.randn(n, 8, device=device))
    xm.mark_step()
    print("ok:", out.cpu().shape)
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
