# The user saw torch.bfloat16 inputs come out of conv layers as torch.float32 on a TPU v3-8 and
# asked how to keep bfloat16; the thread gives no reproducer, only a maintainer's check that
# F.conv2d on bfloat16 inputs returns bfloat16. https://github.com/pytorch/xla/issues/8454
import torch
import torch.nn.functional as F
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

device = xm.xla_device()
filters = torch.randn(8, 4, 3, 3, dtype=torch.bfloat16, device=device)
inputs = torch.randn(1, 4, 5, 5, dtype=torch.bfloat16, device=device)
r = F.conv2d(inputs, filters, padding=1)
conv = torch.nn.Conv2d(4, 8, 3, padding=1).to(device).to(torch.bfloat16)
r2 = conv(inputs)
print("F.conv2d:", r.dtype, "nn.Conv2d:", r2.dtype, r2.cpu().float().sum().item())
if torch.float32 in (r.dtype, r2.dtype):
    print("BUG: float32 output")
    raise SystemExit(1)
print("OK")
