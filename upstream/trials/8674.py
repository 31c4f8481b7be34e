# Trial for https://github.com/pytorch/xla/issues/8674
# The user saw torch.nan_to_num(x, nan=-inf, posinf=inf, neginf=-inf) on an XLA tensor fail with
# "Check failed: min_max.min.toDouble() <= replacement.toDouble() && replacement.toDouble() <= min_max.max.toDouble()",
# while PyTorch on the CPU accepts infinite replacement values.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
inf = float("inf")
x = torch.tensor([float("nan"), inf, -inf, 1.0])
ref = torch.nan_to_num(x, nan=-inf, posinf=inf, neginf=-inf)
try:
    got = torch.nan_to_num(x.to(device), nan=-inf, posinf=inf, neginf=-inf).cpu()
except RuntimeError as e:
    line = [ln for ln in str(e).splitlines() if "Check failed" in ln or ln.strip()][:1]
    print("XLA raised:", line)
    print("REPRODUCED" if "Check failed" in str(e) else "NOT REPRODUCED (other error)")
    raise SystemExit(0)
print("CPU:", ref.tolist(), "XLA:", got.tolist())
print("NOT REPRODUCED" if torch.equal(ref, got) else "NOT REPRODUCED: no error but values differ")
