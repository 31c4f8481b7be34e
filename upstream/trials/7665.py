# User saw: torch while_loop (XLA lowering from torch_xla.experimental.fori_loop) whose body reads an outside
# tensor (z + self.quantity) fails with "INVALID_ARGUMENT: The parameter of condition and body, the result of
# the body, and init must all have the same shape"; other body ops work.
# https://github.com/pytorch/xla/issues/7665  (the call line was cut in the excerpt; completed with the 4 carried values)
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
try:
    import torch_xla.experimental.fori_loop
    from torch._higher_order_ops.while_loop import while_loop
except ImportError as e:
    print("UNTESTABLE:", e); raise SystemExit(0)

quantity = torch.tensor(0, device=device)          # tensor captured from outside the body
def cond_fn(i, x, y, z):
    return i > 0
def body_fn(i, x, y, z):
    return i - 1, x.clone(), y.add(1), z + quantity
init = (torch.tensor(10, device=device), torch.tensor([1], device=device),
        torch.tensor([1], device=device), torch.tensor([1], device=device))
try:
    res = while_loop(cond_fn, body_fn, init)
    xm.mark_step()
    print("result:", [r.cpu().tolist() for r in res])
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:300])
