# With XLA_USE_SPMD=1 the user's matmul under torch_xla.amp.autocast(device, dtype=torch.bfloat16)
# came out float32 instead of bfloat16 (XLA:GPU). On CPU torch_xla.amp.autocast cannot be entered
# (separate bug), so this tries it and then PyTorch's own torch.autocast("xla") under SPMD.
# https://github.com/pytorch/xla/issues/5497
import os

os.environ["XLA_USE_SPMD"] = "1"
import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

try:
    import torch_xla.runtime as xr

    xr.use_spmd()
except Exception as e:  # older releases only read the variable
    print("use_spmd:", e)

device = xm.xla_device()
t1 = torch.ones([2, 3], device=device)
t2 = torch.ones([3, 2], device=device)
try:
    from torch_xla.amp import autocast

    with autocast(device, dtype=torch.bfloat16):
        t3 = torch.matmul(t1, t2)
    print("torch_xla.amp.autocast dtype:", t3.dtype)
except AttributeError as e:
    print("torch_xla.amp.autocast unusable on CPU:", e)
with torch.autocast("xla", dtype=torch.bfloat16):
    t4 = torch.matmul(t1, t2)
print("torch.autocast('xla') dtype:", t4.dtype)
xm.mark_step()
if t4.dtype != torch.bfloat16:
    print("BUG: autocast ignored under SPMD")
    raise SystemExit(1)
print("OK")
