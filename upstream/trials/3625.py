# User saw: the DistributedDataParallel constructor never returned with the `xla` process-group
# backend (CPU or TPU, June 2022).
# https://github.com/pytorch/xla/issues/3625
# Trial: one process, world size 1: init the xla backend, wrap a Linear in DDP, run one step.
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("xla", rank=0, world_size=1)
device = xm.xla_device()
model = torch.nn.Linear(4, 2).to(device)
ddp = DDP(model, gradient_as_bucket_view=True)
ddp(torch.randn(3, 4, device=device)).sum().backward()
xm.mark_step()
print("DDP step done, grad shape", tuple(model.weight.grad.cpu().shape))
