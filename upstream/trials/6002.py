# Issue 6002: training crashed with "INVALID_ARGUMENT: Transpose dimensions [0,1,-2,-1] are not a permutation of
# the operand dimensions (operand shape is f32[9,9])" from BuildDiagonalViewUpdate.  The thread has no code; this
# triggers the same lowering with an in-place update of a diagonal view taken with negative dims.
# https://github.com/pytorch/xla/issues/6002
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
x = torch.randn(9, 9, device=device)
try:
    torch.diagonal(x, 0, -2, -1).add_(1.0)
    xm.mark_step()
    print("ok, sum:", x.cpu().sum().item())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
