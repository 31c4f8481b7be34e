# The user exported foo(x, y) = sin(x) + cos(y) with torch.export and lowered it with
# exported_program_to_stablehlo; the StableHLO text applied sine to %arg1 and cosine to %arg0,
# i.e. the arguments were swapped. https://github.com/pytorch/xla/issues/5544
import re

import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

try:
    from torch.export import export
    from torch_xla.stablehlo import exported_program_to_stablehlo
except ImportError as e:
    print("untestable:", e)
    raise SystemExit(125)

device = xm.xla_device()


class Foo(torch.nn.Module):
    def forward(self, x, y):
        return torch.sin(x) + torch.cos(y)


args = (torch.randn(10, 10), torch.randn(10, 10))
prog = exported_program_to_stablehlo(export(Foo(), args))
text = prog.get_stablehlo_text("forward")
sine = re.search(r"stablehlo.sine %(\w+)", text).group(1)
cosine = re.search(r"stablehlo.cosine %(\w+)", text).group(1)
print("sine on", sine, "cosine on", cosine)
# also check the callable gives the eager value
out = prog(*args)
ok = torch.allclose(out.cpu() if hasattr(out, "cpu") else out[0].cpu(), torch.sin(args[0]) + torch.cos(args[1]), atol=1e-5)
print("numerically equal to eager:", ok)
if sine != "arg0" or not ok:
    print("BUG: arguments swapped")
    raise SystemExit(1)
print("OK")
