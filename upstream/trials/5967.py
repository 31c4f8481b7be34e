# User saw: torchbench generate models under dynamo + openxla failed with "Check failed: cachedComputation"
# because the compiled graph had been evicted from torch_xla's in-memory compilation cache (the fix was
# to enlarge the cache). This shrinks the cache to one entry, then runs other graphs so the dynamo graph
# is evicted before it is called again. https://github.com/pytorch/xla/issues/5967
import os
os.environ["XLA_COMPILATION_CACHE_SIZE"] = "1"
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()

def f(x):
    return torch.sin(x) * 2 + 1

cf = torch.compile(f, backend="openxla")
x = torch.randn(8, device=device)
print("first call:", cf(x).cpu()[:2])
# different eager graphs fill (and evict from) the one-entry cache
for i in range(3):
    y = torch.randn(4 + i, device=device) * (i + 3)
    xm.mark_step()
    y.cpu()
try:
    print("second call:", cf(x).cpu()[:2], "no error")
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:300])
