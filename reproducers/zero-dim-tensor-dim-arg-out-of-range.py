"""Reproducer for issues/zero-dim-tensor-dim-arg-out-of-range.yaml.

PyTorch treats a 0-d tensor as having one addressable dimension: `dim=0` and `dim=-1` are valid,
so `torch.sum(torch.tensor(2.0), 0)` or `torch.softmax(t, 0)` work on the CPU. On an XLA device
the same calls fail while the IR node is built, because torch_xla canonicalizes the dimension
against rank 0 with `torch::lazy::GetCanonicalDimensionIndex`, whose allowed range is then
empty ([0, -1]).

The script runs a few such calls (sum, softmax, cumsum, argmax, index_copy_ of a 0-d source
into a 0-d target) on the CPU and on the XLA device and reports the bug when an XLA call raises
that range error while the CPU call succeeds.

`--workaround` runs the same calls on a one-element 1-d view (`t.reshape(1)`, op with dim 0,
then `.reshape(())`) and reports "not reproduced" when every result equals the CPU's.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python reproducers/zero-dim-tensor-dim-arg-out-of-range.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/3061, filed 2021-07-29):
#   Check failed: min_shape_dim <= dim && dim <= max_shape_dim
# (releases of 2.x print "Value out of range (expected to be in range of [0, -1], but got 0)").

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125
MESSAGE = "expected to be in range of [0, -1]"


def cases(torch):
    def index_copy(t, dev):
        target = torch.tensor(0.0, device=dev)
        return target.index_copy_(0, torch.tensor([0], device=dev), t)

    return [
        ("torch.sum(t, 0)", lambda t, dev: torch.sum(t, 0)),
        ("torch.softmax(t, 0)", lambda t, dev: torch.softmax(t, 0)),
        ("torch.cumsum(t, 0)", lambda t, dev: torch.cumsum(t, 0)),
        ("torch.argmax(t, -1)", lambda t, dev: torch.argmax(t, -1)),
        ("0-d target.index_copy_(0, idx, t)", index_copy),
    ]


def main(workaround: bool) -> int:
    try:
        import torch
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    device = xm.xla_device()
    t_cpu = torch.tensor(2.0)
    t_xla = t_cpu.to(device)
    failed = []
    for name, fn in cases(torch):
        want = fn(t_cpu, "cpu")
        if workaround:
            name = f"{name} on t.reshape(1)"
            if "index_copy_" in name:
                target = torch.tensor([0.0], device=device)
                got = target.index_copy_(0, torch.tensor([0], device=device), t_xla.reshape(1))
            else:
                got = fn(t_xla.reshape(1), device)
            got = got.reshape(()).cpu()
            same = torch.equal(got, want)
            print(f"INFO: {name}: XLA {got.item()}, CPU {want.item()}, equal {same}")
            if not same:
                failed.append(name)
            continue
        try:
            got = fn(t_xla, device).cpu()
        except (RuntimeError, IndexError) as err:
            text = str(err).splitlines()[0]
            if MESSAGE in text or "min_shape_dim <= dim" in text:
                print(f"INFO: {name} on a 0-d XLA tensor raised: {text} (CPU gives {want.item()})")
                failed.append(f"{name}: {text}")
                continue
            raise
        print(f"INFO: {name}: XLA {got.item()}, CPU {want.item()}")
    if failed and not workaround:
        print(f"XLAKB-REPRODUCED: {len(failed)} dim-taking op(s) reject dim 0 of a 0-d XLA tensor; "
              f"first: {failed[0]}")
        return REPRODUCED
    if failed:
        print(f"workaround does not hold for: {failed}")
        return REPRODUCED
    print("not reproduced: every call matches the CPU")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main("--workaround" in sys.argv[1:]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
