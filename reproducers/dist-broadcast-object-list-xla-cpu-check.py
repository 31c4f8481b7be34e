"""dist.broadcast_object_list on the "xla" process group fails a device check in torch_xla.

Upstream: pytorch/xla issue 5492 (open).

`torch.distributed.broadcast_object_list` pickles the objects into tensors placed on the device
that `_get_object_coll_device(group)` names. That helper reads `group._device_types`; the
ProcessGroupXla object that torch_xla's "xla" backend returns is a bare Python subclass of
ProcessGroup with no device backend registered on it, so the list is empty and PyTorch picks
"cpu". `ProcessGroupXla.broadcast` then hands the CPU tensor to `xm.collective_broadcast`, which
builds XLA data for it on the CPU tensor's device and fails
`Check failed: device.type() == at::kXLA (cpu vs. xla)` in torch_xla/csrc/aten_xla_bridge.cpp.

The script runs a one-process "xla" group (world size 1): broadcasting from rank 0 must leave the
list unchanged. `--workaround` pickles the objects itself and broadcasts the bytes (and their
length) in XLA tensors with `dist.broadcast`, which the xla group handles.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import socket
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def broadcast_objects_as_xla_tensors(objs, src):
  """The workaround: pickle on the host, broadcast length and bytes as XLA tensors."""
  import pickle

  import torch
  import torch.distributed as dist
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  payload = pickle.dumps(objs) if dist.get_rank() == src else b""
  size = torch.tensor([len(payload)], dtype=torch.int64, device=device)
  dist.broadcast(size, src=src)
  n = int(size.cpu().item())
  buf = torch.zeros(n, dtype=torch.uint8)
  if dist.get_rank() == src:
    buf = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
  data = buf.to(device)
  dist.broadcast(data, src=src)
  return pickle.loads(data.cpu().numpy().tobytes())


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
  # a free port for the one-process rendezvous: runs side by side (the bug and its workaround, other
  # releases) would otherwise meet on torch_xla's default port 12355
  os.environ.setdefault("MASTER_PORT", str(free_port()))
  dist.init_process_group("xla", init_method="xla://")
  xm.xla_device()
  sent = [{"run": "2023-08-24", "lr": 0.1}, 42, "hello"]
  objs = list(sent)
  if workaround:
    objs = broadcast_objects_as_xla_tensors(objs, src=0)
    dist.destroy_process_group()
    if objs != sent:
      print(f"ERROR: the workaround returned {objs!r}, expected {sent!r}")
      return ERROR
    print(f"NOT REPRODUCED: objects pickled into XLA tensors and sent with dist.broadcast "
          f"arrived as {objs!r}")
    return NOT_REPRODUCED
  try:
    dist.broadcast_object_list(objs, src=0)
  except RuntimeError as e:
    if "device.type() == at::kXLA" not in str(e):
      raise
    traceback.print_exc()
    first = str(e).strip().splitlines()[0]
    print(f"REPRODUCED: dist.broadcast_object_list on the xla process group raised "
          f"RuntimeError: {first}")
    return REPRODUCED
  dist.destroy_process_group()
  if objs != sent:
    print(f"ERROR: broadcast_object_list returned {objs!r}, expected {sent!r}")
    return ERROR
  print(f"NOT REPRODUCED: dist.broadcast_object_list over the xla process group returned "
        f"{objs!r}")
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
