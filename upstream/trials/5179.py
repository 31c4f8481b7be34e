# The user compiled fn(a): b = a.t(); b.mul_(1.0); return b with torch.compile (the old
# "torchxla_trace_once" backend, now "openxla_eval"/"openxla") and the call hung forever.
# https://github.com/pytorch/xla/issues/5179
import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

device = xm.xla_device()


def fn(a):
    b = a.t()
    b.mul_(1.0)
    return b


x = torch.randn(2, 3)
for backend in ("openxla_eval", "openxla"):
    try:
        compiled = torch.compile(fn, backend=backend)
    except Exception as e:  # backend missing on this release
        print(backend, "unavailable:", e)
        continue
    res = compiled(x.to(device))
    print(backend, "result close:", torch.allclose(res.cpu(), x.t()))
print("OK (no hang)")
