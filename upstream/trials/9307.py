# What the user saw: the DDP example (a model wrapped in torch.nn.parallel.DistributedDataParallel
# on the "xla" process group, its training step wrapped in torch_xla.compile) runs step 0 and then
# fails; PT_XLA_DEBUG's "Unexpected Execution Analysis" points at DDP's _pre_forward.
# https://github.com/pytorch/xla/issues/9307
# Here: one process, a small Linear model, three compiled steps.
import os
import sys

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401

print("torch_xla", torch_xla.__version__, "torch", torch.__version__)
if not hasattr(torch_xla, "compile"):
    print("UNTESTABLE: no torch_xla.compile")
    sys.exit(125)
dist.init_process_group("xla", init_method="xla://")
dev = xm.xla_device()
torch.manual_seed(0)
model = torch.nn.Linear(8, 2).to(dev)
ddp = torch.nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=True)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
loss_fn = torch.nn.MSELoss()


def step(x, y):
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()
    return loss


cstep = torch_xla.compile(step, full_graph=True, name="ddp_step")
for i in range(3):
    x = torch.randn(4, 8).to(dev)
    y = torch.randn(4, 2).to(dev)
    try:
        loss = cstep(x, y)
        xm.add_step_closure(lambda l=loss, i=i: print(f"step {i} loss {l.item():.4f}"))
        torch_xla.sync()
    except Exception as e:
        print(f"ERROR at step {i}:", type(e).__name__, str(e)[:800])
        sys.exit(1)
print("OK")
