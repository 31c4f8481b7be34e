# User saw: exporting a model that calls a custom torch.library op (my_lib.my_op) with
# exported_program_to_stablehlo(custom_ops_allowed_in_graph={"my_lib"}) fails with
# "UNIMPLEMENTED: No registered implementation for custom call to my_lib.my_op.default for platform CUDA"
# (on CPU the platform name would be Host). https://github.com/pytorch/xla/issues/9371
import torch, torch_xla
import torch_xla.core.xla_model as xm
from torch.library import Library, impl
device = xm.xla_device()
try:
    from torch.library import impl_abstract as reg_fake
except ImportError:
    from torch.library import register_fake as reg_fake
from torch_xla.stablehlo import exported_program_to_stablehlo, StableHLOExportOptions

lib = Library("my_lib", "DEF")
lib.define("my_op(Tensor t) -> Tensor")

@impl("my_lib::my_op", "default")
def my_op(t):
    return t.clone()

@reg_fake("my_lib::my_op")
def my_op_meta(t):
    return torch.empty_like(t)

class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.my_lib.my_op(x * 2) + 1

ep = torch.export.export(M(), (torch.randn(3, 3),))
try:
    shlo = exported_program_to_stablehlo(ep, StableHLOExportOptions(custom_ops_allowed_in_graph={"my_lib"}))
    print("export ok")
    print("custom_call in text:", "my_lib.my_op" in shlo.get_stablehlo_text())
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:400])
