# Issue 8373: exporting a quantisation-aware-trained (fake-quant) MLP with torch.export and then
# torch_xla.stablehlo.exported_program_to_stablehlo failed with
# "RuntimeError: This model contains ops not capturable by Pytorch/XLA: aten::_fused_moving_avg_obs_fq_helper".
# (the user's script is cut in the stored thread; this rebuilds the eager-mode QAT route it describes)
# https://github.com/pytorch/xla/issues/8373
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch.ao.quantization as tq
from torch_xla.stablehlo import exported_program_to_stablehlo

device = xm.xla_device()

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.fc1 = torch.nn.Linear(8, 16)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(16, 4)
        self.dequant = tq.DeQuantStub()
    def forward(self, x):
        return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))

m = MLP().train()
m.qconfig = tq.get_default_qat_qconfig("x86")
tq.prepare_qat(m, inplace=True)
x = torch.randn(2, 8)
m(x)  # one calibration/training step on CPU
try:
    try:  # non-strict export avoids dynamo refusing to trace QuantStub on older torch
        ep = torch.export.export(m, (x,), strict=False)
    except TypeError:
        ep = torch.export.export(m, (x,))
    shlo = exported_program_to_stablehlo(ep)
    print("exported, text length:", len(shlo.get_stablehlo_text("forward")))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
