"""torch.compile(backend="openxla") called inside an xp.Trace scope fails: "Expecting scope to be empty".

Upstream: fixed by pytorch/xla PR 6913 ("Fix runtime error when run dynamo with a profiler
scope").

`torch_xla.debug.profiler.Trace` pushes a lazy-tensor IR scope (so ops get the trace name in
their metadata) and pops it on exit. The openxla dynamo bridge calls `xm.mark_step()` while
compiling a graph (`extract_compiled_graph`), and every step marker reset the IR scopes with
`torch::lazy::ScopePusher::ResetScopes()`, which checks that no scope is open. Inside the
Trace one is, so the bridge's step marker raises
`RuntimeError: Expecting scope to be empty but it is build_graph.1`. PR 6913 lets the
bridge's step markers keep the scopes (`mark_step(reset_scope=False)`).

The test runs in a child process (a failed check can end the process) and the parent judges
the child's exit code and output.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3
CHILD_TIMEOUT = 240
NEEDLE = "Expecting scope to be empty"


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.profiler as xp

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(xp, "Trace"):
    print("UNTESTABLE: torch_xla.debug.profiler.Trace is missing")
    return UNTESTABLE

  def step(a):
    return torch.sin(a) + a

  compiled = torch.compile(step, backend="openxla", fullgraph=True)
  dev = xm.xla_device()
  torch.manual_seed(0)
  t_cpu = torch.randn(2, 3, 4)
  t = t_cpu.to(dev)
  try:
    for i in range(3):
      with xp.Trace("build_graph"):
        t = compiled(t)
      print(f"INFO: iteration {i} done", flush=True)
    got = t.cpu()
  except Exception as e:
    if NEEDLE in str(e):
      traceback.print_exc()
      print(f"CHILD_BUG: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  expected = t_cpu
  for _ in range(3):
    expected = torch.sin(expected) + expected
  if not torch.allclose(got, expected, atol=1e-4):
    print("ERROR: wrong values (not the bug under test)")
    return ERROR
  print("CHILD_OK", flush=True)
  return NOT_REPRODUCED


def parent() -> int:
  try:
    proc = subprocess.run([sys.executable, __file__, "--child"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace",
                          timeout=CHILD_TIMEOUT)
  except subprocess.TimeoutExpired:
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  out = proc.stdout
  sys.stdout.write(out)
  rc = proc.returncode
  lines = out.splitlines()
  if rc == UNTESTABLE:
    return UNTESTABLE
  bug = [l for l in lines if l.startswith("CHILD_BUG")]
  if rc == CHILD_BUG and bug:
    print("REPRODUCED: torch.compile(backend='openxla') inside xp.Trace: " +
          bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if NEEDLE in l]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) running torch.compile inside xp.Trace: "
          f"{fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: torch.compile(backend='openxla') runs inside xp.Trace scopes")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the scope failure")
  return ERROR


if __name__ == "__main__":
  try:
    code = child() if sys.argv[1:] == ["--child"] else parent()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
