# Trial for https://github.com/pytorch/xla/issues/6991
# The user's GPT-2 generate() crashed on XLA with transformers 4.39; the maintainer traced it to
# torch.full((n,), False, device=xla) returning a float tensor (tensor([0.])) where PyTorch returns bool.
import torch
import torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
b = torch.full((2,), False, device=device)
i = torch.full((2,), 3, device=device)
print("full(False):", b.dtype, " full(3):", i.dtype)
if b.dtype != torch.bool or i.dtype != torch.int64:
    print("REPRODUCED: torch.full ignores the fill value's type")
else:
    print("NOT REPRODUCED: torch.full keeps bool and int64")
