# User saw: autocast(dtype=torch.bfloat16) over Conv2d + BatchNorm2d fails at mark_step with
# "Bad StatusOr access: INTERNAL: ... Seen floating point types of different precisions in
#  %batch-norm-training ... but mixed precision is disallowed."
# https://github.com/pytorch/xla/issues/8496
import torch, torch_xla
from torch import nn
import torch_xla.core.xla_model as xm
device = xm.xla_device()
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)).to(device)
x = torch.randn(4, 3, 32, 32).to(device)
try:
    # torch_xla.amp.autocast ignores XLA:CPU, so use the 'xla' autocast backend it selects for TPU/GPU bf16
    with torch.autocast('xla', dtype=torch.bfloat16):
        out = model(x)
    xm.mark_step()
    print("ok", out.dtype, out.cpu().shape)
except Exception as e:
    print(type(e).__name__ + ":", str(e)[:400])
