# Trial for https://github.com/pytorch/xla/issues/8754
# The user saw upsample_bilinear2d_backward fall back to the CPU (aten::upsample_bilinear2d_backward counter,
# executed_fallback_ops) on XLA:CUDA, while the forward is lowered. Here the same is checked on the XLA CPU device.
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = xm.xla_device()
x = torch.randn(1, 2, 4, 4, device=device, requires_grad=True)
y = torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
y.sum().backward()
xm.mark_step()
x.grad.cpu()
names = [n for n in met.counter_names() if n.startswith("aten::")]
print("aten:: fallback counters:", names)
if "aten::upsample_bilinear2d_backward" in names:
    print("REPRODUCED: upsample_bilinear2d_backward falls back to the CPU")
else:
    print("NOT REPRODUCED: the backward is lowered")
