# User saw: with XLA_EXPERIMENTAL="nonzero:masked_select" (lowered, dynamic-shape nonzero),
# torch.nonzero([[1,0,0,5,0,6]]) returned garbage rows such as [[3,-2],[2,-2],[-2,-2]]
# instead of [[0,0],[0,3],[0,5]] (nightly of 2023-01-04, TPU VM).
# https://github.com/pytorch/xla/issues/4432
import os

os.environ["XLA_EXPERIMENTAL"] = "nonzero:masked_select"
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
a = torch.tensor([[1, 0, 0, 5, 0, 6]])
want = torch.nonzero(a)
try:
    got = torch.nonzero(a.to(device)).cpu()
except Exception as e:  # noqa: BLE001
    print("ERROR:", type(e).__name__, str(e).splitlines()[0][:300])
    raise SystemExit(2)
print("xla:", got.tolist(), "cpu:", want.tolist())
if got.shape != want.shape or not torch.equal(got.long(), want):
    print("WRONG nonzero result")
    raise SystemExit(1)
print("correct")
