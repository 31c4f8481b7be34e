# User saw: torch_xla.experimental.fori_loop.while_loop with carried (x, y, A, B), where the condition
# uses only A, fails with "INVALID_ARGUMENT: The parameter of condition and body, the result of the body,
# and init must all have the same shape".
# https://github.com/pytorch/xla/issues/8566
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
try:
    from torch_xla.experimental.fori_loop import while_loop
except ImportError as e:
    print("UNTESTABLE: no while_loop:", e); raise SystemExit(0)

def cond(x, y, A, B):
    return torch.all(A < 0)
def body(x, y, A, B):
    return x, y, A - B, B
x = torch.tensor(10, device=device)
y = torch.tensor(1, device=device)
A = torch.tensor([10], device=device)
B = torch.tensor([25], device=device)
try:
    res = while_loop(cond, body, (x, y, A, B))
    xm.mark_step()
    print("result:", [r.cpu() for r in res])
except Exception as e:
    msg = str(e)
    print(type(e).__name__ + ":", msg[:400])
