# With XLA_USE_FP16 (or XLA_USE_BF16) set, the user passed a float16 (bfloat16) tensor through
# torch.nn.ReLU on XLA and got a float32 tensor back. https://github.com/pytorch/xla/issues/6403
import os
import sys

flag, dtype_name = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("XLA_USE_BF16", "bfloat16")
os.environ[flag] = "1"
import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

dtype = getattr(torch, dtype_name)
device = xm.xla_device()
m = torch.nn.ReLU().to(device).to(dtype)
inp = torch.randn(3, device=device, dtype=dtype)
out = m(inp)
print(flag, "input", inp.dtype, "output", out.dtype, "sum", out.cpu().sum().item())
out2 = inp + inp
print("input + input:", out2.dtype)
if out.dtype != dtype:
    print("BUG: output upcast")
    raise SystemExit(1)
print("OK")
