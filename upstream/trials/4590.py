# User saw (XLA_EXPERIMENTAL=nonzero:masked_select): torch.nonzero, then xm.mark_step(), then
# torch.empty(a2.shape) aborts with "Check failed: gpu_src.size() == 0 || host_size >= gpu_src.size()" (SIGABRT).
# https://github.com/pytorch/xla/issues/4590
import os
os.environ.setdefault("XLA_EXPERIMENTAL", "nonzero:masked_select")
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
a1 = torch.tensor([[1, 0, 0, 5, 0, 6]], device=device)
a2 = torch.nonzero(a1)
xm.mark_step()
try:
    a3 = torch.empty(a2.shape, dtype=torch.int32, device=device)
    print("a3.shape[0] =", a3.shape[0], "(expected 3)")
except Exception as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0][:200])
