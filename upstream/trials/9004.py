# User saw (PJRT_DEVICE=CPU): x = torch.rand(5, device="xla"); x.cpu() aborts with
# "concurrent_vector.h:70] Check failed: index < state.size (65534 vs. 10)".
# https://github.com/pytorch/xla/issues/9004
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
x = torch.rand(5, device=device)
print(x.cpu())
print(x)
print("no crash")
