"""An in-place view op (`unsqueeze_`, `squeeze_`, `transpose_`, ...) inside
`torch.compile(backend="openxla")` fails to compile: `Check failed: xtensor` /
`Expected XLA tensor. Got: XLAFloatType`.

Upstream: pytorch/xla#9193 (open). Workaround: use the out-of-place op (`y = y.unsqueeze(0)`).

From torch 2.5, AOTAutograd's `FunctionalTensor.__torch_dispatch__` replays every op tagged
`inplace_view` on the FunctionalTensor wrapper itself (under `no_dispatch()`) to update the
wrapper's metadata. For an XLA tensor the wrapper carries the XLA dispatch key, so the replay
lands in torch_xla's kernel with a tensor that is not an XLA tensor, and torch_xla's bridge
check fails (`aten_xla_bridge.cpp: Check failed: xtensor` up to 2.8, `Expected XLA tensor.
Got: XLAFloatType` in 2.9). Eager mode and `torch.compile` on torch_xla 2.1-2.4 are fine.

The script compiles `y = x * 2; y.unsqueeze_(0); return y + 1` with the openxla backend and
compares the result with eager. `--workaround` compiles the out-of-place version
(`y = y.unsqueeze(0)`).

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import re
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
BUG = re.compile(r"Check failed: xtensor|Expected XLA tensor\. Got: XLA\w*Type")


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  device = xm.xla_device()

  def inplace(x):
    y = x * 2
    y.unsqueeze_(0)
    return y + 1

  def out_of_place(x):
    y = x * 2
    y = y.unsqueeze(0)
    return y + 1

  fn = out_of_place if workaround else inplace
  x = torch.randn(3, 4, device=device)
  expected = inplace(x).cpu()  # eager mode works on every release
  compiled = torch.compile(fn, backend="openxla")
  try:
    got = compiled(x).cpu()
  except Exception as e:  # torch._dynamo.exc.BackendCompilerFailed wraps the RuntimeError
    m = BUG.search(str(e))
    if not m:
      raise
    traceback.print_exc()
    print(f"REPRODUCED: torch.compile(backend='openxla') of a function using unsqueeze_ failed: "
          f"{type(e).__name__}: {m.group(0)}")
    return REPRODUCED
  if got.shape != expected.shape or not torch.allclose(got, expected):
    print(f"ERROR: compiled result differs from eager: {tuple(got.shape)} vs {tuple(expected.shape)}")
    return ERROR
  what = "out-of-place unsqueeze (workaround)" if workaround else "unsqueeze_"
  print(f"NOT REPRODUCED: the compiled function with {what} matches eager, shape {tuple(got.shape)}")
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
