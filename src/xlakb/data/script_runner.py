"""xlakb's runner of a script that is not a Python file (``xlakb bisect --script test.sh``).

Run by the probe environment's python as ``script_runner.py NAME ARGS...``: runs NAME (beside this file) as a
program with that environment's ``bin`` first on ``PATH`` (so its ``python`` is the probe's), by its ``#!``
line's interpreter or else ``sh``, in place of this process, so its exit code or signal is the probe's.
"""

import os
import shlex
import sys

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, sys.argv[1])
with open(script, "rb") as f:
    first = f.readline().decode("utf-8", "replace").strip()
interpreter = shlex.split(first[2:]) if first.startswith("#!") else ["sh"]
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
sys.stdout.flush()
sys.stderr.flush()
os.execvp(interpreter[0], [*interpreter, script, *sys.argv[2:]])
