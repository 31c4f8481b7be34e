# User saw: saving a Lightning checkpoint with xm.save never finished when the saved
# hyper-parameters held an nn.Module class (e.g. norm_layer=nn.LayerNorm); they traced it to
# ToXlaTensorArena / for_each_instance_rewrite walking into any object with a __dict__.
# https://github.com/pytorch/xla/issues/7123
import os
import tempfile

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

device = xm.xla_device()
model = nn.Linear(2, 2).to(device)
ckpt = {"hparams": {"norm_layer": nn.LayerNorm}, "state_dict": model.state_dict()}
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"hparams": {"norm_layer": nn.LayerNorm}}, path)  # plain torch.save copes with a class
try:
    xm.save(ckpt, path)
except Exception as e:  # noqa: BLE001
    print("BUG: xm.save failed:", type(e).__name__, str(e).splitlines()[0][:300])
    raise SystemExit(1)
back = torch.load(path, weights_only=False) if "weights_only" in torch.load.__code__.co_varnames else torch.load(path)
print("xm.save ok; loaded norm_layer =", back["hparams"]["norm_layer"])
