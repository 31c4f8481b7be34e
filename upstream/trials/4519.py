# Trial for https://github.com/pytorch/xla/issues/4519
# The user saw a complex64 XLA tensor divided by the Python int 1 come back as float32 with the imaginary
# part dropped (tensor(12.0116) instead of tensor(12.0116+0.5259j)) on TPU with torch_xla 1.12/1.13.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
t = torch.tensor(12.0116 + 0.5259j)
ref = t / 1
try:
    got = (t.to(device) / 1).cpu()
except RuntimeError as e:
    print("XLA raised:", str(e).splitlines()[0][:200])
    raise SystemExit(0)
print("CPU:", ref, ref.dtype, " XLA:", got, got.dtype)
if got.dtype != ref.dtype or not torch.allclose(got, ref):
    print("REPRODUCED: complex / int loses the complex dtype or value")
else:
    print("NOT REPRODUCED")
