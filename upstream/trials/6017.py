# Issue 6017: torch.linalg.eigh on an XLA tensor was reported by the profiler as
# "Op(s) not lowered: aten::_linalg_eigh" (it falls back to CPU).  https://github.com/pytorch/xla/issues/6017
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

device = xm.xla_device()
a = torch.randn(5, 5)
a = (a + a.T).to(device)
w, v = torch.linalg.eigh(a)
xm.mark_step()
print("eigenvalues:", w.cpu())
print("CPU fallback counters:", [c for c in met.counter_names() if c.startswith("aten::")] or "none")
