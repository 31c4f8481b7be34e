# User saw: exporting a module whose forward calls torch.distributed.all_reduce and converting it with
# exported_program_to_stablehlo fails with "failed to legalize operation 'mhlo.all_reduce' that was
# explicitly marked illegal". https://github.com/pytorch/xla/issues/8854
import os
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch.distributed as dist
from torch.export import export
from torch_xla.stablehlo import exported_program_to_stablehlo
device = xm.xla_device()

os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", world_size=1, rank=0)

class AR(torch.nn.Module):
    def forward(self, x):
        return dist.all_reduce(x, op=dist.ReduceOp.SUM)

try:
    ep = export(AR(), (torch.rand(4, 3),))
    print(ep.graph)
    shlo = exported_program_to_stablehlo(ep)
    txt = shlo.get_stablehlo_text()
    print("converted; all_reduce present:", "all_reduce" in txt)
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:400])
finally:
    dist.destroy_process_group()
