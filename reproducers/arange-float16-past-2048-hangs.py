"""Reproducer for issues/arange-float16-past-2048-hangs.yaml.

Run: PJRT_DEVICE=CPU python reproducers/arange-float16-past-2048-hangs.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/6089, filed 2023-12-11):
# torch.arange(3000, device=xla, dtype=torch.float16) never returns; any end of 2050 or more loops forever.
# Past 2048, float16 steps by 2, so adding 1 to 2048 gives 2048 again. The call runs in a child process
# that is killed after CHILD_TIMEOUT seconds (the loop also keeps allocating memory, about 60 MB/s).
# --workaround: build the range in float32 and cast it to float16.

import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_TIMEOUT = 30  # a working release returns in a few seconds

CHILD = r"""
import sys, torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
if sys.argv[1] == "workaround":
    t = torch.arange(3000, device=device).to(torch.float16)
else:
    t = torch.arange(3000, device=device, dtype=torch.float16)
got = t.cpu()
ok = torch.equal(got, torch.arange(3000, dtype=torch.float16))
print("CHILD_DONE", tuple(got.shape), got.dtype, "equal" if ok else "different", flush=True)
"""


def main() -> int:
    try:
        import torch
        import torch_xla
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    mode = "workaround" if "--workaround" in sys.argv[1:] else "bug"
    try:
        p = subprocess.run(
            [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=CHILD_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        print(
            "XLAKB-REPRODUCED: torch.arange(3000, dtype=torch.float16) on the XLA device did not return "
            f"within {CHILD_TIMEOUT} s (endless loop past 2048)"
        )
        return REPRODUCED
    done = [ln for ln in p.stdout.splitlines() if ln.startswith("CHILD_DONE")]
    if p.returncode == 0 and done:
        print(f"not reproduced: {done[-1]}")
        return NOT_REPRODUCED
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr[-2000:])
    print(f"ERROR: the child exited with {p.returncode} without finishing, not the bug under test")
    return ERROR


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
