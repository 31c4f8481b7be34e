# User saw (CI, GPU): test_syncfree_optimizers.py failed, the losses of the syncfree SGD and Adam
# optimizers did not match torch.optim's (January 2022).
# https://github.com/pytorch/xla/issues/3322
# Trial: ten steps of the same model with torch.optim and with torch_xla.amp.syncfree
# (found_inf=0) on the XLA CPU device; prints the largest parameter difference per optimizer.
import copy

import torch
import torch_xla.core.xla_model as xm
from torch_xla.amp import syncfree

device = xm.xla_device()
torch.manual_seed(0)
base = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
X, Y = torch.randn(32, 8), torch.randn(32, 4)


def train(opt_cls, kw, syncfree_step):
    m = copy.deepcopy(base).to(device)
    opt = opt_cls(m.parameters(), **kw)
    x, y = X.to(device), Y.to(device)
    for _ in range(10):
        opt.zero_grad()
        torch.nn.functional.mse_loss(m(x), y).backward()
        if syncfree_step:
            opt.step(found_inf=torch.tensor(0.0, device=device))
        else:
            opt.step()
        xm.mark_step()
    return [p.detach().cpu() for p in m.parameters()]


cases = [
    ("SGD", torch.optim.SGD, syncfree.SGD, dict(lr=0.1, momentum=0.5)),
    ("Adam", torch.optim.Adam, syncfree.Adam, dict(lr=0.01, betas=(0.9, 0.99))),
    ("AdamW", torch.optim.AdamW, syncfree.AdamW, dict(lr=0.01, weight_decay=0.1)),
]
for name, ref, sf, kw in cases:
    a, b = train(ref, kw, False), train(sf, kw, True)
    print(name, "max parameter difference", max((p - q).abs().max().item() for p, q in zip(a, b)))
