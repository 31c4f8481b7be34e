# User saw: a while_loop body (torch._higher_order_ops.while_loop with torch_xla's lowering) that
# references a tensor captured from outside the loop crashes while lowering with
# "INVALID_ARGUMENT: The parameter of condition and body, the result of the body, and init must all
# have the same shape". https://github.com/pytorch/xla/issues/7839
# (The thread multiplies by the captured tensor; on 2.5.1/2.9.0 that version loops forever instead of
# failing, so this script adds it, which keeps the loop finite and shows whether it is honoured.)
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
try:
    import torch_xla.experimental.fori_loop  # registers the XLA while_loop lowering
    from torch._higher_order_ops.while_loop import while_loop
except ImportError as e:
    print("untestable: while_loop not available:", e)
    raise SystemExit

captured = torch.tensor([2], dtype=torch.int32, device=device)

def cond_fn(i, limit):
    return limit[0] >= i[0]

def body_fn(i, limit):
    step = torch.ones(1, dtype=torch.int32, device=device)
    return (torch.add(i, step) + captured, limit.clone())

i0 = torch.tensor([0], dtype=torch.int32, device=device)
lim = torch.tensor([10], dtype=torch.int32, device=device)
try:
    r, _ = while_loop(cond_fn, body_fn, (i0, lim))
    print("result:", r.cpu(), "(expected tensor([12]) if the captured tensor is honoured)")
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:400])
