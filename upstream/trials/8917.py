# Trial for https://github.com/pytorch/xla/issues/8917
# The user saw an in-place add on a slice of an expand()-ed tensor give wrong values on the
# XLA device (TPU, torch_xla 2.6.0); PyTorch on CPU refuses the same write ("more than one
# element of the written-to tensor refers to a single memory location").
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
bs, n, k = 4, 16, 6

idx = torch.arange(n, device=device).expand(bs, -1)
try:
    idx[:, -k:] += k
    xm.mark_step()
    got = idx.cpu()
except RuntimeError as e:
    print("raised:", str(e).splitlines()[0])
    raise SystemExit(0)

one = torch.arange(n, device=device)
one[-k:] += k
ref = one.cpu()
print("expanded rows:", got.tolist())
print("1-D result   :", ref.tolist())
if all(torch.equal(row, ref) for row in got):
    print("NOT REPRODUCED: every row matches the 1-D result")
else:
    print("REPRODUCED: in-place add on a slice of an expanded tensor gives different values")
