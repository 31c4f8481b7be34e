"""Reproducer for issues/batchnorm-eval-backward-empty-save-mean-error.yaml.

A BatchNorm layer in eval mode normalises with its running statistics, and its
backward (to the input or to the affine weight) is defined: CPU/CUDA compute it
from running_mean/running_var. On XLA the forward in eval mode returns empty
save_mean/save_invstd, and torch_xla's native_batch_norm_backward feeds those
empty tensors to XLA's BatchNormGrad instead of the running statistics, which
XLA rejects ("The size of mean should be ... feature count, but the size of
offset factor is 0"). Some releases raise a RuntimeError, older ones abort the
process from the shape check, so the step runs in a forked child.

Run: PJRT_DEVICE=CPU python reproducers/batchnorm-eval-backward-empty-save-mean-error.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# Report linked for context: https://github.com/pytorch/xla/issues/827 (2019,
# native_batch_norm_backward and the running statistics; that crash was fixed).

import os
import re
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3
CHILD_TIMEOUT = 150
BUG = re.compile(r"size of mean should be .{0,40}feature count,\s*but the size of offset factor is 0")


def child() -> int:
    import torch
    import torch_xla.core.xla_model as xm

    device = xm.xla_device()
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, 5)
    ref = torch.nn.BatchNorm2d(3).eval()
    xc = x.clone().requires_grad_()
    ref(xc).sum().backward()
    want = xc.grad.sum().item()
    print(f"INFO: CPU eval-mode BatchNorm2d backward: sum(dx) = {want:.6f}", flush=True)

    bn = torch.nn.BatchNorm2d(3).to(device).eval()
    xx = x.to(device).requires_grad_()
    try:
        bn(xx).sum().backward()
        got = xx.grad.cpu().sum().item()
    except RuntimeError as err:
        if BUG.search(str(err)):
            print(f"CHILD_BUG: {str(err).splitlines()[0]}", flush=True)
            return CHILD_BUG
        raise
    print(f"CHILD_OK: XLA eval-mode BatchNorm2d backward: sum(dx) = {got:.6f}", flush=True)
    return NOT_REPRODUCED


def run_forked(fn, *args, timeout: float):
    """Run fn(*args) in a child forked from this process once torch and torch_xla are imported (the runtime
    not yet started, as a fresh process has it): a crash (abort, segfault) ends only the child, and the
    child does not pay the import again. Returns (exit code, or -signal; None past `timeout` seconds, the
    child killed) and the child's stdout and stderr as one text, as subprocess.run(stderr=STDOUT) would."""
    import select
    import time
    import torch  # noqa: F401  imported once, before the fork
    import torch_xla  # noqa: F401
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its output into the pipe, its exit as an interpreter's (atexit handlers run)
        code = ERROR
        try:
            os.close(r)
            os.dup2(w, 1)
            os.dup2(w, 2)
            os.close(w)
            import faulthandler
            faulthandler.enable()
            code = fn(*args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else ERROR
        except BaseException:
            traceback.print_exc()
        finally:
            try:
                import atexit
                atexit._run_exitfuncs()
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else ERROR)
    os.close(w)
    chunks, deadline, killed = [], time.monotonic() + timeout, False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        if select.select([r], [], [], left)[0]:
            data = os.read(r, 65536)
            if not data:
                break
            chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    out = b"".join(chunks).decode("utf-8", "replace")
    if killed:
        return None, out
    return (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)), out


def parent() -> int:
    try:
        import torch  # noqa: F401
        import torch_xla  # noqa: F401
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE
    rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
    sys.stdout.write(out)
    if rc is None:
        print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
        return ERROR
    lines = out.splitlines()
    hits = [line.strip() for line in lines if BUG.search(line)]
    if rc == CHILD_BUG and hits:
        print(f"XLAKB-REPRODUCED: backward through an eval-mode BatchNorm raised: {hits[-1][:300]}")
        return REPRODUCED
    if rc in (-signal.SIGABRT, 128 + signal.SIGABRT) and hits:
        print(f"XLAKB-REPRODUCED: backward through an eval-mode BatchNorm aborted the process (exit {rc}): {hits[0][:300]}")
        return REPRODUCED
    if rc == 0 and any(line.startswith("CHILD_OK") for line in lines):
        print("not reproduced: backward through an eval-mode BatchNorm works on XLA")
        return NOT_REPRODUCED
    print(f"ERROR: child exited with {rc} without the batch-norm failure")
    return ERROR


if __name__ == "__main__":
    try:
        code = parent()
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        print("ERROR: unexpected exception (not the bug under test)")
        code = ERROR
    sys.stdout.flush()
    sys.exit(code)
