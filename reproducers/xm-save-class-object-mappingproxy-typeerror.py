"""xm.save() of a checkpoint that holds a class (here nn.LayerNorm itself) fails.

Upstream: pytorch/xla issue 7123 (the reporter's Lightning run never finished its save; they traced it to
`for_each_instance_rewrite` walking into a class given as a model argument, e.g. `norm_layer=nn.LayerNorm`).

`xm.save()` moves XLA tensors to the CPU with `ToXlaTensorArena.transform()`, which rebuilds the saved
object with `torch_xla.utils.utils.for_each_instance_rewrite`. Any value with a `__dict__` that is not a
dict, list, tuple, set or tensor is copied with `copy.copy()` and its `__dict__` entries are written back.
A class has a `__dict__` too, but `copy.copy()` returns the class itself and its `__dict__` is a read-only
`mappingproxy`, so the write raises `TypeError: 'mappingproxy' object does not support item assignment`.
Plain `torch.save()` pickles the same object (a class is stored by reference).

The script saves {"hparams": {"norm_layer": nn.LayerNorm}, "state_dict": <XLA state_dict>}.
`--workaround` stores the class by its name instead ("torch.nn.LayerNorm") and must then save.

Run: PJRT_DEVICE=CPU python reproducers/xm-save-class-object-mappingproxy-typeerror.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on this
release, anything else = error.
"""

import os
import sys
import tempfile
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
  try:
    import torch
    import torch.nn as nn
    import torch_xla
    import torch_xla.core.xla_model as xm
  except ImportError as err:
    print(f"untestable: {err}")
    return UNTESTABLE

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  device = xm.xla_device()
  model = nn.Linear(2, 2).to(device)
  norm_layer = "torch.nn.LayerNorm" if workaround else nn.LayerNorm
  ckpt = {"hparams": {"norm_layer": norm_layer}, "state_dict": model.state_dict()}
  path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")

  # Plain torch.save takes the class (pickled by reference): the object itself is saveable.
  torch.save({"hparams": {"norm_layer": nn.LayerNorm}}, path)

  try:
    xm.save(ckpt, path)
  except TypeError as err:
    if "'mappingproxy' object does not support item assignment" in str(err):
      traceback.print_exc()
      print(f"XLAKB-REPRODUCED: xm.save() of a checkpoint holding a class raised TypeError: {err}")
      return REPRODUCED
    raise
  try:
    back = torch.load(path, weights_only=False)
  except TypeError:  # torch releases without the weights_only argument
    back = torch.load(path)
  got = back["hparams"]["norm_layer"]
  want = model.weight.cpu()
  if not torch.equal(back["state_dict"]["weight"], want):
    print("ERROR: the saved weight differs from the model's")
    return 2
  print(f"not reproduced: xm.save() wrote the checkpoint; norm_layer = {got!r}")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    sys.exit(main("--workaround" in sys.argv[1:]))
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    sys.exit(2)  # an unexpected crash is an error, never "reproduced"
