# User saw: FSDPv2 (SPMD) training with transformer auto-wrap crashes once XLA_DISABLE_FUNCTIONALIZATION=1 is set
# (a timm VisionTransformer in the report; two auto-wrapped residual blocks here).
# https://github.com/pytorch/xla/issues/8607
import os
os.environ.setdefault("XLA_DISABLE_FUNCTIONALIZATION", "1")
import numpy as np, torch, torch.nn as nn
import torch_xla, torch_xla.core.xla_model as xm, torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2
xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ('fsdp', 'model'))
xs.set_global_mesh(mesh)
class Blk(nn.Module):
  def __init__(s): super().__init__(); s.l1 = nn.Linear(16, 32); s.l2 = nn.Linear(32, 16)
  def forward(s, x): return s.l2(torch.relu(s.l1(x))) + x
class M(nn.Module):
  def __init__(s): super().__init__(); s.b = nn.ModuleList([Blk() for _ in range(2)]); s.h = nn.Linear(16, 4)
  def forward(s, x):
    for b in s.b: x = b(x)
    return s.h(x)
dev = xm.xla_device()
m = M().to(dev)
import functools
from torch_xla.distributed.fsdp.wrap import transformer_auto_wrap_policy
pol = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Blk})
def shard_output(output, mesh):
  xs.mark_sharding(output, mesh, ('fsdp', None))
m = FSDPv2(m, shard_output=shard_output, auto_wrap_policy=pol)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(3):
  x = torch.randn(8, 16).to(dev)
  xs.mark_sharding(x, mesh, ('fsdp', None))
  opt.zero_grad()
  loss = m(x).sum()
  loss.backward()
  opt.step()
  xm.mark_step()
  print("step", i, loss.item())
print("OK")
