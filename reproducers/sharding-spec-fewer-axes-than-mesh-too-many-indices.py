"""Reproducer for issues/sharding-spec-fewer-axes-than-mesh-too-many-indices.yaml.

Under SPMD, a tensor whose partition spec names fewer axes than the mesh has (a 1-D
tensor sharded on the first axis of a 2-D mesh) is partially replicated. `mark_sharding`
handles it; `xm.send_cpu_data_to_device(..., xs.ShardingSpec(mesh, spec))` does not:
ShardingSpec marks it TILED with the full mesh as tile assignment, and ShardTensor then
slices the 1-D host tensor with two indices ("too many indices for tensor of dimension 1").

`--workaround` names every mesh axis instead, folding the size-1 'model' axis into a tuple
with 'fsdp' (`(('fsdp', 'model'),)`), which gives the same layout; it must exit 0.

Upstream: pytorch/xla#8606, pytorch/xla#8012.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python reproducers/sharding-spec-fewer-axes-than-mesh-too-many-indices.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    try:
        import numpy as np
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE
    try:
        import torch_xla.distributed.spmd as xs
    except ImportError:
        try:
            import torch_xla.experimental.xla_sharding as xs  # 2.1 spelling
        except ImportError as err:
            print(f"untestable: no SPMD module ({err})")
            return UNTESTABLE
    if not hasattr(xs, "ShardingSpec") or not hasattr(xr, "use_spmd"):
        print("untestable: no xs.ShardingSpec / xr.use_spmd")
        return UNTESTABLE

    xr.use_spmd()
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    device = xm.xla_device()

    # Control: mark_sharding accepts the same spec for the same shape.
    marked = torch.arange(128, dtype=torch.int64).to(device)
    xs.mark_sharding(marked, mesh, ("fsdp",))
    print("mark_sharding:", torch_xla._XLAC._get_xla_sharding_spec(marked))

    host = torch.arange(128, dtype=torch.int64)
    spec = (("fsdp", "model"),) if workaround else ("fsdp",)
    try:
        out = xm.send_cpu_data_to_device(host, device, xs.ShardingSpec(mesh, spec))
    except (RuntimeError, IndexError) as err:
        if "too many indices for tensor of dimension" in str(err):
            print(f"XLAKB-REPRODUCED: send_cpu_data_to_device with ShardingSpec(mesh, ('fsdp',)) "
                  f"on a 1-D tensor over a 2-D mesh: {type(err).__name__}: {str(err).splitlines()[0]}")
            return REPRODUCED
        raise
    t = out[0] if isinstance(out, (list, tuple)) else out
    total = t.cpu().sum().item()
    if total != host.sum().item():
        print(f"error: the sharded copy sums to {total}, expected {host.sum().item()}")
        return 2
    print(f"not reproduced (spec {spec}): sharding {torch_xla._XLAC._get_xla_sharding_spec(t)!r}, sum {total}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
