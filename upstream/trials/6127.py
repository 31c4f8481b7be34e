# Issue 6127: a module that marks a composite with StableHLOCompositeBuilder could not be captured by
# torch.export: dynamo failed with "Unsupported: call_method UserDefinedObjectVariable(urandom) __call__"
# (the builder draws a random id with os.urandom while tracing).  https://github.com/pytorch/xla/issues/6127
import torch, torch_xla
import torch_xla.core.xla_model as xm
try:
    from torch_xla.experimental.mark_pattern_utils import StableHLOCompositeBuilder
except ImportError as e:
    print("UNTESTABLE: no StableHLOCompositeBuilder:", e); raise SystemExit
from torch_xla.stablehlo import exported_program_to_stablehlo

class M(torch.nn.Module):
    def forward(self, x):
        b = StableHLOCompositeBuilder("my.gelu")
        y = b.mark_inputs(x)
        y = torch.nn.functional.gelu(y)
        y = b.mark_outputs(y)
        return x + y

try:
    ep = torch.export.export(M(), (torch.randn(1, 10),))
    txt = exported_program_to_stablehlo(ep).get_stablehlo_text("forward")
    print("exported; composite present:", "composite" in txt)
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
