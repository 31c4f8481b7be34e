# User saw: scan_layers over layers that hold no parameters raises
# "ValueError: `xs` ({}, {}) is an empty PyTree." from torch_xla/experimental/scan.py.
# https://github.com/pytorch/xla/issues/8753
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
try:
    from torch_xla.experimental.scan_layers import scan_layers
except ImportError as e:
    print("UNTESTABLE: no scan_layers:", e); raise SystemExit(0)

class NoWeights(torch.nn.Module):
    def forward(self, x):
        return torch.sin(x) * 2
layers = torch.nn.ModuleList([NoWeights() for _ in range(3)]).to(device)
x = torch.randn(4, 4, device=device)
try:
    out = scan_layers(layers, x)
    xm.mark_step()
    print("ok", out.cpu().shape)
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:300])
