"""Batched SVD on XLA gives singular values without their batch dimensions, so
torch.linalg.pinv and the backward of torch.linalg.lstsq fail on batched inputs.

Upstream: https://github.com/pytorch/xla/issues/8953 (closed without a fix).

The IR node of `aten::svd` (`torch_xla/csrc/ops/svd.cpp`, `NodeOutputShape`) declares the
singular values as a 1-D tensor of min(M, N) elements, whatever batch dimensions the input has,
while the lowering (`xla::SVD`) computes them with the batch dimensions. For an input of shape
(2, 5, 3), `torch.linalg.svd(a).S` on an XLA device reports shape (3,) instead of (2, 3). Every
later op that uses S sees the wrong shape: a batched `torch.linalg.pinv`, and with it the
backward of `torch.linalg.lstsq`, fails with "Shapes are not compatible for broadcasting:
f32[3,3,2] vs. f32[1,3]"; in the upstream report the mismatch was only found when the graph ran
("Executable expected shape f32[3]{0} for argument 0 but got incompatible shape f32[8,3]{1,0}").

`--workaround` solves each batch element on its own (2-D inputs are not affected), checks the
gradient against PyTorch on the CPU, and must report "not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/batched-svd-singular-values-drop-batch-dim.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import re
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def lstsq_grad(a, b, per_element):
    a = a.detach().clone().requires_grad_()
    if per_element:
        sol = torch.stack([torch.linalg.lstsq(a[i], b[i]).solution for i in range(a.shape[0])])
    else:
        sol = torch.linalg.lstsq(a, b).solution
    sol.sum().backward()
    return a.grad


def main(workaround: bool) -> int:
    global torch
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    torch.manual_seed(0)
    a = torch.randn(2, 5, 3)
    b = torch.randn(2, 5, 1)
    expected = lstsq_grad(a, b, per_element=False)

    if workaround:
        got = lstsq_grad(a.to(device), b.to(device), per_element=True).cpu()
        diff = (got - expected).abs().max().item()
        print(f"INFO: per-element lstsq gradient, max difference from CPU {diff:.2e}")
        if diff > 1e-3:
            print("ERROR: the per-element workaround gave a wrong gradient")
            return ERROR
        print("NOT REPRODUCED: per-element lstsq backward works on XLA")
        return NOT_REPRODUCED

    s = torch.linalg.svd(a.to(device), full_matrices=False).S
    print(f"INFO: torch.linalg.svd of a (2, 5, 3) input: S has shape {tuple(s.shape)} (CPU: (2, 3))")
    try:
        got = lstsq_grad(a.to(device), b.to(device), per_element=False).cpu()
        print(f"INFO: batched lstsq backward ran, max difference from CPU {(got - expected).abs().max().item():.2e}")
        backward_error = None
    except RuntimeError as e:
        msg = str(e)
        # The broadcasting check of torch_xla (its message in 2.9, its bare check in 2.5 to 2.7),
        # of torch's lazy core (2.1, which prints only the two shapes), or the check at execution
        # seen in the upstream report.
        known = (
            "Shapes are not compatible for broadcasting",
            "Check failed: dim1 == dim2 || dim1 == 1 || dim2 == 1",
            "Executable expected shape",
        )
        if not any(k in msg for k in known) and not re.match(r"\(\d+(, \d+)*\) and \(\d+(, \d+)*\)", msg):
            raise
        backward_error = msg.splitlines()[0][:200]
        print(f"INFO: batched lstsq backward failed: {backward_error}")
    if tuple(s.shape) != (2, 3):
        print(
            f"REPRODUCED: batched torch.linalg.svd on XLA gave singular values of shape {tuple(s.shape)}, "
            f"expected (2, 3); lstsq backward: {backward_error or 'ran'}"
        )
        return REPRODUCED
    if backward_error:
        print(f"REPRODUCED: batched torch.linalg.lstsq backward failed: {backward_error}")
        return REPRODUCED
    print("NOT REPRODUCED: batched SVD keeps its batch dimension and lstsq backward works")
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
