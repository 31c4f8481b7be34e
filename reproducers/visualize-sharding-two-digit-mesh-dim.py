"""visualize_tensor_sharding fails when a tile dimension of the sharding has two digits.

Upstream: fixed by pytorch/xla PR 9475 ("Fix spmd sharding visualization when device index
is >= 10").

`torch_xla.distributed.spmd.debugging.visualize_sharding` parses the HLO sharding string,
e.g. `{devices=[16,1]0,1,...,15}`, by taking single characters of the bracket
(`int(spec[1])`, `int(spec[3])`) instead of splitting it on commas. With a mesh axis of 10 or
more devices the character picked is a digit of the wrong number or the comma itself, and the
call raises `ValueError: ('sharding ', '{devices=[16,1]...}', ' is not organized as expected')`.

The record runs it with 16 virtual CPU devices and a tensor sharded 16 ways on dim 0.

`--workaround` checks the record's workaround instead of calling the helper on that tensor:
it reads the sharding directly, splitting the tile dimensions of
`torch_xla._XLAC._get_xla_sharding_spec(t)` on commas (expected `[16,1]`) and listing
`local_shards` of the XLAShardedTensor that `mark_sharding` returns (expected 16 shards, one
row each); and it checks the record's claim that the helper works when no sharded mesh axis
has 10 or more devices (a tensor sharded over a `(4, 4)` mesh must draw 4 rows). It reports
"not reproduced" when all of that holds.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=16
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import io
import contextlib
import re
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  try:
    import torch_xla.distributed.spmd as xs
    from torch_xla.distributed.spmd.debugging import visualize_tensor_sharding
  except ImportError as e:  # the debugging module first ships in 2.2
    print(f"UNTESTABLE: torch_xla.distributed.spmd.debugging is missing ({e})")
    return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  if n < 10:
    print(f"ERROR: needs at least 10 devices, got {n} (the record sets CPU_NUM_DEVICES)")
    return ERROR
  mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
  t = torch.randn(n, 4).to(xm.xla_device())
  xst = xs.mark_sharding(t, mesh, ("data", None))
  spec = torch_xla._XLAC._get_xla_sharding_spec(t)
  print(f"INFO: {n} devices, sharding {spec}")
  if workaround:
    return check_workaround(np, torch, torch_xla, xm, xs, visualize_tensor_sharding, t, xst,
                            spec, n)
  out = io.StringIO()
  try:
    with contextlib.redirect_stdout(out):
      table = visualize_tensor_sharding(t, use_color=False)
  except ValueError as e:
    sys.stdout.write(out.getvalue())
    if "is not organized as expected" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: visualize_tensor_sharding of {spec[:40]}... raised ValueError: {e}"
            [:400])
      return REPRODUCED
    raise
  rendered = out.getvalue()
  cells = sum(line.count("CPU ") for line in rendered.splitlines())
  print(f"INFO: rendered table with {table.row_count} rows, {cells} device cells")
  if table.row_count != n:
    print(f"REPRODUCED: visualize_tensor_sharding drew {table.row_count} row(s) for a "
          f"{n}-way split of dim 0 (sharding {spec[:40]}...)")
    return REPRODUCED
  print(f"NOT REPRODUCED: visualize_tensor_sharding draws the {n}-way sharding")
  return NOT_REPRODUCED


def check_workaround(np, torch, torch_xla, xm, xs, visualize_tensor_sharding, t, xst, spec,
                     n) -> int:
  """The workaround: read the sharding without the helper; the helper on a (4, 4) mesh."""
  # 1. The sharding string, its tile dimensions split on commas.
  m = re.search(r"devices=\[([0-9,]+)\]", spec)
  tiles = [int(v) for v in m.group(1).split(",")] if m else []
  print(f"INFO: workaround: tile dimensions read from the sharding string: {tiles}")
  if not tiles or tiles[0] != n or any(v != 1 for v in tiles[1:]):
    print(f"ERROR: the sharding string {spec[:60]} does not read as {n} tiles on dim 0")
    return ERROR

  # 2. The shards of the XLAShardedTensor: device and index range of each.
  if not hasattr(xst, "local_shards"):
    xst = xs.XLAShardedTensor(t)
  xm.mark_step()
  shards = xst.local_shards
  rows = {s.indices[0].start or 0 for s in shards
          if isinstance(getattr(s, "indices", None), (list, tuple)) and s.indices and
          isinstance(s.indices[0], slice)}
  devices = {str(getattr(s, "shard_device", getattr(s, "rank", "?"))) for s in shards}
  first = shards[0] if shards else None
  print(f"INFO: workaround: local_shards lists {len(shards)} shard(s) on {len(devices)} "
        f"device(s), {len(rows)} distinct first rows; first shard: device "
        f"{getattr(first, 'shard_device', '?')}, indices {getattr(first, 'indices', '?')}")
  if len(shards) != n or (rows and len(rows) != n):
    print(f"ERROR: local_shards does not list one shard per row of the {n}-way split")
    return ERROR

  # 3. The helper on a mesh whose sharded axes have fewer than 10 devices.
  if n % 4 or n // 4 >= 10:
    print(f"ERROR: the (4, n/4) mesh check needs a multiple of 4 below 40 devices, got {n}")
    return ERROR
  mesh = xs.Mesh(np.arange(n), (4, n // 4), ("data", "model"))
  t2 = torch.randn(8, 8).to(xm.xla_device())
  xs.mark_sharding(t2, mesh, ("data", "model"))
  spec2 = torch_xla._XLAC._get_xla_sharding_spec(t2)
  out = io.StringIO()
  try:
    with contextlib.redirect_stdout(out):
      table = visualize_tensor_sharding(t2, use_color=False)
  except ValueError as e:
    sys.stdout.write(out.getvalue())
    if "is not organized as expected" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: visualize_tensor_sharding of {spec2[:40]}... raised ValueError: {e}"
            f" (a (4, {n // 4}) mesh, where the workaround says the helper works)"[:400])
      return REPRODUCED
    raise
  print(f"INFO: workaround: (4, {n // 4}) mesh, sharding {spec2[:60]}: the helper drew a "
        f"table with {table.row_count} rows")
  if table.row_count != 4:
    print(f"REPRODUCED: visualize_tensor_sharding drew {table.row_count} row(s) for a "
          f"4-way split of dim 0 (sharding {spec2[:40]}..., a (4, {n // 4}) mesh)")
    return REPRODUCED
  print(f"NOT REPRODUCED: workaround holds: the sharding string and local_shards show the "
        f"{n}-way split, and the helper draws a (4, {n // 4}) mesh")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main(sys.argv[1:] == ["--workaround"])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
