# A user ran diffusers' UNet under torch.compile(backend='openxla') and got "indices should be
# either on cpu or on the same device as the indexed tensor (XLA)" while executing
# aten._unsafe_index from the nearest-upsample decomposition.
# https://github.com/pytorch/xla/issues/5819
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()


def fn(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest") + 1


x = torch.randn(1, 2, 4, 4)
expected = fn(x)
try:
    out = torch.compile(fn, backend="openxla")(x.to(device))
    print("result ok:", torch.allclose(out.cpu(), expected))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
