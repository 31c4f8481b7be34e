"""What xlakb writes into the repository or the site names no path of the machine it was measured on.

A probe's message can name the environment it ran in (``<module '_XLAC' from '/home/me/.cache/xlakb/envs/uv/
…/site-packages/_XLAC….so'>``) and a command can name a local clone (``--repo /home/me/xla``). Before
such text is kept (a matrix row, a bisection report, the mining table) it goes through :func:`scrub`, and
a command through :func:`command`, so the published data says ``<site-packages>/…`` and ``--repo ../xla``.
Library code: pure functions.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

#: an absolute path up to an installed package's folder: what follows it is the package's own file
SITE_PACKAGES = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][^\s'\"()<>,;]+?)*?[/\\](?:site|dist)-packages(?=[/\\])")
#: where machines keep their users' and work folders (a path under one names the machine; a scratch path such as
#: /tmp/dump in a setting's value does not)
MACHINE_PATH = re.compile(
    r"(?<![\w.~])(?:/root|/home/[\w.-]+|/Users/[\w.-]+|/work|"
    r"[A-Za-z]:\\Users\\[\w.-]+)(?=[/\\])"
)
#: the command's options whose value is a path, and what a reader is shown instead of an absolute one
PLACEHOLDERS = {"--repo": "../xla"}


def scrub(text: str, root: Path | None = None) -> str:
    """``text`` with installed packages' paths as ``<site-packages>``, paths under ``root`` (the repository a
    reproducer ran from) relative to it, and the home folder as ``~``."""
    if not text:
        return text
    if root is not None:
        for base in {str(root), str(Path(root).resolve())}:
            text = text.replace(base.rstrip(os.sep) + os.sep, "")
    text = SITE_PACKAGES.sub("<site-packages>", text)
    home = str(Path.home())
    if len(home) > 1:
        text = text.replace(home + os.sep, "~" + os.sep)
    return text


def md_code(text: str) -> str:
    """``text`` as inline Markdown code that survives backticks inside it: a literal a reader searches for (an
    error, an upstream subject) quoted in a record or on a page."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def command(argv: list[str]) -> str:
    """The command line ``argv`` as a reader can run it: an absolute path given to an option becomes its
    placeholder (``--repo ../xla``) or its file name."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        option, eq, value = arg.partition("=")
        if eq and option.startswith("--") and os.path.isabs(value):
            arg = f"{option}={PLACEHOLDERS.get(option, Path(value).name)}"
        elif i and argv[i - 1].startswith("--") and os.path.isabs(arg):
            arg = PLACEHOLDERS.get(argv[i - 1], Path(arg).name)
        out.append(scrub(arg))
    return shlex.join(out)


def machine_paths(text: str) -> list[str]:
    """The places ``text`` names a path of a machine (for the checks that nothing published does)."""
    return [m.group(0) for m in MACHINE_PATH.finditer(text)]
