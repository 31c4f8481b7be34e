# What the user saw: adding tensors on two XLA devices (xla:1 + xla:2) raised a RuntimeError, and a
# later SPMD computation then crashed in PjRtComputationClient::ExecuteReplicated.
# https://github.com/pytorch/xla/issues/8973
import torch
import torch_xla

a = torch.tensor([1.0], device="xla:1")
b = torch.tensor([1.0], device="xla:2")
print(a.device, b.device)
try:
    print("a + b:", (a + b).cpu())
except RuntimeError as e:
    print("a + b raised RuntimeError:", str(e).splitlines()[0])
try:
    print("a + b.cpu():", (a + b.cpu()).cpu())
except RuntimeError as e:
    print("a + b.cpu() raised RuntimeError:", str(e).splitlines()[0])

import torch_xla.runtime as xr

xr.use_spmd()
c = torch.tensor([1.0], device="xla")
print("c + c:", (c + c).cpu())
print("OK no crash")
