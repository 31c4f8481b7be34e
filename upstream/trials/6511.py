# The user entered torch_xla.amp.autocast(xla_device, dtype=bfloat16) inside a function compiled
# with torch.compile(backend="openxla"); Dynamo failed with an InternalTorchDynamoError while
# resuming after the autocast context. https://github.com/pytorch/xla/issues/6511
import traceback

import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm
from torch_xla.amp import autocast

device = xm.xla_device()


@torch.compile(backend="openxla")
def foo(x):
    with autocast(device, dtype=torch.bfloat16):
        y = torch.mm(x, x)
    return y


x = torch.rand(4, 4, device=device)
try:
    out = foo(x)
    print("dtype", out.dtype, out.cpu().sum().item())
except Exception as e:
    traceback.print_exc()
    print("BUG:", type(e).__name__, str(e).splitlines()[0][:300])
    raise SystemExit(1)
print("OK")
