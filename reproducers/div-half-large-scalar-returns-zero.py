"""`half_tensor / 100000` on XLA returns zeros.

Upstream: no issue or fix found (open). For `torch.div(x, 100000)` PyTorch
wraps the Python number as a 0-d "wrapped number" tensor and dispatches to
div.Tensor. The XLA kernel converts that wrapped number to the result dtype
(float16) before dividing (UnwrapNumber in torch_xla/csrc/torch_util.cpp):
100000 is above the float16 maximum (65504) and becomes inf, and x / inf is 0.
PyTorch on CPU/CUDA divides in float32 (the "op math" type of float16) and
returns 0.3, -0.6, 0.65 for the values below. The related aten::div.Scalar
overflow error was fixed in 2.4 (record div-scalar-half-overflow), but this
path was not changed.

Run with: PJRT_DEVICE=CPU
`--workaround` judges the workaround instead: divide in float32 and cast back,
`(x.float() / 100000).half()`; exit 0 when it matches PyTorch, 1 (the bug's line)
when it still returns zeros.
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool = False) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.tensor([30000.0, -60000.0, 65000.0], dtype=torch.float16)
  want = torch.div(x, 100000)
  xx = x.to(device)
  if workaround:
    got = (xx.float() / 100000).half().cpu()
    print(f"INFO: workaround (x.float() / 100000).half(): XLA {got.tolist()} ({got.dtype}); "
          f"CPU {want.tolist()} ({want.dtype})")
    if got.dtype == want.dtype and torch.equal(got, want):
      print("NOT REPRODUCED: workaround holds: (x.float() / 100000).half() matches PyTorch on XLA")
      return NOT_REPRODUCED
    if bool((got == 0).all()):
      print(f"REPRODUCED: torch.div(float16 tensor, 100000) on XLA returned all zeros "
            f"{got.tolist()}, expected {want.tolist()} (even divided in float32, the workaround)")
      return REPRODUCED
    print(f"ERROR: the workaround's result {got.tolist()} differs from CPU but is not all zeros")
    return ERROR
  got_t = torch.div(xx, 100000)
  print("INFO: IR:\n" + torch_xla._XLAC._get_xla_tensors_text([got_t]).strip())
  got = got_t.cpu()
  print(f"INFO: torch.div(float16 tensor, 100000): XLA {got.tolist()} ({got.dtype}); "
        f"CPU {want.tolist()} ({want.dtype})")

  # Related cases, only reported.
  for name, fn in [("x / 100000", lambda t: t / 100000),
                   ("x * 100000 (with x = [0.25])", None),
                   ("workaround (x.float() / 100000).half()", lambda t: (t.float() / 100000).half()),
                   ("workaround x * (1 / 100000)", lambda t: t * (1 / 100000))]:
    if fn is None:
      s = torch.tensor([0.25], dtype=torch.float16)
      r, w = (s.to(device) * 100000).cpu(), s * 100000
    else:
      r, w = fn(xx).cpu(), fn(x)
    print(f"INFO: {name}: XLA {r.tolist()}, CPU {w.tolist()}, equal {torch.equal(r, w)}")

  if torch.equal(got, want):
    print("NOT REPRODUCED: dividing a float16 tensor by 100000 matches PyTorch on XLA")
    return NOT_REPRODUCED
  if bool((got == 0).all()):
    print(f"REPRODUCED: torch.div(float16 tensor, 100000) on XLA returned all zeros "
          f"{got.tolist()}, expected {want.tolist()}")
    return REPRODUCED
  print(f"ERROR: the XLA result {got.tolist()} differs from CPU but is not all zeros")
  return ERROR


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
