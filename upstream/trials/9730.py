# User saw: after mark_sharding (which imports torchax, registering "jax" as the privateuse1
# accelerator), torch.compile(backend='inductor') of a function with no tensor inputs fails with
# "RuntimeError: PyTorch is not linked with support for jax devices".
# https://github.com/pytorch/xla/issues/9730
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
device = xm.xla_device()
xr.use_spmd()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(list(range(n)), (n,), ('data',))
t = torch.randn(4, 4).to(device)
xs.mark_sharding(t, mesh, (0, None))
print("accelerator available:", torch.accelerator.is_available() if hasattr(torch, "accelerator") else "n/a")

@torch.compile(backend='inductor')
def no_inputs():
    return torch.arange(8) * 2

try:
    print(no_inputs())
    print("no error")
except Exception as e:
    print("raised:", type(e).__name__, str(e)[-300:])
