"""torch.cummax on XLA returns the index of the FIRST running maximum when the
maximum repeats; PyTorch returns the index of the LAST one.

Upstream: pytorch/xla#8675. Since the cummax lowering (PR #8491, first in
2.7.0) the running max/argmax is reduced with the argmax combiner, which breaks
ties towards the smaller index. Before that, cummax ran on the CPU fallback and
matched PyTorch.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.tensor([1, 3, 2, 3, 0])
  want = torch.cummax(x, dim=0)
  got = torch.cummax(x.to(device), dim=0)
  values, indices = got.values.cpu(), got.indices.cpu()
  print(f"INFO: cummax({x.tolist()}) CPU values {want.values.tolist()} indices "
        f"{want.indices.tolist()}; XLA values {values.tolist()} indices {indices.tolist()}")
  if not torch.equal(values, want.values):
    print("INFO: the values differ too")
  if not torch.equal(indices, want.indices):
    print(f"REPRODUCED: cummax on XLA gave indices {indices.tolist()}, "
          f"expected {want.indices.tolist()}")
    return REPRODUCED
  print("NOT REPRODUCED: cummax indices on XLA match PyTorch")
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
