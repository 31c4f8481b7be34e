# Issue 4501: the master-branch test TestDynamicShape.test_nonzero_cast failed: casting the dynamic-shaped
# result of nonzero (XLA_EXPERIMENTAL=nonzero) raised "SymIntArrayRef expected to contain only concrete integers".
# https://github.com/pytorch/xla/issues/4501
import os
os.environ.setdefault("XLA_EXPERIMENTAL", "nonzero:masked_select")
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
t1 = torch.ones(5, 2, device=device)
try:
    t2 = torch.nonzero(t1.int()).float()
    xm.mark_step()
    print("ok:", tuple(t2.cpu().shape))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
