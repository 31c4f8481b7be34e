# User saw: under SPMD, dynamo's openxla bridge retraces a compiled function on every step when an input has no
# sharding annotation ('' at the check vs '{replicated}' recorded at trace time).
# https://github.com/pytorch/xla/issues/9755
import numpy as np, torch, torch.nn as nn
import torch_xla, torch_xla.core.xla_model as xm, torch_xla.runtime as xr
try:
  import torch_xla.distributed.spmd as xs
except ImportError:
  import torch_xla.experimental.xla_sharding as xs
try:
  import torch_xla._dynamo.dynamo_bridge as bridge
except ImportError:
  import torch_xla.core.dynamo_bridge as bridge
xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
calls = {"n": 0}
orig = bridge.extract_graph_helper
def counting(*a, **k):
  calls["n"] += 1
  return orig(*a, **k)
bridge.extract_graph_helper = counting
dev = xm.xla_device()
lin = nn.Linear(16, 16).to(dev)
xs.mark_sharding(lin.weight, mesh, ("data", None))
@torch.compile(backend="openxla")
def step(x):
  return lin(x).relu().sum(dim=-1)
per_call = []
for i in range(8):
  x = torch.randn(8, 16).to(dev)  # fresh input, no sharding annotation
  before = calls["n"]
  y = step(x)
  xm.mark_step()
  per_call.append(calls["n"] - before)
  spec = torch_xla._XLAC._get_xla_sharding_spec(x)
  print(f"call {i}: extract_graph_helper ran {per_call[-1]}x; input spec after call: {spec!r}", flush=True)
print("extract_graph_helper calls per step:", per_call)
print("RETRACED EVERY STEP" if all(c >= 1 for c in per_call[2:]) else "cached after warm-up")
