# User saw (XLA_EXPERIMENTAL=nonzero): iterating over the dynamic-shaped result of torch.nonzero
# (Tensor.__iter__ -> unbind) raises "RuntimeError: Cannot call sizes() on tensor with symbolic sizes/strides".
# https://github.com/pytorch/xla/issues/4749
import os
os.environ.setdefault("XLA_EXPERIMENTAL", "nonzero")
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
torch.manual_seed(0)
x = torch.randint(0, 2, size=(10, 10)).to(device)
y = torch.nonzero(x)
try:
    rows = [r for r in y]
    xm.mark_step()
    print("iterated", len(rows), "rows; expected", int((x.cpu() != 0).sum()))
except Exception as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0][:200])
