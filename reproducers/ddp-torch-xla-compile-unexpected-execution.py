"""A DistributedDataParallel model fails in its second torch_xla.compile(full_graph=True) step.

Upstream: pytorch/xla issue 9307 (open); the same failure stops the repository's own example
examples/data_parallel/train_resnet_ddp.py after step 0.

DDP rebuilds its gradient buckets once, in `_pre_forward` of the second iteration (after the
first backward has recorded the order in which gradients became ready):
`self.reducer._rebuild_buckets()`. The rebuild syncs the bucket layout through the process
group and reads it back on the host, which forces the pending XLA graph to execute. Inside a
function compiled with `torch_xla.compile(..., full_graph=True)` any execution is an error, so
step 1 raises `RuntimeError: ... Unexpected execution happens inside the compiled function,
exiting`, and PT_XLA_DEBUG's "Unexpected Execution Analysis" names `_pre_forward`
(torch/nn/parallel/distributed.py) as the Python frame that triggered it.

The script uses a one-process "xla" process group, a small Linear model wrapped like the example
(`gradient_as_bucket_view=True`, `broadcast_buffers=False`) and three compiled SGD steps.
`--workaround` first runs two uncompiled steps (so that the bucket rebuild happens outside the
compiled function) and then the three compiled steps.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import socket
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main(workaround: bool) -> int:
  import torch
  import torch.distributed as dist
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(torch_xla, "compile"):
    print("UNTESTABLE: this release has no torch_xla.compile")
    return UNTESTABLE
  # a free port for the one-process rendezvous: runs side by side (the bug and its workaround, other
  # releases) would otherwise meet on torch_xla's default port 12355
  os.environ.setdefault("MASTER_PORT", str(free_port()))
  dist.init_process_group("xla", init_method="xla://")
  device = xm.xla_device()
  torch.manual_seed(0)
  model = torch.nn.Linear(8, 2).to(device)
  ddp = torch.nn.parallel.DistributedDataParallel(
      model, broadcast_buffers=False, gradient_as_bucket_view=True)
  opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
  loss_fn = torch.nn.MSELoss()

  def step(x, y):
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()
    return loss

  def batch():
    return torch.randn(4, 8).to(device), torch.randn(4, 2).to(device)

  if workaround:
    for i in range(2):
      loss = step(*batch())
      torch_xla.sync()
      print(f"INFO: workaround: uncompiled warm-up step {i} loss {loss.item():.4f}")
  compiled = torch_xla.compile(step, full_graph=True, name="ddp_step")
  losses = []
  for i in range(3):
    try:
      loss = compiled(*batch())
      torch_xla.sync()
    except RuntimeError as e:
      if "Unexpected execution happens inside the compiled function" not in str(e):
        raise
      traceback.print_exc()
      first = str(e).strip().splitlines()[0]
      print(f"REPRODUCED: compiled DDP step {i} (after {len(losses)} good steps) raised "
            f"RuntimeError: {first}")
      return REPRODUCED
    losses.append(loss.item())
    print(f"INFO: compiled step {i} loss {losses[-1]:.4f}")
  dist.destroy_process_group()
  if not all(l == l for l in losses):  # NaN check
    print(f"ERROR: NaN loss: {losses}")
    return ERROR
  print(f"NOT REPRODUCED: three compiled DDP steps ran (losses {losses})")
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
