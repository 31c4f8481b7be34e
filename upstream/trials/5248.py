# User saw, training with SPMD + AMP (autocast, GradScaler, syncfree SGD): "Invalid sharding for instruction: %add = f32[] add(...),
# sharding={devices=[1,4]...}: Number of tile assignment dimensions ... is different than the input rank".
# https://github.com/pytorch/xla/issues/5248
import os
os.environ.setdefault("XLA_USE_SPMD", "1")
import numpy as np, torch
from torch import nn
import torch_xla, torch_xla.core.xla_model as xm
try:
  import torch_xla.distributed.spmd as xs
except ImportError:
  import torch_xla.experimental.xla_sharding as xs
from torch_xla.amp import syncfree
try:
  from torch_xla.amp import GradScaler
except ImportError:
  from torch.amp import GradScaler
import torch_xla.runtime as xr
if hasattr(xr, "use_spmd"):
  xr.use_spmd()

class SimpleLinear(nn.Module):
  def __init__(self):
    super().__init__()
    self.fc0 = nn.Linear(128, 128); self.fc1 = nn.Linear(128, 128)
    self.fc2 = nn.Linear(128, 128); self.fc3 = nn.Linear(128, 128); self.relu = nn.ReLU()
  def forward(self, x):
    h = self.relu(self.fc0(x)); y = self.relu(self.fc1(h) + x); return self.fc3(y)

device = xm.xla_device()
model = SimpleLinear().to(device)
n = 4
mesh = xs.Mesh(np.arange(n), (1, n))
for lin in (model.fc0, model.fc1, model.fc2, model.fc3):
  xs.mark_sharding(lin.weight, mesh, (0, 1))
opt = syncfree.SGD(model.parameters(), lr=0.01)
scaler = GradScaler() if GradScaler.__module__.startswith('torch_xla') else GradScaler('xla')
loss_fn = nn.MSELoss()
for step in range(2):
  x = torch.randn(16, 128).to(device); t = torch.randn(16, 128).to(device)
  xs.mark_sharding(x, mesh, (0, 1))
  opt.zero_grad()
  # torch_xla.amp.autocast(device) fails on a CPU device (a separate bug); use the xla autocast directly
  with torch.autocast('xla', dtype=torch.bfloat16):
    out = model(x); loss = loss_fn(out, t)
  scaler.scale(loss).backward()
  scaler.step(opt)
  scaler.update()
  xm.mark_step()
  print("step", step, "loss", loss.item(), flush=True)
print("OK")
