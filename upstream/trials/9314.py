# User saw (Neuron team, reproduced on CPU with torch-xla 2.8 nightly): running the reduce-scatter
# multiprocess test on PJRT_DEVICE=CPU aborts with "Check failed: state Expected an array shape."
# (fine on 2.7). https://github.com/pytorch/xla/issues/9314
import os, sys
# Multi-device PJRT CPU collectives need the async CPU client (as torch_xla's own multi-CPU tests set);
# without it the replicas deadlock in the XLA rendezvous.
os.environ.setdefault("PJRT_CPU_ASYNC_CLIENT", "true")
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index):
    device = xm.xla_device()
    import torch_xla.runtime as xr
    ws = xr.global_runtime_device_count() if hasattr(xr, "global_runtime_device_count") else xm.xrt_world_size()
    shard = 2
    ok = []
    # 1) single tensor reduce_scatter
    try:
        x = torch.ones((4, shard * ws, 4)).to(device)
        r = xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0 / ws, 1, ws)
        xm.mark_step()
        ok.append(("single", tuple(r.cpu().shape)))
    except Exception as e:
        ok.append(("single", "ERR " + str(e)[:200]))
    # 2) list (coalesced) reduce_scatter
    try:
        xs = [torch.ones((shard * ws, 4)).to(device) * (i + 1) for i in range(3)]
        rs = xm.reduce_scatter(xm.REDUCE_SUM, xs, 1.0 / ws, 0, ws)
        xm.mark_step()
        ok.append(("list", [tuple(t.cpu().shape) for t in rs]))
    except Exception as e:
        ok.append(("list", "ERR " + str(e)[:200]))
    # 3) list with output= and pin_layout=False
    try:
        xs = [torch.ones((shard * ws, 4)).to(device) for _ in range(2)]
        outs = [torch.zeros((shard, 4)).to(device) for _ in range(2)]
        xm.reduce_scatter(xm.REDUCE_SUM, xs, 1.0, 0, ws, output=outs, pin_layout=False)
        xm.mark_step()
        ok.append(("list-out", [t.cpu().sum().item() for t in outs]))
    except Exception as e:
        ok.append(("list-out", "ERR " + str(e)[:200]))
    if index == 0:
        for o in ok:
            print(o, flush=True)


if __name__ == '__main__':
    # On PJRT CPU, xmp.spawn starts processes that each see every CPU device, so collectives
    # deadlock in the rendezvous; one thread per device in a single process is the CPU equivalent.
    from torch_xla._internal import pjrt
    mode = sys.argv[1] if len(sys.argv) > 1 else "spawn"
    if mode == "threads" and hasattr(pjrt, "spawn_threads"):
        pjrt.spawn_threads(_mp_fn)
    else:
        xmp.spawn(_mp_fn, args=())
