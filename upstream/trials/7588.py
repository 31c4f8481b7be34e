# User saw: F.embedding_bag(..., mode="max") with requires_grad=False weights (the _embedding_bag_forward_only
# path) gives a different result on XLA than eager (AssertionError, one bag's entry came out 0.0).
# https://github.com/pytorch/xla/issues/7588
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
torch.manual_seed(0)
bad = 0
for trial in range(20):
    x = torch.randint(0, 10, (5,), dtype=torch.long)
    w = torch.randn(10, 5, requires_grad=False)
    o = torch.tensor([0, 3], dtype=torch.long)
    ref = torch.nn.functional.embedding_bag(x, w, o, mode="max")
    got = torch.nn.functional.embedding_bag(x.to(device), w.to(device), o.to(device), mode="max").cpu()
    if not torch.allclose(ref, got):
        bad += 1
        if bad == 1:
            print("MISMATCH eager:", ref.tolist(), "\n          xla:  ", got.tolist())
print(f"{bad}/20 trials differ from eager")
