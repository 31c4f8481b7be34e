# Trial for https://github.com/pytorch/xla/issues/8811
# The user saw nn.Linear in float32 on the XLA device (a CUDA machine) disagree with the same layer on CUDA
# beyond rtol=1e-5, atol=1e-8. Here the XLA CPU device is compared with PyTorch on the CPU.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(42)
device = xm.xla_device()
x = torch.randn(32, 64)
lin = torch.nn.Linear(64, 128)
ref = lin(x)
out = lin.to(device)(x.to(device)).cpu()
diff = (out - ref).abs().max().item()
print("max abs diff:", diff)
if torch.allclose(out, ref, rtol=1e-5, atol=1e-8):
    print("NOT REPRODUCED: results agree within rtol=1e-5, atol=1e-8")
else:
    print("REPRODUCED: results differ beyond rtol=1e-5, atol=1e-8")
