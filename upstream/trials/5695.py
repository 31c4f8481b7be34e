# User saw: training with nn.PReLU reports "pt-xla-profiler: Op(s) not lowered: aten::_prelu_kernel_backward"
# (Counter aten::_prelu_kernel_backward grows every step).
# https://github.com/pytorch/xla/issues/5695
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
device = xm.xla_device()
m = torch.nn.PReLU(4).to(device)
x = torch.randn(2, 4, 5, 5, device=device, requires_grad=True)
m(x).sum().backward()
xm.mark_step()
print(x.grad.cpu().shape, m.weight.grad.cpu().shape)
fallbacks = [c for c in met.counter_names() if c.startswith('aten::')]
print("CPU fallback counters:", fallbacks)
print("_prelu_kernel_backward falls back:", 'aten::_prelu_kernel_backward' in fallbacks)
