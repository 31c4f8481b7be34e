# User saw: after model.to(xla_device), references to the parameters taken before the move
# still point at the old CPU tensors (module.parameters() are new XLA tensors), whereas
# model.cuda() updates the same Parameter objects in place.
# https://github.com/pytorch/xla/issues/6861
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
model = torch.nn.Linear(4, 4)
before = list(model.parameters())
model.to(device)
after = list(model.parameters())
print("after :", [p.device.type for p in after])
print("before:", [p.device.type for p in before])
same = all(a is b for a, b in zip(before, after))
print("same Parameter objects:", same)
if not same and any(p.device.type == "cpu" for p in before):
    print("REPRODUCED: module.to(xla) replaced the parameters; old references stay on CPU")
    raise SystemExit(1)
print("parameters moved in place")
