# What the user saw: mark_sharding of an [8, 64] tensor over a 4-D mesh with spec ('dp', 'sp') works,
# but xm.send_cpu_data_to_device with the same xs.ShardingSpec fails.
# https://github.com/pytorch/xla/issues/8012
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
n = xr.global_runtime_device_count()  # 4 with CPU_NUM_DEVICES=4
mesh = xs.Mesh(np.arange(n), (1, 1, 2, 2), ("dp", "fsdp", "tp", "sp"))
dev = xm.xla_device()
xt = torch.zeros([8, 64]).to(dev)
xs.mark_sharding(xt, mesh, ("dp", "sp"))
print("mark_sharding:", torch_xla._XLAC._get_xla_sharding_spec(xt))
yt = xm.send_cpu_data_to_device(torch.zeros([8, 64]), dev, xs.ShardingSpec(mesh, ("dp", "sp")))[0]
print("send_cpu_data_to_device:", torch_xla._XLAC._get_xla_sharding_spec(yt), yt.cpu().sum().item())
print("OK no error")
