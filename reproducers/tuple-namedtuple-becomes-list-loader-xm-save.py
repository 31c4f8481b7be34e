"""MpDeviceLoader batches and xm.save()/xser checkpoints turn tuples and namedtuples into lists.

Upstream: no report found in pytorch/xla (searched November 2026). The code admits it in a comment
in `torch_xla/utils/utils.py`: "We transform tuples to lists here ... This code might break if user
code expects a tuple."

Every place where torch_xla moves a nested Python structure between the CPU and the XLA device goes
through `ToXlaTensorArena.transform()` (`torch_xla/core/xla_model.py`), which rebuilds the structure
with `torch_xla.utils.utils.for_each_instance_rewrite`. Its `(list, tuple)` branch always builds a
`list`, so a namedtuple or tuple comes back as a plain list:
  * data loading: `MpDeviceLoader` / `ParallelLoader` -> `xm.send_cpu_data_to_device`; a Dataset
    yielding a namedtuple gives namedtuple batches from torch's DataLoader but lists from
    MpDeviceLoader, so `batch.x` raises AttributeError;
  * checkpointing: `xm.save` -> `_maybe_convert_to_cpu`, `xser.save` / `xser.load` ->
    `_rewrite_data` / `load`; tuples and namedtuples come back from the file as lists, and a tuple
    used as a dict key makes the save raise `TypeError: unhashable type: 'list'`.

The script checks the three paths and reports the bug when any of them changes a type.
`--workaround` uses the project's workaround instead: the Dataset yields dicts (plain dicts keep
their type through the loader) and the checkpoint is copied to the CPU with
`torch.utils._pytree.tree_map` and written with `torch.save`, which keep tuples and namedtuples.

Run: PJRT_DEVICE=CPU python reproducers/tuple-namedtuple-becomes-list-loader-xm-save.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on this
release, anything else = error.
"""

import collections
import os
import sys
import tempfile
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2

Pair = collections.namedtuple("Pair", "x y")


def load_file(torch, path):
  try:
    return torch.load(path, weights_only=False)
  except TypeError:  # torch releases without the weights_only argument
    return torch.load(path)


def check_loader(torch, xm, pl, workaround):
  """Returns a description of the type change, or None when the batch kept its type."""

  class DS(torch.utils.data.Dataset):

    def __len__(self):
      return 4

    def __getitem__(self, i):
      item = Pair(torch.full((2,), float(i)), i)
      return item._asdict() if workaround else item

  torch_batch = next(iter(torch.utils.data.DataLoader(DS(), batch_size=2)))
  batches = list(pl.MpDeviceLoader(torch.utils.data.DataLoader(DS(), batch_size=2), xm.xla_device()))
  batch = batches[0]
  print(f"loader: torch DataLoader batch is {type(torch_batch).__name__}, "
        f"MpDeviceLoader batch is {type(batch).__name__}")
  if type(batch) is not type(torch_batch):
    try:
      batch.x
    except AttributeError as err:
      print(f"loader: batch.x raised AttributeError: {err}")
    return (f"MpDeviceLoader gave a {type(batch).__name__} batch where torch's DataLoader gives "
            f"{type(torch_batch).__name__}")
  xs = batch["x"] if workaround else batch.x
  if xs.device.type != "xla":
    print(f"ERROR: the loader's tensor is on {xs.device}, not on the XLA device")
    raise SystemExit(ERROR)
  return None


def check_save(torch, xm, xser, workaround):
  device = xm.xla_device()
  ckpt = {
      "betas": (0.9, 0.999),
      "pair": Pair(torch.ones(2, device=device), 1),
      "shapes": (torch.ones(1, device=device), 3),
  }
  d = tempfile.mkdtemp()
  changes = []
  if workaround:
    from torch.utils._pytree import tree_map
    xm.mark_step()
    cpu = tree_map(lambda v: v.cpu() if isinstance(v, torch.Tensor) else v, ckpt)
    torch.save(cpu, os.path.join(d, "w.pt"))
    loaded = {"torch.save": load_file(torch, os.path.join(d, "w.pt"))}
  else:
    xm.save(ckpt, os.path.join(d, "a.pt"))
    xser.save(ckpt, os.path.join(d, "b.pt"))
    loaded = {"xm.save": load_file(torch, os.path.join(d, "a.pt")),
              "xser.save/load": xser.load(os.path.join(d, "b.pt"))}
  for how, back in loaded.items():
    got = {k: type(v).__name__ for k, v in back.items()}
    print(f"{how}: saved tuple/Pair/tuple, loaded {got}")
    for k, v in ckpt.items():
      if type(back[k]) is not type(v):
        changes.append(f"{how} turned {k!r} from {type(v).__name__} into {type(back[k]).__name__}")
    if not torch.equal(back["pair"][0].cpu(), torch.ones(2)):
      print(f"ERROR: {how} wrote the wrong tensor")
      raise SystemExit(ERROR)
  if not workaround:
    try:
      xm.save({("layer", 0): torch.ones(1, device=device)}, os.path.join(d, "k.pt"))
      print("xm.save: a tuple dict key saved")
    except TypeError as err:
      if "unhashable type: 'list'" not in str(err):
        raise
      traceback.print_exc()
      changes.append(f"xm.save of a dict with a tuple key raised TypeError: {err}")
  return changes


def main(workaround: bool) -> int:
  try:
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    import torch_xla.utils.serialization as xser
  except ImportError as err:
    print(f"untestable: {err}")
    return UNTESTABLE

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  problems = []
  loader = check_loader(torch, xm, pl, workaround)
  if loader:
    problems.append(loader)
  problems += check_save(torch, xm, xser, workaround)
  if problems:
    print("XLAKB-REPRODUCED: torch_xla's tensor transfer turned tuples into lists: " + "; ".join(problems))
    return REPRODUCED
  print("not reproduced: the loader batch and the checkpoint kept their tuple and namedtuple types")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main("--workaround" in sys.argv[1:])
  except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else ERROR
  except BaseException:
    traceback.print_exc()
    code = ERROR  # an unexpected crash is an error, never "reproduced"
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)  # do not wait for the loader's worker threads at interpreter exit
