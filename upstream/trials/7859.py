# User saw: with XLA_DISABLE_FUNCTIONALIZATION=1, x[1].unsqueeze(0) (and x[1, None]) of an XLA
# tensor returned x[0]'s value instead of x[1]'s (the slice offset was lost); chunk and x[1:2]
# were right. Views are all taken before anything is materialised, as in the report.
# https://github.com/pytorch/xla/issues/7859
import os

os.environ["XLA_DISABLE_FUNCTIONALIZATION"] = "1"
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
x = torch.randn(size=[2], device=device)
a1, b1 = x.chunk(2)
a2, b2 = x[0:1], x[1:2]
a3, b3 = x[0].unsqueeze(0), x[1].unsqueeze(0)
a4, b4 = x[0, None], x[1, None]
xs = x.cpu().tolist()
print("x", xs)
bad = []
for name, (a, b) in {"chunk": (a1, b1), "slice": (a2, b2), "select+unsqueeze": (a3, b3),
                     "index None": (a4, b4)}.items():
    av, bv = a.squeeze().cpu().item(), b.squeeze().cpu().item()
    ok = av == xs[0] and bv == xs[1]
    print(name, av, bv, "OK" if ok else "Not OK")
    if not ok:
        bad.append(name)
if bad:
    print("WRONG:", bad)
    raise SystemExit(1)
print("all correct")
