# Trial for https://github.com/pytorch/xla/issues/8897
# The reporter saw nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False) on a 3x3 arange give
# different values on the XLA device (0.625, 1.375, ...) than PyTorch on the CPU (0.5, 1.1667, ...).
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
a = torch.arange(9, dtype=torch.float32).view(1, 1, 3, 3)
up = torch.nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False)
ref = up(a)
got = up(a.to(device)).cpu()
print("CPU row 0:", [round(v, 4) for v in ref[0, 0, 0].tolist()])
print("XLA row 0:", [round(v, 4) for v in got[0, 0, 0].tolist()])
if torch.allclose(ref, got, atol=1e-4):
    print("NOT REPRODUCED: XLA matches PyTorch")
else:
    print("REPRODUCED: bilinear upsample with align_corners=False differs from PyTorch")
