# Trial for https://github.com/pytorch/xla/issues/7160
# The user saw torch.matmul(q.t(), k, out=c) with bfloat16 q, k and a float32 out buffer c compute the
# product in bfloat16 in the HLO on the XLA device, while c.dtype still reads float32.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
q = torch.rand((4, 8), dtype=torch.bfloat16)
k = torch.rand((4, 8), dtype=torch.bfloat16)
try:
    ref = torch.zeros((8, 8), dtype=torch.float32)
    torch.matmul(q.t(), k, out=ref)
    print("CPU: out= float32 accepted")
except RuntimeError as e:
    print("CPU raised:", str(e).splitlines()[0])
c = torch.zeros((8, 8), dtype=torch.float32).to(device)
try:
    torch.matmul(q.to(device).t(), k.to(device), out=c)
except RuntimeError as e:
    print("XLA raised:", str(e).splitlines()[0])
    raise SystemExit(0)
hlo = torch_xla._XLAC._get_xla_tensors_hlo([c])
dots = [ln.strip() for ln in hlo.splitlines() if " dot(" in ln]
print("c.dtype:", c.dtype)
print("dot:", dots[:1])
if c.dtype == torch.float32 and dots and dots[0].split("=")[1].strip().startswith("bf16"):
    print("REPRODUCED: out buffer says float32 but the dot is computed in bf16")
else:
    print("NOT REPRODUCED")
