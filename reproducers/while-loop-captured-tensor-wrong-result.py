"""A while_loop whose body reads a tensor captured from outside the loop returns a wrong result.

Upstream: https://github.com/pytorch/xla/issues/7839 (open).

torch's `while_loop` hands tensors that the body captures from outside to torch_xla's XLA
lowering as `additional_inputs`. `torch_xla/experimental/fori_loop.py` builds the XLA `While`
tuple as (iteration value, additional inputs, remaining carried values), but traces the
condition with the carried values first and the additional inputs last. The condition's second
parameter is therefore bound to the captured tensor instead of the second carried value, so a
condition such as `limit[0] >= i[0]` compares against the captured tensor and the loop stops
after one iteration: 0 -> 3 instead of 0 -> 3 -> ... -> 12.

The loop runs in a child process, so that an abort from a fatal check is reported too.
`--workaround` runs the same condition and body as a Python loop that reads the condition
back on the host, and must report "not reproduced". (Carrying the tensor through the loop
instead of capturing it is no workaround: on 2.5.1 the loop then returns 11, see the record.)

Run: PJRT_DEVICE=CPU python reproducers/while-loop-captured-tensor-wrong-result.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import os
import signal
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
SHAPE_CHECK = "must all have the same shape"

CHILD = r"""
import sys
import torch
import torch_xla.core.xla_model as xm
try:
    import torch_xla.experimental.fori_loop  # registers the XLA lowering of while_loop
    from torch._higher_order_ops.while_loop import while_loop
except ImportError as err:
    print(f"UNTESTABLE: no XLA while_loop here ({err})")
    sys.exit(125)

workaround = sys.argv[1:] == ["--workaround"]
device = xm.xla_device()
step = torch.tensor([2], dtype=torch.int32, device=device)
i0 = torch.tensor([0], dtype=torch.int32, device=device)
limit = torch.tensor([10], dtype=torch.int32, device=device)

def cond_fn(i, limit):
    return limit[0] >= i[0]

def body_fn(i, limit):
    return (i + 1 + step, limit.clone())  # `step` is captured, not carried

if workaround:
    # A Python loop that reads the condition back on the host each iteration.
    out = (i0, limit)
    while bool(cond_fn(*out).cpu()):
        out = body_fn(*out)
else:
    out = while_loop(cond_fn, body_fn, (i0, limit))
print(f"RESULT {int(out[0].cpu()[0])}", flush=True)
"""


def main(workaround: bool) -> int:
    env = dict(os.environ, PJRT_DEVICE=os.environ.get("PJRT_DEVICE", "CPU"))
    args = [sys.executable, "-c", CHILD] + (["--workaround"] if workaround else [])
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=240)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr[-4000:])
    if proc.returncode == UNTESTABLE:
        return UNTESTABLE
    if SHAPE_CHECK in proc.stderr:
        how = "raised" if proc.returncode > 0 else f"died of {signal.Signals(-proc.returncode).name}"
        print(f"REPRODUCED: while_loop with a captured tensor {how}: XLA While check '{SHAPE_CHECK}'")
        return REPRODUCED
    if proc.returncode != 0:
        print(f"ERROR: the child exited with {proc.returncode} (not the bug under test)")
        return ERROR
    result = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    got = int(result[-1].split()[1])
    # 0 -> 3 -> 6 -> 9 -> 12: the loop stops once 12 > 10.
    if got != 12:
        print(f"REPRODUCED: while_loop with a captured tensor returned {got}, expected 12")
        return REPRODUCED
    print("NOT REPRODUCED: while_loop returned 12 as expected")
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
