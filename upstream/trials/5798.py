# User saw: following the SPMD blog with a Linear layer, printing the result of an op applied to an
# XLAShardedTensor failed in XLAShardedTensor.__repr__ with "AttributeError: global_tensor"
# (fixed by PR 5807 for outputs produced by sharding propagation). https://github.com/pytorch/xla/issues/5798
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
mesh = xs.Mesh(np.arange(n), (n, 1), ('x', 'y'))
lin = torch.nn.Linear(8, 8).to(device)
xs.mark_sharding(lin.weight, mesh, (1, 0))
t1 = torch.randn(4, 8).to(device)
t2 = xs.mark_sharding(t1, mesh, (1, 0))  # returns an XLAShardedTensor
print("mark_sharding returned", type(t2).__name__)
t3 = lin(t2)
print("lin output type", type(t3).__name__)
try:
    print(repr(t3)[:120])
    print("no error")
except AttributeError as e:
    print("raised: AttributeError", e)
