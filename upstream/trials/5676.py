# Reported: with torch.compile and compiled_autograd, backward crashes when the leaf tensors were
# created on the CPU and then moved to the XLA device (their .grad lives on the CPU).
# https://github.com/pytorch/xla/issues/5676
import torch
import torch_xla
import torch_xla.core.xla_model as xm
try:
    from torch._dynamo import compiled_autograd
except ImportError:
    print("untestable: no compiled_autograd")
    raise SystemExit(125)

device = xm.xla_device()


def compiler_fn(gm):
    return torch.compile(gm, backend="eager", fullgraph=True, dynamic=False)


def fn(x, y):
    return torch.cos(x) + torch.sin(y) + 0.1


x = torch.tensor(100.0, requires_grad=True)
y = torch.tensor(200.0, requires_grad=True)
loss = torch.compile(fn, backend="eager")(x.to(device), y.to(device))
try:
    enable = getattr(compiled_autograd, "enable", None) or compiled_autograd._enable
    with enable(compiler_fn):
        loss.backward()
    print("x.grad", x.grad, "expected", -torch.sin(torch.tensor(100.0)))
    print("y.grad", y.grad, "expected", torch.cos(torch.tensor(200.0)))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
