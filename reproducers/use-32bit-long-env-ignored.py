"""XLA_USE_32BIT_LONG=1 has no effect: int64 tensors stay s64 on the XLA device.

Upstream: the flag was removed by pytorch/xla PR 7582 (2.5.0) and restored by PR 8571
(master) and PR 8589 (r2.6 cherry-pick).

With XLA_USE_32BIT_LONG=1 torch_xla stores torch.int64 (and uint64) tensors as 32-bit
integers on the device (s32 in HLO), which saves memory and is what devices without fast
64-bit integers need. In torch_xla 2.5 the variable only triggers a deprecation warning and
int64 tensors are lowered to s64, so programs that relied on it silently use 64-bit integers.

The script builds an int64 computation and reads the element type of its HLO parameter and
result. The record sets XLA_USE_32BIT_LONG=1.

Run with: PJRT_DEVICE=CPU XLA_USE_32BIT_LONG=1
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  if os.environ.get("XLA_USE_32BIT_LONG") != "1":
    print("ERROR: XLA_USE_32BIT_LONG=1 is not set; the record's environment sets it")
    return ERROR
  import warnings
  warnings.simplefilter("always", UserWarning)  # show the 2.5 deprecation warning
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  dev = xm.xla_device()
  x = torch.arange(8, dtype=torch.int64).to(dev)
  y = x * 3 + 1
  hlo = torch_xla._XLAC._get_xla_tensors_hlo([y])
  entry = [l.strip() for l in hlo.splitlines() if l.lstrip().startswith("ENTRY")]
  print("INFO: HLO entry: " + (entry[0] if entry else "<none>"))
  # Parameter/result types of the entry computation, e.g. "(p0.1: s64[8]) -> (s64[8])".
  types = set(re.findall(r"\b([su](?:32|64))\[8\]", entry[0] if entry else hlo))
  if not types:
    print("ERROR: could not find the element type of the int64 tensor in the HLO")
    print(hlo)
    return ERROR
  values = y.cpu().tolist()
  print(f"INFO: y.dtype={y.dtype} values={values} device element types={sorted(types)}")
  if values != [3 * i + 1 for i in range(8)]:
    print("ERROR: wrong values (not the bug under test)")
    return ERROR
  if "s64" in types:
    print("REPRODUCED: XLA_USE_32BIT_LONG=1 ignored: torch.int64 tensor lowered as s64 "
          f"(HLO entry types {sorted(types)})")
    return REPRODUCED
  print(f"NOT REPRODUCED: with XLA_USE_32BIT_LONG=1 torch.int64 is stored as "
        f"{'/'.join(sorted(types))} on the device")
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
