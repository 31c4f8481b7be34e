# Trial for https://github.com/pytorch/xla/issues/8454
# The user saw a bfloat16 input come out of conv1/conv2 as torch.float32 on a TPU v3-8 (Kaggle).
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
w = torch.randn(8, 4, 3, 3, dtype=torch.bfloat16, device=device)
x = torch.randn(1, 4, 5, 5, dtype=torch.bfloat16, device=device)
y = F.conv2d(x, w, padding=1)
conv = torch.nn.Conv2d(4, 8, 3, padding=1).to(device).to(torch.bfloat16)
z = conv(x)
xm.mark_step()
print("F.conv2d:", y.dtype, "nn.Conv2d:", z.dtype)
if torch.float32 in (y.dtype, z.dtype):
    print("REPRODUCED: bfloat16 convolution returned float32")
else:
    print("NOT REPRODUCED: convolution keeps bfloat16")
