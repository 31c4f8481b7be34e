# User saw: with torch 2.5.1+cpu (CPU wheel flavour) and torch_xla 2.5, a bare `import torch_xla`
# crashes inside torch._inductor with "TypeError: must be called with a dataclass type or instance".
# https://github.com/pytorch/xla/issues/8560
import torch
print("torch", torch.__version__)
try:
    import torch_xla
    import torch_xla.core.xla_model as xm
    device = xm.xla_device()
    print("import ok; torch_xla", torch_xla.__version__, (torch.ones(2, device=device) * 2).cpu())
except TypeError as e:
    print("raised:", e)
