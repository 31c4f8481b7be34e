# Trial for https://github.com/pytorch/xla/issues/7095
# The reporter saw upsample_bilinear (align_corners=True, scale_factor=2) of a float16 tensor return
# torch.float32 on the XLA device while PyTorch returns torch.float16.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
a = torch.rand(1, 3, 10, 10, dtype=torch.half)
try:
    ref = torch.nn.functional.upsample_bilinear(a, scale_factor=2).dtype
except RuntimeError as e:
    ref = "CPU raised: " + str(e).splitlines()[0]
try:
    out = torch.nn.functional.upsample_bilinear(a.to(device), scale_factor=2)
    got = out.dtype
    out.cpu()
except RuntimeError as e:
    print("XLA raised:", str(e).splitlines()[0][:200])
    raise SystemExit(0)
print("CPU:", ref, " XLA:", got)
print("REPRODUCED: float16 in, float32 out" if got == torch.float32 else "NOT REPRODUCED")
