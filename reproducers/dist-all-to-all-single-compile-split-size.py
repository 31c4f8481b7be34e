"""dist.all_to_all_single under torch.compile rejects equal splits of more than one row.

Upstream: pytorch/xla issue 9068; fixed by PR 9100 ("change all_to_all check to allow for
split sizes > 1"), first in 2.8.0.

When dynamo traces `torch.distributed.all_to_all_single(output, input)` it emits the functional
collective `_c10d_functional.all_to_all_single(input, output_split_sizes, input_split_sizes,
group)` with the equal split sizes it computed itself (input.size(0) / world size each).
torch_xla's kernel for that op (`all_to_all_single` in torch_xla/csrc/cross_replica_reduces.cpp)
refused any split size other than 1 with
`RuntimeError: torch_xla does not support arbitrary split sizes for all_to_all`, so every input
with more than one row per rank failed, although XLA's all-to-all handles equal splits.

The script runs a one-process "xla" process group (world size 1) and an input of 2 rows: one
split of size 2; the right answer is the input itself. `--workaround` calls the collective
eagerly (outside torch.compile), which goes through ProcessGroupXla.alltoall_base and
xm.all_to_all instead of the functional kernel.

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
  try:
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key(
        "_c10d_functional::all_to_all_single", "XLA")
  except RuntimeError as e:
    has_kernel = False
    print(f"INFO: {e}")
  if not has_kernel:
    print("UNTESTABLE: this release has no XLA kernel for the functional collective "
          "_c10d_functional::all_to_all_single (dist.all_to_all_single cannot be compiled)")
    return UNTESTABLE

  # a free port for the one-process rendezvous: runs side by side (the bug and its workaround, other
  # releases) would otherwise meet on torch_xla's default port 12355
  os.environ.setdefault("MASTER_PORT", str(free_port()))
  dist.init_process_group("xla", init_method="xla://")
  world = dist.get_world_size()
  device = xm.xla_device()
  expected = torch.arange(2 * world, dtype=torch.float32)
  inp = expected.to(device)
  out = torch.zeros_like(inp)
  print(f"INFO: world_size={world}, input of {inp.shape[0]} rows "
        f"(split size {inp.shape[0] // world})")

  def exchange(o, i):
    dist.all_to_all_single(o, i)
    return o

  if workaround:
    res = exchange(out, inp)
  else:
    try:
      res = torch.compile(exchange, backend="openxla")(out, inp)
    except RuntimeError as e:
      if "arbitrary split sizes for all_to_all" not in str(e):
        raise
      traceback.print_exc()
      first = str(e).strip().splitlines()[0]
      print(f"REPRODUCED: compiled dist.all_to_all_single with equal splits of 2 rows raised "
            f"RuntimeError: {first}")
      return REPRODUCED
  xm.mark_step()
  got = res.cpu()
  dist.destroy_process_group()
  if not torch.equal(got, expected):
    print(f"ERROR: all_to_all_single returned {got.tolist()}, expected {expected.tolist()}")
    return ERROR
  how = "eagerly" if workaround else "under torch.compile"
  print(f"NOT REPRODUCED: dist.all_to_all_single {how} returned {got.tolist()}")
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
