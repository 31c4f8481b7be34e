# User saw: writing one element of an expanded view (y = x.expand(2, 6); y[0, 0] = 5) on an XLA
# tensor gave [5, 2, 4, 6, 8, 10] rows (every other element doubled) instead of eager's
# [5, 1, 2, 3, 4, 5] rows.
# https://github.com/pytorch/xla/issues/5839
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()


def run(dev):
    x = torch.arange(6, device=dev)
    y = x.expand(2, *x.shape)
    y[0, 0] = 5
    return y.cpu()


try:
    cpu = run("cpu")
    xla = run(device)
except Exception as e:  # noqa: BLE001
    print("ERROR:", type(e).__name__, str(e).splitlines()[0][:300])
    raise SystemExit(2)
print("cpu:", cpu.tolist())
print("xla:", xla.tolist())
if not torch.equal(cpu, xla):
    print("MISMATCH")
    raise SystemExit(1)
print("same")
