"""torch.compile(backend="openxla") crashes on graphs with a copy into an input (IndexError / HasValue).

Upstream: fixed by pytorch/xla PR 7902 ("Fix the crash with copy op in dynamo").

The openxla dynamo bridge removes duplicate graph outputs before handing them to torch_xla
and puts them back afterwards (`Deduper` in `torch_xla/core/dynamo_bridge.py`). It decided
what is a duplicate by Python object identity (`id()`), while torch_xla itself merges
outputs that are the same lazy IR value or device buffer. A compiled function that copies a
result into its input (`a.copy_(a.cos()); return a`, which AOTAutograd turns into
`aten.copy` plus an input mutation) produces two different Python tensors for one XLA value,
so the two sides disagree on the number of outputs: `IndexError: list index out of range`
in `Deduper.recover`, or on 2.4 for the explicit `aten.copy` form, `Check failed:
HasValue()` while extracting the graph. PR 7902 dedups by IR node / data handle.

Two cases run: (1) the in-place `copy_` into the input, (2) the explicit
`torch.ops.aten.copy.default(a, a.cos())` of the upstream test. Either crashing in
dynamo_bridge.py counts as the bug; both must match eager CPU for "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

import torch

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def copy_into_input(a):
  a.copy_(a.cos())
  return a


def explicit_aten_copy(a):
  res = a.cos()
  return torch.ops.aten.copy.default(a, res)


def bridge_crash(e):
  """The dynamo_bridge.py frame and message when `e` is the bug, else None."""
  text = f"{type(e).__name__}: {e}".splitlines()[0]
  frames = [f for f in traceback.extract_tb(e.__traceback__)
            if f.filename.endswith("dynamo_bridge.py") and not f.name.startswith("<")]
  if frames and ("list index out of range" in text or "Check failed: HasValue()" in text):
    return frames[-1].name, text
  return None


def main() -> int:
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  dev = xm.xla_device()
  torch.manual_seed(0)
  crashes = []
  for fn in (copy_into_input, explicit_aten_copy):
    a = torch.randn(2, 9)
    expected = a.cos()
    xa = a.to(dev)
    try:
      got = torch.compile(fn, backend="openxla")(xa).cpu()
    except Exception as e:  # dynamo may wrap backend errors
      hit = bridge_crash(e)
      if hit is None:
        raise
      traceback.print_exc()
      print(f"INFO: {fn.__name__}: crashed in dynamo_bridge.py {hit[0]}: {hit[1]}")
      crashes.append((fn.__name__,) + hit)
      continue
    if not torch.allclose(got, expected, atol=1e-5):
      print(f"ERROR: {fn.__name__}: compiled result differs from eager (not the bug under test)")
      return ERROR
    print(f"INFO: {fn.__name__}: compiled result matches eager")
  if crashes:
    name, where, text = crashes[0]
    print(f"REPRODUCED: torch.compile(backend='openxla') of {name} crashed in dynamo_bridge.py "
          f"{where}: {text}")
    return REPRODUCED
  print("NOT REPRODUCED: torch.compile(backend='openxla') runs both copy graphs and matches "
        "eager")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
