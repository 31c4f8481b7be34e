"""With XLA_METRICS_FILE set, the first mark_step fails: get_local_ordinal(defval=...) TypeError.

Upstream: fixed by pytorch/xla PR 8644; introduced by PR 7836 (type hints for xla_model).

PR 7836 removed the `defval` parameter of `torch_xla.core.xla_model.get_local_ordinal`, but
`torch_xla/debug/metrics_saver.py` kept calling `xm.get_local_ordinal(defval=-1)` to build
the per-process metrics file name. That code only runs when the environment variable
XLA_METRICS_FILE is set, so every `xm.mark_step()` of such a run raises
`TypeError: get_local_ordinal() got an unexpected keyword argument 'defval'`.

The record sets XLA_METRICS_FILE=STDOUT (torch_xla then prints the metrics report after each
step instead of writing a file). On fixed releases the script checks that the report was
really printed.

`--workaround` first wraps `xm.get_local_ordinal` so that it accepts (and ignores) `defval`,
and must then report "not reproduced".

Run with: PJRT_DEVICE=CPU XLA_METRICS_FILE=STDOUT
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import contextlib
import io
import os
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  if not os.environ.get("XLA_METRICS_FILE"):
    print("ERROR: XLA_METRICS_FILE is not set; the record's environment sets it")
    return ERROR
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__,
        "XLA_METRICS_FILE", os.environ["XLA_METRICS_FILE"])
  if workaround:
    _orig = xm.get_local_ordinal
    xm.get_local_ordinal = lambda *args, defval=None, **kwargs: _orig()
    print("INFO: workaround: xm.get_local_ordinal wrapped to ignore defval")
  dev = xm.xla_device()
  x = torch.ones(4, 4, device=dev)
  y = (x * 2 + 1).sum()
  captured = io.StringIO()
  try:
    with contextlib.redirect_stdout(captured):
      xm.mark_step()
  except TypeError as e:
    sys.stdout.write(captured.getvalue())
    if "defval" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: xm.mark_step() with XLA_METRICS_FILE set raised TypeError: {e}")
      return REPRODUCED
    raise
  report = captured.getvalue()
  print(f"INFO: y={y.item()}")
  if "[MetricsData; step=" not in report:
    print("ERROR: mark_step passed but no metrics report was printed to STDOUT")
    return ERROR
  print("INFO: metrics report head: " + report.strip().splitlines()[0])
  print("NOT REPRODUCED: mark_step saved the metrics report to XLA_METRICS_FILE")
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
