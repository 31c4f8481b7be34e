# What was reported: input sharding with minibatch=True only works for 1-D (batch-only) sharding; with a
# 2-D (fsdp, tensor) mesh and the input sharded on fsdp and replicated over tensor, the minibatch path fails
# (a check in init_python_bindings.cpp), and training that got past it gave NaN loss.
# https://github.com/pytorch/xla/issues/8696
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs

xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n // 2, 2), ("fsdp", "tensor"))
batch = torch.arange(8 * 4, dtype=torch.float32).reshape(8, 4)  # this host's whole batch (1 host)
spec = xs.ShardingSpec(mesh, ("fsdp", None), minibatch=True)
try:
    t = xm.send_cpu_data_to_device([batch], xm.xla_device(), spec)[0]
    print("sharding:", torch_xla._XLAC._get_xla_sharding_spec(t))
    print("equal to the host batch:", torch.equal(t.cpu(), batch))
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
