# User saw: after moving two Linear layers to the XLA device and tying them with
# `decoder.weight.data = encoder.weight.data.t()`, an in-place write to encoder.weight.data did
# not show in decoder.weight (Kaggle TPU, torch_xla 1.7, January 2021).
# https://github.com/pytorch/xla/issues/2719
# Trial: the same tying on CPU and on the XLA device; prints the tied element on both sides.
import torch
import torch_xla.core.xla_model as xm

for device in ("cpu", xm.xla_device()):
    enc = torch.nn.Linear(10, 5).to(device)
    dec = torch.nn.Linear(5, 10).to(device)
    dec.weight.data = enc.weight.data.t()
    enc.weight.data[0][0] = 0.1111
    a, b = enc.weight.data[0][0].item(), dec.weight.data[0][0].item()
    print(device, "encoder", a, "decoder", b, "tied" if a == b else "NOT TIED")
