"""How upstream's CI runs a test file on CPU: ``test/run_tests.sh`` at a commit, read for the variables it
exports for every test and the ones it puts before a file's own line (``XLA_METRICS_FILE=... run_test
"$CDIR/test_metrics.py"``, or a wrapper function such as ``run_test_without_functionalization``).

Pure code over the script's text. A file the script never runs is not run on CPU by upstream's CI.
"""

from __future__ import annotations

import re
import shlex

_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$")
_FUNC = re.compile(r"^\s*function\s+(\w+)\s*(\(\))?\s*\{\s*$|^\s*(\w+)\s*\(\)\s*\{\s*$")
#: variables of the script that only steer the script itself, or name paths of the CI machine
_SKIP = {
    "CDIR",
    "LOGFILE",
    "VERBOSITY",
    "MAX_GRAPH_SIZE",
    "GRAPH_CHECK_FREQUENCY",
    "CONTINUE_ON_ERROR",
    "TORCH_XLA_DIR",
    "COVERAGE_FILE",
    "USE_COVERAGE",
}
#: the script's own folder, which a probe's bundle holds as ``test/`` (its working folder is the bundle's root):
#: ``TORCH_TEST_DEVICES="$CDIR/pytorch_test_base.py"`` names a file of the test tree, not of the CI machine
_CDIR = re.compile(r"^\$\{?CDIR\}?(?=/|$)")


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def _value(raw: str, known: dict[str, str]) -> str:
    words = _words(f"x={raw}")
    value = words[0][2:] if words else raw
    return re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: known.get(m.group(1), m.group(0)), value)


def exported(text: str) -> dict[str, str]:
    """The variables the script exports for every test (``export NAME=value`` at the top level)."""
    known: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Z_][A-Z0-9_]*)=(\S.*)?$", line)
        if m and not line.startswith((" ", "\t")) and m.group(1) != "CDIR":
            known[m.group(1)] = _value(m.group(2) or "", known)
        m = re.match(r"^export\s+([A-Z_][A-Z0-9_]*)=(.*)$", line)
        if m:
            known[m.group(1)] = _value(m.group(2), known)
    exports = {}
    for line in text.splitlines():
        m = re.match(r"^export\s+([A-Z_][A-Z0-9_]*)=", line)
        if m and m.group(1) not in _SKIP:
            value = _CDIR.sub("test", known[m.group(1)])
            if "$" not in value and ("/" not in value or value.startswith("test/")):  # the CI machine's paths stay out
                exports[m.group(1)] = value
    return exports


def _functions(text: str) -> dict[str, list[str]]:
    """Each function's body lines."""
    out: dict[str, list[str]] = {}
    name = None
    depth = 0
    for line in text.splitlines():
        m = _FUNC.match(line)
        if name is None and m:
            name = m.group(1) or m.group(3)
            out[name] = []
            depth = 1
            continue
        if name is not None:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                name = None
                continue
            out[name].append(line)
    return out


def _prefix(words: list[str]) -> tuple[dict[str, str], list[str]]:
    env = {}
    i = 0
    while i < len(words) and _ASSIGN.match(words[i]):
        k, v = _ASSIGN.match(words[i]).groups()
        env[k] = v
        i += 1
    return env, words[i:]


def _wrapper_env(name: str, functions: dict[str, list[str]], seen: frozenset = frozenset()) -> dict[str, str] | None:
    """What a wrapper function (``XLA_X=1 run_test "$@"``) adds; None when it is not a way of running a test."""
    if name == "run_test" or name == "run_coverage":
        return {}
    if name not in functions or name in seen:
        return None
    for line in functions[name]:
        env, rest = _prefix(_words(line))
        if rest and rest[0] == "$@":  # runs its arguments: `XLA_X=1 "$@"`
            return env
        if rest and rest[0] != name and ('"$@"' in line or "$@" in line):
            inner = _wrapper_env(rest[0], functions, seen | {name})
            if inner is not None:
                return {**inner, **env}
    return None


def test_env(text: str, path: str) -> dict[str, str] | None:
    """The variables upstream's CPU test script runs ``path`` (``test/...``) with: its exports and what its
    own line adds (a plain line preferred over one with extra settings); None when the script never runs it."""
    rel = path[len("test/") :] if path.startswith("test/") else path
    functions = _functions(text)
    found: list[dict[str, str]] = []
    for line in text.splitlines():
        if f'$CDIR/{rel}"' not in line and f"$CDIR/{rel} " not in line and not line.rstrip().endswith(f"$CDIR/{rel}"):
            continue
        if line.lstrip().startswith("#"):
            continue
        env, rest = _prefix(_words(line))
        ran = False
        while rest:  # wrappers may chain: run_save_tensor_ir run_test "$CDIR/x.py"
            extra = _wrapper_env(rest[0], functions)
            if extra is None:
                break
            env, ran, rest = {**extra, **env}, True, rest[1:]
        if ran:
            found.append(env)
    if not found:
        return None
    best = min(found, key=len)
    return {**exported(text), **{k: v for k, v in best.items() if "/" not in v or k.endswith("_FILE")}}
