# User saw (PyTorch maintainers' heads-up): once torch.load defaults to weights_only=True, loading
# torch_xla serialization files fails with "_pickle.UnpicklingError: Weights only load failed".
# torch_xla.utils.serialization (xser) pickles its own tensor references through torch.load.
# https://github.com/pytorch/xla/issues/7799
import os, tempfile
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.utils.serialization as xser
device = xm.xla_device()
print("torch", torch.__version__)
d = tempfile.mkdtemp()
p = os.path.join(d, "ckpt")
xser.save({"w": torch.arange(4.0, device=device)}, p)
try:
    print("xser.load ok:", xser.load(p)["w"].cpu())
except Exception as e:
    print("xser.load raised:", type(e).__name__, str(e)[:200])
try:
    torch.load(p, weights_only=True)
    print("torch.load(weights_only=True) ok")
except Exception as e:
    print("torch.load(weights_only=True) raised:", type(e).__name__, str(e)[:160])
