# Issue 9472: with functionalization on (the default), a matmul of DTensor-distributed (XLA placement) tensors
# failed with "RuntimeError: !at::functionalization::impl::isFunctionalTensor(t)" inside XLAShardedTensor
# __torch_dispatch__.  Written after the repository test the report names (test_dtensor_integration3.py).
# https://github.com/pytorch/xla/issues/9472
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
xr.use_spmd()
try:
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
except ImportError as e:
    print("UNTESTABLE:", e); raise SystemExit

w1 = torch.nn.Linear(32, 16, bias=False).to("xla").weight
w2 = torch.nn.Linear(16, 8, bias=False).to("xla").weight
x = torch.rand(2, 32).to("xla")
expected = (torch.relu(x @ w1.T) @ w2.T).cpu()
try:
    mesh = init_device_mesh(device_type="xla", mesh_shape=(xr.global_runtime_device_count(),))
    xs_ = distribute_tensor(x, mesh, placements=[Replicate()])
    w1s = distribute_tensor(w1, mesh, placements=[Shard(0)])
    w2s = distribute_tensor(w2, mesh, placements=[Shard(1)])
    out = torch.matmul(torch.relu(torch.matmul(xs_, w1s.T)), w2s.T)
    xm.mark_step()
    got = out.global_tensor.cpu() if hasattr(out, "global_tensor") else out.cpu()
    print("ok, matches unsharded:", torch.allclose(got, expected.detach(), atol=1e-5))
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
