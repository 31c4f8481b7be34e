# User saw: after `del x; gc.collect()` of a 4 GB XLA tensor, the device memory stayed in use (nvidia-smi on
# PJRT_DEVICE=CUDA), while plain PyTorch freed it. https://github.com/pytorch/xla/issues/7849
# This trial does the same on the CPU device and reads torch_xla's own memory counter before and after.
import gc

import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
try:
    before = xm.get_memory_info(device)
except Exception as e:  # the CPU client may not report memory
    print("untestable: get_memory_info on CPU raised", type(e).__name__, str(e).splitlines()[0])
    raise SystemExit(125)
x = torch.zeros(64, 1024, 1024).to(device)
xm.mark_step()
during = xm.get_memory_info(device)
del x
gc.collect()
after = xm.get_memory_info(device)
print("before", before, "during", during, "after", after)
