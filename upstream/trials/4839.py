# User saw: "pt-xla-profiler: Op(s) not lowered: aten::multinomial".
# https://github.com/pytorch/xla/issues/4839
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
device = xm.xla_device()
p = torch.rand(4, 10, device=device)
s1 = torch.multinomial(p, 3, replacement=True)
xm.mark_step(); print(s1.cpu().shape)
print("with replacement, aten::multinomial fallback count:", met.counter_value('aten::multinomial'))
s2 = torch.multinomial(p, 3, replacement=False)   # the thread notes this path is left on CPU on purpose (#4865)
xm.mark_step(); print(s2.cpu().shape)
print("after a no-replacement call, fallback count:", met.counter_value('aten::multinomial'))
