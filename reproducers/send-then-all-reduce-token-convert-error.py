"""Reproducer for issues/send-then-all-reduce-token-convert-error.yaml.

`xm.send` chains a real XLA token (`token[]`) into the per-device all-reduce token that
torch_xla keeps between collectives. The next `xm.all_reduce` lowers with
`BuildAllReduce`, which treats that token as a pseudo-token value and converts it to the
element type of the reduced tensors; XLA refuses to convert a token, so the graph fails to
lower ("Convert does not allow non-arrays, so cannot convert from token[] to BF16").

The bug is in lowering, so one process is enough: the script sets XLA_ALWAYS_ALLREDUCE=1 so
that `xm.all_reduce` builds the collective on a single device, calls `xm.send` and then
`xm.all_reduce`, and asks for the HLO of the result (nothing is executed, so no peer is
needed). The step runs in a child process because some releases abort on the error instead of
raising it.

`--workaround` clears the cached token after the send
(`torch_xla._XLAC._set_all_reduce_token(str(device), None)`) and reports "not reproduced"
when the all-reduce then lowers.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 python reproducers/send-then-all-reduce-token-convert-error.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/4102, filed 2022-10-18):
#   Error while lowering: (..., token[]) xla::cross_replica_sum, num_outputs=2, ...
#   XLA builder error: INVALID_ARGUMENT: Convert does not allow non-arrays, so cannot convert
#   from token[] to BF16.

import os
import signal
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125
MESSAGE = "cannot convert from token[] to BF16"

CHILD = r"""
import sys
import torch
import torch_xla
import torch_xla.core.xla_model as xm

if not hasattr(xm, "send"):
    print("CHILD-UNTESTABLE: xm.send does not exist")
    sys.exit(0)
device = xm.xla_device()
a = torch.ones(4, device=device, dtype=torch.bfloat16)
b = torch.full((4,), 2.0, device=device, dtype=torch.bfloat16)
sent = xm.send(a, 1)
if sys.argv[1] == "workaround":
    torch_xla._XLAC._set_all_reduce_token(str(device), None)
reduced = xm.all_reduce(xm.REDUCE_SUM, b)
try:
    hlo = torch_xla._XLAC._get_xla_tensors_hlo([reduced])
except RuntimeError as err:
    print("CHILD-RAISED: " + " | ".join(str(err).splitlines()[:3]))
    sys.exit(0)
print("CHILD-LOWERED: all-reduce in HLO: %s" % ("all-reduce" in hlo))
"""


def main(workaround: bool) -> int:
    try:
        import torch_xla  # noqa: F401
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    env = dict(os.environ, XLA_ALWAYS_ALLREDUCE="1")
    env.setdefault("PJRT_DEVICE", "CPU")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "workaround" if workaround else "plain"],
        env=env, capture_output=True, text=True, timeout=240)
    out = proc.stdout + proc.stderr
    for line in out.splitlines():
        if line.startswith("CHILD-") or MESSAGE in line:
            print(f"INFO: {line[:400]}")
    if "CHILD-UNTESTABLE" in out:
        return UNTESTABLE
    if MESSAGE in out:
        how = "raised" if proc.returncode == 0 else (
            f"crashed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
            else f"exited {proc.returncode}")
        print(f"XLAKB-REPRODUCED: all_reduce after xm.send fails to lower ({how}): "
              f"Convert does not allow non-arrays, so cannot convert from token[] to BF16")
        return REPRODUCED
    if "CHILD-LOWERED" in out and proc.returncode == 0:
        print("not reproduced: the all-reduce after xm.send lowers")
        return NOT_REPRODUCED
    print(out[-3000:])
    print(f"error: child exited {proc.returncode} without the bug's message")
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main("--workaround" in sys.argv[1:]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
