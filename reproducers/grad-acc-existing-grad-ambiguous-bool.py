"""gradient_accumulation() fails when the parameters already have gradients.

Upstream: fixed by pytorch/xla PR 8658 ("Fix the retention for existing gradients in the
Grad Acc API").

`torch_xla.experimental.gradient_accumulation.gradient_accumulation` runs the accumulation
loop as one XLA While op. Before building the loop it picks the initial gradient of every
parameter with `if param.grad:`, i.e. the truth value of the gradient tensor. When a
parameter already has a gradient with more than one element (the normal case after
`optimizer.zero_grad(set_to_none=False)`, or when gradients are kept between calls), this
raises `RuntimeError: Boolean value of Tensor with more than one value is ambiguous`.

The script trains two steps of a small Linear model with the API, zeroing the gradients with
`set_to_none=False` in between; the second call fails on affected releases.

`--workaround` zeroes the gradients with `set_to_none=True` instead (the default of
`zero_grad()`), so every call starts without gradients, and must report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  try:
    from torch_xla.experimental.gradient_accumulation import gradient_accumulation
  except ImportError as e:  # the API first ships in 2.6
    print(f"UNTESTABLE: torch_xla.experimental.gradient_accumulation is missing ({e})")
    return UNTESTABLE

  torch.manual_seed(0)
  dev = xm.xla_device()
  model = nn.Linear(16, 4).to(dev)
  loss_fn = nn.MSELoss()
  opt = torch.optim.SGD(model.parameters(), lr=0.01)

  def train_step(x, y):
    return loss_fn(model(x), y)

  steps, batch = 3, 8
  data = torch.randn(steps, batch, 16).to(dev)
  target = torch.randn(steps, batch, 4).to(dev)
  losses = []
  for step in range(2):
    try:
      loss = gradient_accumulation(train_step, (data, target), model)
    except RuntimeError as e:
      if "Boolean value of Tensor with more than one" in str(e):
        traceback.print_exc()
        print(f"REPRODUCED: gradient_accumulation() call {step + 1}, parameters already "
              f"have gradients (zero_grad(set_to_none={workaround})): RuntimeError: {e}")
        return REPRODUCED
      raise
    if isinstance(loss, (tuple, list)):
      loss = loss[0]
    opt.step()
    # set_to_none=False keeps zero-filled gradient tensors; True drops them (workaround)
    opt.zero_grad(set_to_none=workaround)
    xm.mark_step()
    losses.append(float(loss.item()))
  print(f"INFO: accumulated losses {losses}")
  print("NOT REPRODUCED: gradient_accumulation() runs twice "
        f"(zero_grad(set_to_none={workaround}) between the calls)")
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
