# Issue 5719: as_strided on a slice, asking for more elements than the slice has but within the base storage,
# failed to lower: "Check failed: storage_offset + slice_size <= input_element_count (20 vs. 10)".
# https://github.com/pytorch/xla/issues/5719
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
base = torch.randn(20)
x = base.to(device)
try:
    z = x[10:].as_strided((20,), (1,), 0)
    print("matches CPU:", torch.allclose(z.cpu(), base[10:].as_strided((20,), (1,), 0)))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
