"""xlakb's runner of a script that is not a Python file (``xlakb bisect --script test.sh``).

xlakb writes one copy of this file per script, with the script's name and bytes below, so a probe is one
self-contained Python file wherever it runs (here, in a container, on a Ray worker). Run by the probe
environment's python, it writes the script to a temporary folder and runs it with that environment's ``bin``
first on ``PATH`` (so the script's ``python`` is the probe's), by its ``#!`` line's interpreter or else ``sh``,
with this file's arguments; it ends as the script ended: the same exit code, or killed by the same signal.
"""

import base64
import os
import shlex
import signal
import subprocess
import sys
import tempfile

NAME = "script.sh"  # xlakb writes the script's name here
SCRIPT = base64.b64decode("")  # and its bytes here


def main() -> int:
    first = SCRIPT.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    interpreter = shlex.split(first[2:]) if first.startswith("#!") else ["sh"]
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with tempfile.TemporaryDirectory(prefix="xlakb-script-") as folder:
        path = os.path.join(folder, NAME)
        with open(path, "wb") as f:
            f.write(SCRIPT)
        os.chmod(path, 0o700)
        sys.stdout.flush()
        code = subprocess.call([*interpreter, path, *sys.argv[1:]], env=env)
    if code < 0:  # killed by a signal: end the same way, so the probe is judged as the script would be
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main())
