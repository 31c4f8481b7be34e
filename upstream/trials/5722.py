# User saw: torch.compile(backend="openxla") of a function whose output is moved to the CPU
# ((x + x).cpu()) failed inside the dynamo bridge with "Check failed: xtensor".
# https://github.com/pytorch/xla/issues/5722
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()

def foo(x):
    return (x + x).cpu()

x = torch.randn(5, device=device)
print("eager:", foo(x))
try:
    print("compiled:", torch.compile(foo, backend="openxla")(x))
    print("no error")
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:200], "...", str(e)[-80:])
