# User saw: following the StableHLO "export with dynamic batch dimension" tutorial (resnet18),
# exported_program_to_stablehlo aborts with "Non-OK-status ... INVALID_ARGUMENT: Non-broadcast dimensions
# must not be dynamic." from BuildMaxPoolNd (torch-xla 2.4.0).
# https://github.com/pytorch/xla/issues/8200
import os
os.environ.setdefault("EXPERIMENTAL_XLA_UNBOUNDED_DYNAMISM", "1")   # the error message asks for it; the tutorial path needs it
import torch, torch_xla
import torch_xla.core.xla_model as xm
from torch.export import export
device = xm.xla_device()
try:
    from torch_xla.stablehlo import exported_program_to_stablehlo
except ImportError as e:
    print("UNTESTABLE:", e); raise SystemExit(0)

class Stem(torch.nn.Module):          # resnet18's stem: conv -> bn -> relu -> maxpool
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 7, stride=2, padding=3)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))

m = Stem().eval()
x = (torch.randn(4, 3, 32, 32),)
try:
    batch = torch.export.Dim("batch")
    ep = export(m, x, dynamic_shapes=({0: batch},))
except (AttributeError, TypeError) as e:
    print("UNTESTABLE: torch.export has no Dim/dynamic_shapes here:", e); raise SystemExit(0)
shlo = exported_program_to_stablehlo(ep)
txt = shlo.get_stablehlo_text('forward')
print("exported ok; dynamic batch in signature:", "?x3x32x32" in txt)
