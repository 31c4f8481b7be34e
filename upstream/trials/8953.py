# Issue 8953: torch.linalg.lstsq on batched XLA tensors, with backward, failed at execution with
# "INVALID_ARGUMENT: Executable expected shape f32[3]{0} for argument 0 but got incompatible shape f32[8,3]{1,0}".
# https://github.com/pytorch/xla/issues/8953
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
try:
    A = torch.randn(8, 251, 3, device=device, requires_grad=True)
    s = torch.randn(8, 251, 1, device=device, requires_grad=True)
    B = torch.randn(8, 251, 1, device=device, requires_grad=True)
    offset = torch.randn(8, 3, 1, device=device, requires_grad=True)
    sol = torch.linalg.lstsq(A * s, B * s).solution
    loss = torch.mean(sol - offset)
    loss.backward()
    xm.mark_step()
    print("loss:", loss.cpu(), "grad A sum:", A.grad.cpu().sum())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:600])
