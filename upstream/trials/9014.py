# Issue 9014: autocast(bfloat16) over conv -> batchnorm -> linear on an XLA device failed at mark_step with
# "Seen floating point types of different precisions in %add = f32[2,340] add(f32 dot, bf16 broadcast)".
# (report's code was cut in the stored thread; this is a reconstruction of the described model)
# https://github.com/pytorch/xla/issues/9014
import torch, torch_xla
import torch_xla.core.xla_model as xm
from torch_xla.amp import autocast

device = xm.xla_device()

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 8 * 8, 340)
    def forward(self, x):
        return self.fc(torch.flatten(self.bn(self.conv(x)), 1))

model = Net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 3, 8, 8, device=device)
# torch_xla.amp.autocast ignores CPU devices, so also try the 'xla' autocast key directly (the TPU path)
for name, ctx in (("torch_xla.amp.autocast", lambda: autocast(device, dtype=torch.bfloat16)),
                  ("torch.autocast('xla')", lambda: torch.autocast("xla", dtype=torch.bfloat16))):
    try:
        with ctx():
            out = model(x)
            loss = out.float().mean()
        loss.backward()
        opt.step()
        xm.mark_step()
        print(name, "ok, loss:", loss.cpu())
    except Exception as e:
        print(name, "ERROR:", type(e).__name__, str(e)[:600])
