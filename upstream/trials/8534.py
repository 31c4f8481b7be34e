# User saw: a toy MLP tensor-parallelised with DTensor parallelize_module (ColwiseParallel /
# RowwiseParallel) on an init_device_mesh("xla", ...) mesh does not run its forward pass on XLA.
# https://github.com/pytorch/xla/issues/8534
import torch
from torch import nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
try:
  from torch.distributed.device_mesh import init_device_mesh
  from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel
except ImportError as e:
  print("UNTESTABLE:", e)
  raise SystemExit(125)

xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = init_device_mesh("xla", (n,))
if getattr(mesh, "_coordinate_on_dim", None) is None:
  mesh._coordinate_on_dim = [0]  # single-controller SPMD; see pytorch/xla#8528


class Toy(nn.Module):

  def __init__(self):
    super().__init__()
    self.in_proj = nn.Linear(10, 32)
    self.relu = nn.ReLU()
    self.out_proj = nn.Linear(32, 5)

  def forward(self, x):
    return self.out_proj(self.relu(self.in_proj(x)))


device = xm.xla_device()
model = Toy().to(device)
model = parallelize_module(model, mesh, {"in_proj": ColwiseParallel(), "out_proj": RowwiseParallel()})
x = torch.randn(4, 10).to(device)
try:
  out = model(x)
  xm.mark_step()
  print("forward ran:", tuple(out.shape))
except Exception as e:
  print("FAILED:", type(e).__name__, str(e).splitlines()[0][:200])
  raise SystemExit(1)
