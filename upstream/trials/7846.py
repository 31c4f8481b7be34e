# What the user saw: with the batch input sharded {devices=[n,1]...}, printing
# torch_xla._XLAC._get_xla_sharding_spec() of the fc1/relu/fc2 outputs inside forward gave empty strings.
# https://github.com/pytorch/xla/issues/7846  (the reporter ran test/spmd/test_train_spmd_linear_model.py in Colab)
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

try:
    import torch_xla.distributed.spmd as xs
except ImportError:
    import torch_xla.experimental.xla_sharding as xs

xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1))
dev = xm.xla_device()
fc1 = torch.nn.Linear(16, 32).to(dev)
fc2 = torch.nn.Linear(32, 8).to(dev)
x = torch.randn(8 * n, 16).to(dev)
xs.mark_sharding(x, mesh, (0, 1))
h = fc1(x)
y = fc2(torch.relu(h))
print("x  :", repr(torch_xla._XLAC._get_xla_sharding_spec(x)))
print("fc1:", repr(torch_xla._XLAC._get_xla_sharding_spec(h)), "(before execution)")
xm.mark_step()
print("fc1:", repr(torch_xla._XLAC._get_xla_sharding_spec(h)), "(after mark_step)")
print("out:", repr(torch_xla._XLAC._get_xla_sharding_spec(y)), "(after mark_step)")
