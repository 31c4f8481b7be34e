# User saw: the metrics report after training listed aten::_linalg_svd, aten::_unique2 and
# aten::bincount counters, i.e. these ops have no XLA lowering and fall back to the CPU.
# https://github.com/pytorch/xla/issues/4511
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
device = xm.xla_device()
a = torch.randn(6, 4, device=device)
u, s, vh = torch.linalg.svd(a, full_matrices=False)
s.cpu()
v = torch.tensor([3, 1, 3, 2, 1, 3], device=device)
torch.unique(v).cpu()
torch.bincount(v).cpu()
names = met.counter_names()
for op in ["aten::_linalg_svd", "aten::_unique2", "aten::bincount"]:
    print(op, "CPU fallback counter:", met.counter_value(op) if op in names else None)
