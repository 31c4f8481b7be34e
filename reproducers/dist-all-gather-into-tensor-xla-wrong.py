"""torch.distributed.all_gather_into_tensor on the "xla" backend fails or writes the wrong data.

Upstream: fixed by pytorch/xla PR 9332 ("fix all_gather_into_tensor test and logic"); the
method came with PR 7860 ("Support `dist.all_gather` related collective ops").

From torch_xla 2.5 to 2.7 `ProcessGroupXla._allgather_base` (what
`dist.all_gather_into_tensor(output, input)` calls) forwards its two tensors to
`ProcessGroupXla.allgather`, which expects a *list* of output lists and a *list* of inputs.
Iterating the tensors instead walks their rows, gathers one row at a time and copies it into
single elements of an output row, so:
  - the concatenated form (output = world_size * input.shape[0] rows) raises
    `RuntimeError: output with shape [] doesn't match the broadcast shape [3]`;
  - the stacked form (output shape (world_size, *input.shape)) returns without error but only
    the first row of the result holds data; the rest is left as it was.
The script runs a single-process "xla" process group (world size 1, so the right answer is the
input itself) and checks both forms. `--workaround` uses `xm.all_gather(input, dim=0)` and
copies the result into the output tensor; it reports "not reproduced" when both forms then hold
the gathered input, and an error (exit 2) otherwise, since it never calls the faulty method.

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
  import torch_xla.distributed.xla_backend as xb

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if "_allgather_base" not in xb.ProcessGroupXla.__dict__:
    print("UNTESTABLE: this release's ProcessGroupXla has no _allgather_base "
          "(dist.all_gather_into_tensor is not implemented by the xla backend)")
    return UNTESTABLE
  # a free port for the one-process rendezvous: runs side by side (the bug and its workaround, other
  # releases) would otherwise meet on torch_xla's default port 12355
  os.environ.setdefault("MASTER_PORT", str(free_port()))
  dist.init_process_group("xla", init_method="xla://")
  world = dist.get_world_size()
  device = xm.xla_device()
  x_cpu = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 1
  x = x_cpu.to(device)
  expected_concat = torch.cat([x_cpu] * world, dim=0)
  expected_stack = torch.stack([x_cpu] * world, dim=0)
  print(f"INFO: world_size={world}, input shape {tuple(x.shape)}")

  def gather(out):
    if workaround:
      out.copy_(xm.all_gather(x, dim=0).reshape(out.shape))
    else:
      dist.all_gather_into_tensor(out, x)
    return out.cpu()

  problems = []
  concat = torch.zeros(2 * world, 3, device=device)
  try:
    got = gather(concat)
    if not torch.equal(got, expected_concat):
      problems.append(f"concatenated form returned wrong data: {got.tolist()} "
                      f"(expected {expected_concat.tolist()})")
  except RuntimeError as e:
    if "doesn't match the broadcast shape" not in str(e):
      raise
    traceback.print_exc()
    problems.append(f"concatenated form raised RuntimeError: {e}")
  stack = torch.zeros(world, 2, 3, device=device)
  got = gather(stack)
  if not torch.equal(got, expected_stack):
    problems.append(f"stacked form returned wrong data: {got.tolist()} "
                    f"(expected {expected_stack.tolist()})")
  dist.destroy_process_group()
  if problems and workaround:
    # The workaround does not call all_gather_into_tensor, so a failure here is not the bug.
    for p in problems:
      print(f"INFO: workaround: {p}")
    print(f"ERROR: the workaround xm.all_gather(input, dim=0) + copy_ did not give the "
          f"gathered input: {problems[0]}")
    return ERROR
  if problems:
    for p in problems:
      print(f"BUG: {p}")
    print(f"REPRODUCED: dist.all_gather_into_tensor on the xla backend: {problems[0]}")
    return REPRODUCED
  print("NOT REPRODUCED: both output layouts of all_gather_into_tensor hold the gathered input")
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
