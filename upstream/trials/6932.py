# Issue 6932: nn.Upsample on 5-D input (aten::upsample_nearest3d and its backward) is not lowered, so the
# profiler reports "Op(s) not lowered: aten::upsample_nearest3d, aten::upsample_nearest3d_backward" (CPU fallback).
# https://github.com/pytorch/xla/issues/6932
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = xm.xla_device()
x = torch.randn(1, 2, 4, 4, 4, device=device, requires_grad=True)
y = torch.nn.Upsample(scale_factor=2, mode="nearest")(x)
y.sum().backward()
xm.mark_step()
print("out:", tuple(y.cpu().shape), "grad:", tuple(x.grad.cpu().shape))
fallbacks = [c for c in met.counter_names() if c.startswith("aten::")]
print("CPU fallback counters:", fallbacks or "none")
