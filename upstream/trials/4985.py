# User saw (SO-VITS audio model on TPU): "Op(s) not lowered: aten::_weight_norm_interface, aten::nonzero,
# aten::reflection_pad1d, aten::upsample_nearest1d" with large CPU-fallback counters.
# https://github.com/pytorch/xla/issues/4985
import torch, torch_xla
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
device = xm.xla_device()
conv = torch.nn.utils.weight_norm(torch.nn.Conv1d(4, 4, 3)).to(device)   # uses _weight_norm_interface
x = torch.randn(2, 4, 16, device=device, requires_grad=True)
y = F.pad(x, (2, 2), mode="reflect")                                       # reflection_pad1d
y = conv(y)
y = F.interpolate(y, scale_factor=2, mode="nearest")                      # upsample_nearest1d
y.sum().backward()
nz = torch.nonzero(x.detach() > 0)
xm.mark_step()
print(nz.cpu().shape[1], x.grad.cpu().shape)
fallbacks = sorted(c for c in met.counter_names() if c.startswith('aten::'))
print("CPU fallback counters:", fallbacks)
for op in ["_weight_norm_interface", "nonzero", "reflection_pad1d", "upsample_nearest1d"]:
    print(f"  aten::{op} falls back:", f"aten::{op}" in fallbacks)
