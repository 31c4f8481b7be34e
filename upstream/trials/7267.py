# User saw: F.interpolate(mode="bicubic") on an XLA tensor fails when the result is
# materialised, with an error that ResizeBicubic is not supported (reported on XLA:GPU).
# https://github.com/pytorch/xla/issues/7267
import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

device = xm.xla_device()
x = torch.arange(1, 5, dtype=torch.float32).view(1, 1, 2, 2)
ref = F.interpolate(x, scale_factor=2, mode="bicubic")
try:
    out = F.interpolate(x.to(device), scale_factor=2, mode="bicubic").cpu()
except Exception as e:  # noqa: BLE001
    print("ERROR:", type(e).__name__, str(e).splitlines()[0][:300])
    raise SystemExit(1)
print("shape", tuple(out.shape), "max abs diff vs CPU", (out - ref).abs().max().item())
