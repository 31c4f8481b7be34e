# A user compiled GPT-2 with torch.compile(backend='openxla') and got
# "Input tensor is not an XLA tensor: CPUFloatType": a constant created on the CPU inside the
# graph (torch.full(..., device='cpu')) then moved to the XLA device is partitioned as a fallback
# op and the partition returns a CPU tensor.  https://github.com/pytorch/xla/issues/6288
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()


def fn(x):
    m = torch.full((), -3.4e38, dtype=torch.float32, device="cpu")
    m = m.to(x.device)
    return torch.maximum(x, m) * 2


x = torch.randn(4, 4, device=device)
expected = fn(x.cpu())
try:
    out = torch.compile(fn, backend="openxla")(x)
    ok = torch.allclose(out.cpu(), expected)
    print("result ok:", ok)
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
