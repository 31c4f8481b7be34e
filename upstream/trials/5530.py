# User saw: torch.einsum inside a torch.compile(backend="openxla") function on XLA tensors fails during
# dynamo fake-tensor tracing: "torch._dynamo.exc.TorchRuntimeError: Failed running call_function
# <function einsum ...>" ... "Check failed: xtensor".
# https://github.com/pytorch/xla/issues/5530
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()

def f(a, b):
    return torch.einsum('ij,jk->ik', a, b)

a = torch.randn(4, 5, device=device)
b = torch.randn(5, 3, device=device)
try:
    out = torch.compile(f, backend="openxla")(a, b)
    xm.mark_step()
    print("ok, matches eager:", torch.allclose(out.cpu(), a.cpu() @ b.cpu(), atol=1e-5))
except Exception as e:
    lines = str(e).splitlines()
    print(type(e).__name__ + ":", lines[0][:200])
    print([l for l in lines if 'xtensor' in l][:1])
