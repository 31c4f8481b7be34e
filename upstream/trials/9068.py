# What the user saw: dist.all_to_all_single compiled with torch.compile(backend="openxla") fails
# with "torch_xla does not support arbitrary split sizes for all_to_all" as soon as each split
# holds more than one row, although all splits are equal.
# https://github.com/pytorch/xla/issues/9068
# Here: a one-process "xla" process group (world size 1) and an input of 2 rows, so the single
# split has size 2; the right answer is the input itself.
import sys

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend

print("torch_xla", torch_xla.__version__, "torch", torch.__version__)
dist.init_process_group("xla", init_method="xla://")
dev = xm.xla_device()
world = dist.get_world_size()
inp = torch.arange(2 * world, dtype=torch.float32, device=dev)
out = torch.zeros_like(inp)


def fn(o, i):
    dist.all_to_all_single(o, i)
    return o


try:
    res = torch.compile(fn, backend="openxla")(out, inp)
    xm.mark_step()
    print("result", res.cpu().tolist())
except Exception as e:  # print what the release raises
    msg = str(e)
    print("ERROR:", type(e).__name__, msg[:600])
    sys.exit(1 if "arbitrary split sizes" in msg else 2)
print("OK")
