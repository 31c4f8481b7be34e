# User saw: adding a rank-0 int64 CPU tensor to an int32 XLA tensor and then calling .long() fails at
# lowering with "Binary op shift-left with different element types: s64[] and s32[]".
# https://github.com/pytorch/xla/issues/6538
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
ids = torch.tensor([[478, 1896, 1097, 299, 373]], device=device, dtype=torch.int32)
for label, lhs in [("int32 scalar tensor", torch.tensor(1, dtype=torch.int32)),
                   ("python int", 1),
                   ("int64 scalar tensor", torch.tensor(1))]:
    try:
        print(label, "->", (lhs + ids).long().cpu().tolist())
    except Exception as e:
        print(label, "raised:", type(e).__name__, str(e)[:300])
