# User saw: "RuntimeError: PyTorch is not linked with support for xla devices" when moving a tensor
# to 'xla'; the cause (found by the user) was that torch_xla had not been imported.
# https://github.com/pytorch/xla/issues/9725
import torch
try:
    torch.randn(4).to('xla')          # torch_xla not imported yet
    print("no error without torch_xla import")
except RuntimeError as e:
    print("before import:", e)
import torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
print("after import:", (torch.randn(4).to('xla') + 1).cpu().shape)
