"""Reproducer for issues/batchnorm-running-var-biased-variance.yaml.

In train mode PyTorch normalises a batch with its biased variance (divide by n)
but blends the unbiased variance (divide by n - 1) into running_var. On XLA the
running_var update uses the biased variance, so running_var (and every eval-mode
output that uses it) drifts from what CPU/CUDA give for the same data.

Two samples, one feature, momentum=1.0: the batch is [1, 3], mean 2, biased
variance 1, unbiased variance 2, so running_var must become 2.0 after one step.

Run: PJRT_DEVICE=CPU python reproducers/batchnorm-running-var-biased-variance.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main() -> int:
    try:
        import torch
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    device = xm.xla_device()
    x = torch.tensor([[1.0], [3.0]])
    cpu_bn = torch.nn.BatchNorm1d(1, momentum=1.0)
    cpu_bn(x)
    want = cpu_bn.running_var.item()
    xla_bn = torch.nn.BatchNorm1d(1, momentum=1.0).to(device)
    xla_bn(x.to(device))
    got = xla_bn.running_var.cpu().item()
    mean = xla_bn.running_mean.cpu().item()
    print(f"cpu running_var = {want}, xla running_var = {got} (xla running_mean = {mean})")
    if abs(want - 2.0) > 1e-6:
        print(f"untestable: CPU running_var is {want}, not the unbiased 2.0 this test expects")
        return UNTESTABLE
    if abs(got - 1.0) < 1e-5:
        print(
            "XLAKB-REPRODUCED: BatchNorm running_var on XLA took the biased batch variance "
            f"({got}) instead of the unbiased one ({want})"
        )
        return REPRODUCED
    if abs(got - want) < 1e-5:
        print("not reproduced: running_var matches CPU")
        return NOT_REPRODUCED
    print(f"error: unexpected running_var {got}")
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
