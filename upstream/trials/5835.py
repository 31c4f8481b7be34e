# Issue 5835: an overlapping as_strided view (2x3 window over 5 elements, stride (2,1)) failed to lower:
# "Check failed: storage_offset + slice_size <= input_element_count (6 vs. 5)".
# https://github.com/pytorch/xla/issues/5835
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
x = torch.arange(5, device=device)
try:
    r = x.as_strided((2, 3), (2, 1), 0)
    print("result:", r.cpu().tolist(), "expected:", torch.arange(5).as_strided((2, 3), (2, 1), 0).tolist())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
