# User saw: torch.inverse on a non-square (2x3) XLA tensor traces fine and only fails at
# materialisation with "Error while lowering: aten::inverse ... The two minor dimensions of 'a'
# must have equal size". https://github.com/pytorch/xla/issues/9707
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
m = torch.randn(2, 3, device=device)
try:
    r = torch.inverse(m)
    print("trace step: no error")
except Exception as e:
    print("trace step raised:", type(e).__name__, str(e)[:300])
    raise SystemExit
try:
    r.cpu()
    print("materialise: no error")
except Exception as e:
    print("materialise raised:", type(e).__name__, str(e)[:400])
