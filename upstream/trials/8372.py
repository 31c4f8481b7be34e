# User saw: a bf16 tensor divided by a Python float (math.sqrt(128)): XLA rounds the scalar to bf16 first, so results differ from
# PyTorch (CUDA in the report; CPU eager here), which computes in float32 with the full scalar.
# https://github.com/pytorch/xla/issues/8372
import math, torch, torch_xla, torch_xla.core.xla_model as xm
dev = xm.xla_device()
torch.manual_seed(0)
k = torch.randn(100, 100, dtype=torch.bfloat16)
s = math.sqrt(128)
ref = k / s
got = (k.to(dev) / s).cpu()
exact = (k.float() / s).to(torch.bfloat16)
diff = (ref.float() - got.float()).abs()
print("cpu eager == fp32-then-round:", torch.equal(ref, exact))
print("xla vs cpu eager: mismatched", int((diff > 0).sum()), "of", diff.numel(), "max abs diff", diff.max().item())
print("bf16(s) =", torch.tensor(s, dtype=torch.bfloat16).item(), "s =", s)
q = torch.randn(100, 100, dtype=torch.bfloat16)
a1 = torch.matmul(q, k.transpose(-1, -2) / s)
a2 = torch.matmul(q.to(dev), k.to(dev).transpose(-1, -2) / s).cpu()
print("allclose(rtol=1.6e-2, atol=1e-5):", torch.allclose(a1.float(), a2.float(), rtol=1.6e-2, atol=1e-5))
print(torch_xla._XLAC._get_xla_tensors_hlo([k.to(dev) / s]).split("ENTRY")[1][:600])
