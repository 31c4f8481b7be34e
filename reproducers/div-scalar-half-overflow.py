"""aten::div.Scalar on a float16 XLA tensor fails when the scalar exceeds 65504.

Upstream: pytorch/xla#7081 ("Fix overflow for `div` arguments"; no separate
issue). The XLA div(Tensor, Scalar) kernel turned the scalar into a device
constant of the tensor's own type. A divisor larger than the float16 maximum
(65504) cannot be converted, and the call fails with
    RuntimeError: value cannot be converted to type at::Half without overflow
PyTorch computes such a division in float32 (the "op math" type of float16)
and converts only the result back.

`x / 100000` in Python reaches the div.Tensor kernel (the scalar is wrapped
as a tensor), so the reproducer uses the paths that reach div.Scalar: the op
itself, and the backward of `mean()` over more than 65504 float16 elements
(autograd divides the gradient by the element count with div.Scalar).

`--workaround` runs the record's workaround instead: the same reduction computed in float32,
`w.float().mean().backward()` on the float16 leaf of 70000 elements, and reports "not
reproduced" when it runs and leaves a finite float16 gradient.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
OVERFLOW = "cannot be converted to type at::Half without overflow"


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  if workaround:
    return check_workaround(torch, device)
  failures = []

  def attempt(name, fn):
    try:
      out = fn()
      print(f"INFO: {name} -> {out}")
    except RuntimeError as e:
      if OVERFLOW not in str(e):
        raise
      traceback.print_exc()
      failures.append(f"{name} raised RuntimeError: {str(e).splitlines()[0]}")

  x = torch.tensor([30000.0, -60000.0, 65000.0], dtype=torch.float16)
  want = torch.ops.aten.div.Scalar(x, 100000)
  print(f"INFO: CPU aten.div.Scalar(x, 100000) = {want.tolist()}")
  attempt("aten.div.Scalar(float16 tensor, 100000)",
          lambda: torch.ops.aten.div.Scalar(x.to(device), 100000).cpu().tolist())

  def mean_backward():
    w = torch.ones(70000, dtype=torch.float16, device=device, requires_grad=True)
    w.mean().backward()
    g = w.grad.cpu()
    return f"grad[0]={g[0].item()} (CPU: {1 / 70000:.3g} as float16 " \
           f"{torch.tensor(1 / 70000, dtype=torch.float16).item()})"

  attempt("mean().backward() of a float16 tensor with 70000 elements", mean_backward)

  # The workaround (reduce in float32) is only reported, not judged.
  try:
    w = torch.ones(70000, dtype=torch.float16, device=device, requires_grad=True)
    w.float().mean().backward()
    print(f"INFO: workaround w.float().mean().backward() works: grad[0]="
          f"{w.grad.cpu()[0].item()} ({w.grad.dtype})")
  except RuntimeError as e:
    print(f"INFO: workaround w.float().mean().backward() failed: {e}")

  if failures:
    for f in failures:
      print(f"REPRODUCED: {f}")
    return REPRODUCED
  print("NOT REPRODUCED: div.Scalar with a divisor above the float16 range runs on XLA")
  return NOT_REPRODUCED


def check_workaround(torch, device) -> int:
  """The workaround: reduce in float32, so no div.Scalar runs on a float16 tensor."""
  name = "workaround w.float().mean().backward() of a float16 tensor with 70000 elements"
  w = torch.ones(70000, dtype=torch.float16, device=device, requires_grad=True)
  try:
    w.float().mean().backward()
    g = w.grad.cpu()
  except RuntimeError as e:
    if OVERFLOW not in str(e):
      raise
    traceback.print_exc()
    print(f"REPRODUCED: {name} raised RuntimeError: {str(e).splitlines()[0]}")
    return REPRODUCED
  print(f"INFO: {name} -> grad dtype {w.grad.dtype}, grad[0]={g[0].item()} "
        f"(1/70000 = {1 / 70000:.3g})")
  if w.grad.dtype != torch.float16 or not bool(torch.isfinite(g).all()):
    print("ERROR: the workaround did not give a finite float16 gradient")
    return ERROR
  print("NOT REPRODUCED: workaround holds: the float32 reduction of a float16 tensor "
        "runs backward and gives a float16 gradient")
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
