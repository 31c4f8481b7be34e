# Feature request: torch.Generator is not supported on PyTorch/XLA; vLLM's per-request sampling builds
# torch.Generator(device=<xla device>) and hits "RuntimeError: XLA device type not an accelerator."
# https://github.com/pytorch/xla/issues/9159
# This trial builds a generator on the XLA device and draws from it.
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
try:
    g = torch.Generator(device=device)
    g.manual_seed(0)
    t = torch.rand(4, device=device, generator=g)
    print("generator works:", t.cpu())
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0])
    raise SystemExit(1)
