# Issue 9727: xm.all_to_all on a single XLA device produced HLO that failed verification:
# "RET_CHECK failure ... hlo_verifier.cc ... hlo->operand_count() == split_count".
# https://github.com/pytorch/xla/issues/9727
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
x = torch.arange(8, dtype=torch.int32, device=device)
try:
    y = xm.all_to_all(x, split_dimension=0, concat_dimension=0, split_count=2)
    print("result:", y.cpu())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:600])
