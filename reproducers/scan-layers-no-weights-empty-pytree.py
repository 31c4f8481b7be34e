"""scan_layers over layers that own no parameters or buffers raises "`xs` ({}, {}) is an empty PyTree".

Upstream: pytorch/xla#8753 (also #8748); a fix, pytorch/xla#9758, is not merged.

`scan_layers(layers, input)` promises the result of `nn.Sequential(*layers)(input)`. It
stacks each layer's parameters and buffers into a pair of dicts and hands that pair to
`scan` as `xs`, the sequence to iterate over. A layer that only computes (an activation,
a scaling by a constant) has neither, so `xs` is `({}, {})`; `scan` finds no tensor in it
to take the number of iterations from and raises `ValueError: \`xs\` ({}, {}) is an empty
PyTree.` although the user never passed an `xs`.

`--workaround` gives every layer a one-element non-persistent buffer (`register_buffer`) so `xs` is not
empty, and must report "not reproduced" with the same output as `nn.Sequential`.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import torch
  import torch.nn as nn
  import torch_xla.core.xla_model as xm

  print("torch", torch.__version__)
  try:
    from torch_xla.experimental.scan_layers import scan_layers
  except ImportError as e:  # scan_layers first shipped in 2.6.0
    print(f"UNTESTABLE: torch_xla.experimental.scan_layers is missing ({e})")
    return UNTESTABLE

  class Compute(nn.Module):
    """A layer with no weights: it only computes."""

    def __init__(self):
      super().__init__()
      if workaround:
        self.register_buffer("scan_dummy", torch.zeros(1), persistent=False)

    def forward(self, x):
      return torch.sin(x) * 2

  device = xm.xla_device()
  torch.manual_seed(0)
  layers = nn.ModuleList([Compute() for _ in range(3)]).to(device)
  x = torch.randn(4, 4, device=device)
  want = nn.Sequential(*layers)(x).cpu()
  try:
    got = scan_layers(layers, x).cpu()
  except ValueError as e:
    if "is an empty PyTree" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: scan_layers over layers with no weights raised ValueError: {e}")
      return REPRODUCED
    raise
  if not torch.allclose(got, want, atol=1e-5):
    print(f"ERROR: scan_layers differs from nn.Sequential by {(got - want).abs().max():.3g}")
    return ERROR
  how = "with a dummy buffer per layer" if workaround else "with no weights"
  print(f"NOT REPRODUCED: scan_layers over layers {how} matches nn.Sequential")
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
