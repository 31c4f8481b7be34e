# What the user saw: with one device (xr.world_size() == 1), xm.all_reduce(..., scale=s) returns
# the input unscaled, so a running-average loss computed with scale=1/((idx+1)*world_size) is wrong.
# https://github.com/pytorch/xla/issues/9670
import sys

import torch
import torch_xla
import torch_xla.core.xla_model as xm

print("torch_xla", torch_xla.__version__)
dev = xm.xla_device()
loss_accum = torch.tensor([6.0], device=dev)
res = xm.all_reduce(xm.REDUCE_SUM, loss_accum, scale=1.0 / 3)
got = res.cpu().item()
print("single tensor:", got, "(expected 2.0)")
lst = [torch.tensor([6.0], device=dev)]
xm.all_reduce(xm.REDUCE_SUM, lst, scale=0.5)
got2 = lst[0].cpu().item()
print("list in place:", got2, "(expected 3.0)")
sys.exit(1 if (abs(got - 2.0) > 1e-6 or abs(got2 - 3.0) > 1e-6) else 0)
