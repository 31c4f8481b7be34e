# User saw: profiler warning "Op(s) not lowered: aten::glu_backward" when training through F.glu.
# https://github.com/pytorch/xla/issues/9359
import torch, torch_xla
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
device = xm.xla_device()
x = torch.randn(2, 8, 5, 5, device=device, requires_grad=True)
y = F.glu(x, dim=1)
y.sum().backward()
xm.mark_step()
print(x.grad.cpu().shape)
fallbacks = [c for c in met.counter_names() if c.startswith('aten::')]
print("CPU fallback counters:", fallbacks)
print("glu_backward falls back:", 'aten::glu_backward' in fallbacks)
