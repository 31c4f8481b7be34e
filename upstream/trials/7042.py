# User saw: model.to(xla_device) increased the number of named_parameters of hf_Bart
# (torchbench, XLA:GPU). Minimal form: a module whose two submodules share one Parameter
# (tied weights) has one parameter less on CPU than after .to(xla).
# https://github.com/pytorch/xla/issues/7042
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight  # tie


m = Tied()
n_cpu = len(list(m.named_parameters()))
m.to(device)
n_xla = len(list(m.named_parameters()))
tied = m.head.weight is m.emb.weight
print("named_parameters cpu:", n_cpu, "xla:", n_xla, "still tied:", tied)
if n_xla != n_cpu or not tied:
    print("REPRODUCED: .to(xla) untied the shared weight")
    raise SystemExit(1)
print("tying preserved")
