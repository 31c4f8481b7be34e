"""xlakb's runner of one upstream test function, as a reproducer: run by the probe environment's Python in a
folder holding the test tree of a pytorch/xla commit (exported from a clone when the probe runs, never kept
in xlakb's repository).

    python xlakb_trigger.py test/test_operations.py TestAtenXlaTensor.test_foo

It imports nothing of xlakb. The test runs in a forked child (so a crash of the test is reported, not
mistaken for the runner's), alone, with unittest. Exit codes, as every reproducer's:
    0    the test passed (or failed only its checks that no op fell back to the CPU, or of a message's
         wording: speed and words, not a failure a user meets)
    1    it failed: an assertion, an exception, or a crash; the last line says which:
         XLAKB-TRIGGER FAILED|ERROR|CRASHED <test>: <exception type or signal>: <first line of its message>
    125  untestable on this release: the test module cannot be imported for want of a torch or torch_xla
         API, the test was skipped, or it calls an API the release lacks (a module or name of a later
         release that the test module imports is bound to a stand-in: the tests that use it are untestable,
         the others run as written)
    3    nothing can be judged: the runner itself could not run the test (a test-only package or another
         package the test module imports missing from the environment, no such test), the test module
         cannot be imported on this release (that proves nothing about its tests), or the test was killed
         from outside (SIGKILL of the out-of-memory killer, SIGTERM: the system's doing, never a proof)

A careful maintainer's reading, in one place each:
- an API the release lacks is untestable only where the test's own code asked for it (the innermost frame
  of the exception is the test's, past the call machinery of torch's op dispatch); the same message raised
  from torch or torch_xla's own code (a TypeError about arguments, an _XLAC call that fails) is the
  release's failure;
- a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) while the test runs is a failure; while the
  test module is imported it proves nothing; a signal the system sends is never a proof (see 3);
- a check of a message's wording passes only where the two texts say the same in other words: the same
  numbers, the same negations, and most of their words shared.
"""

import os
import re
import signal
import sys
import traceback
import unittest

UNTESTABLE, BROKEN = 125, 3
#: messages of an API the release does not have yet (judged on the exception of the test or of its import)
MISSING_API = re.compile(
    r"(module '(torch|torch_xla|_XLAC)[\w.]*' has no attribute|cannot import name .* from '(torch|torch_xla)|"
    r"No module named '(torch|torch_xla)[\w.]*'|has no attribute '_XLAC|unexpected keyword argument|"
    r"type object '[\w.]+' has no attribute|Unknown keyword argument '\w+' for operator|"
    r"takes (from \d+ to )?\d+ positional arguments? but \d+ (was|were) given|missing \d+ required positional argument|"
    r"incompatible (constructor|function) arguments|does not have the attribute '\w+')")
#: an assertion that an op ran through the CPU fallback (upstream's "no fallback" checks on the metrics report):
#: the op was not lowered, which is speed, not a failure a user meets; judged only when nothing else failed
FALLBACK_CHECK = re.compile(r"^AssertionError: '(?:aten|xla)::[\w.]+' unexpectedly found in '(?:Metric|Counter): ")
#: an assertion on the wording of a message (a debug report that said "mark_step" where the test now expects
#: "sync"): words only on the expected side, and prose compared: the text changed, not what a user meets
WORDING_CHECK = re.compile(r"^AssertionError: '(?P<a>[A-Za-z][A-Za-z,.:'-]*(?: [A-Za-z,.:'-]+){2,})' "
                           r"(?:not found in '|!= ')(?P<b>[^'\n]*[A-Za-z]+ [A-Za-z]+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NEGATION = re.compile(r"\b(not|no|never|none|cannot|without|false|true|un\w+|\w+n't|fail\w*|error\w*)\b", re.I)
_WORD = re.compile(r"[a-z]+")


def _wording_only(expected: str, actual: str) -> bool:
    """Whether ``actual`` says what ``expected`` says in other words: the line of ``actual`` closest to it
    has the same numbers and the same negations, and shares most of its words (a renamed term such as
    "mark_step" for "sync"), so what a user meets is the same."""
    want = set(_WORD.findall(expected.lower()))
    if len(want) < 3:
        return False
    best, line = 0.0, ""
    for candidate in actual.replace("\\n", "\n").splitlines():
        got = set(_WORD.findall(candidate.lower()))
        shared = len(want & got) / len(want)
        if shared > best:
            best, line = shared, candidate
    if best < 0.6:
        return False
    return (sorted(_NUMBER.findall(expected)) == sorted(_NUMBER.findall(line))
            and sorted(w.lower() for w in _NEGATION.findall(expected)) == sorted(w.lower() for w in _NEGATION.findall(line)))


def _wording_check(last: str) -> bool:
    m = WORDING_CHECK.match(last)
    return bool(m) and _wording_only(m.group("a"), last[m.start("b"):])


#: test-only packages (a layer on top of the release environment); their absence is the runner's problem
TEST_PACKAGES = re.compile(r"No module named '(expecttest|absl|hypothesis|pytest|torchvision|parameterized|yaml)'")


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300]}" if text else type(err).__name__


_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failure|Fault)\b|AssertionError\b)")


def _exception_line(text: str) -> str:
    """The exception line of a traceback unittest printed (the last unindented ``SomeError: ...``)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if _EXC_LINE.match(ln):
            return ln
    return lines[-1] if lines else "(no message)"


#: frames of the call machinery between a test's call and the API it called (torch's op dispatch, context
#: decorators, unittest.mock's patching of a name): an argument the API refuses there, or a name it cannot
#: find, was refused at the test's own call
CALL_MACHINERY = re.compile(r"[/\\](torch[/\\](_ops|overrides|utils[/\\]_contextlib|_jit_internal)\.py|functools\.py|"
                            r"unittest[/\\]mock\.py)$")
#: a module's or class's attribute-lookup hook: a name it cannot find was asked for by its caller
LOOKUP_HOOKS = ("__getattr__", "__getattribute__")


def _missing_api(err: BaseException, tests: str) -> bool:
    """An API the release lacks, asked for by the test's own code: the message says a name, keyword or
    argument is unknown, and the test's call is where it was refused. The same message raised inside torch or
    torch_xla (their own call of a binding with arguments it refuses) is the release's failure."""
    return (isinstance(err, (AttributeError, ImportError, TypeError, RuntimeError)) and bool(MISSING_API.search(str(err)))
            and _raised_in(err, tests, past=CALL_MACHINERY) is not False)


def _raised_in(err: BaseException, tests: str, past: "re.Pattern | None" = None) -> bool | None:
    """Whether ``err`` was raised in the test tree (a file under ``tests``): its innermost frame (skipping
    frames whose file ``past`` matches, when the test tree called them); None when it has no traceback."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append((os.path.abspath(tb.tb_frame.f_code.co_filename), tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    if not frames:
        return None
    here = os.path.abspath(__file__)  # this runner's own import hook is never where an error was raised
    while len(frames) > 1 and (frames[-1][0] == here or (past is not None and (
            past.search(frames[-1][0]) or frames[-1][1] in LOOKUP_HOOKS))):
        frames.pop()
    return frames[-1][0].startswith(tests + os.sep)


def _unknown_name(err: BaseException | None, tests: str) -> bool:
    """A name the test's own code (a file under ``tests``) uses and nothing defines: upstream's test is
    right at its commit, so the name is one a star import (``from torch_xla.x import *``) of a later
    release would have brought. A NameError in torch or torch_xla's code is the failure."""
    return isinstance(err, NameError) and bool(_raised_in(err, tests))


def _missing_member(err: BaseException | None, tests: str) -> bool:
    """An attribute that the test's own code (a file under ``tests``) asked of a torch or torch_xla class
    that does not define it at all (``'XLAShardedTensor' object has no attribute 'redistribute'``): a method
    the fix added, not the bug. An attribute of any other object (``'NoneType' object``, ``'int' object``),
    one the class defines that failed to compute, or one torch_xla's own code asked for, is the failure."""
    if not isinstance(err, AttributeError) or getattr(err, "obj", None) is None or not getattr(err, "name", None):
        return False
    if not _raised_in(err, tests):
        return False
    cls = type(err.obj) if not isinstance(err.obj, type) else err.obj
    if not (cls.__module__ or "").split(".")[0] in ("torch", "torch_xla"):
        return False
    try:
        if hasattr(cls, err.name) or err.name in getattr(err.obj, "__dict__", {}):
            return False
    except Exception:  # noqa: BLE001 - an object that cannot say is not judged an API gap
        return False
    return True


class _Result(unittest.TextTestResult):
    """unittest's text result that also keeps each error's exception (the text alone cannot say whose
    attribute was missing)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.raised = []

    def addError(self, test, err):  # noqa: N802 - unittest's name
        self.raised.append(err[1])
        super().addError(test, err)

    def addSubTest(self, test, subtest, err):  # noqa: N802 - an error in a subTest comes this way
        if err is not None and not issubclass(err[0], test.failureException):
            self.raised.append(err[1])
        super().addSubTest(test, subtest, err)


def _wraps(fn, name: str) -> bool:
    """Whether ``fn`` is a wrapper (functools.wraps, at any depth) of a function called ``name``."""
    seen = 0
    while fn is not None and seen < 10:
        fn = getattr(fn, "__wrapped__", None)
        if fn is not None and getattr(fn, "__name__", None) == name:
            return True
        seen += 1
    return False


def resolve(module, test: str) -> list:
    """The unittest names to run for ``test``: itself; the cases of a parameterised test; or, for PyTorch's
    device-generic tests (the class is replaced by ``<Class>XLA`` by instantiate_device_type_tests), its XLA
    instances ``<test>_xla[_<dtype>]``."""

    owner, _, method = test.rpartition(".")
    base = getattr(module, owner, None) if owner else module
    if base is not None and callable(getattr(base, method, None)):
        return [test]
    found = []
    if base is not None and owner:
        # a parameterised test (absl's parameterized, the parameterized package): one method per case, named
        # after the test with the case's index or name (test_fp80, test_pure_as_strided_slice), each wrapping
        # the test's own function (functools.wraps): those whose wrapped function is the test
        found = [f"{owner}.{m}" for m in sorted(dir(base)) if m.startswith(method) and _wraps(getattr(base, m, None), method)]
        if found:
            return found
    if owner:
        for name, obj in sorted(vars(module).items()):
            if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and name.lower() == (owner + "xla").lower():
                found += [f"{name}.{m}" for m in sorted(dir(obj)) if re.fullmatch(re.escape(method) + r"_xla(?:_\w+)?", m)]
    return found


class _Absent(Exception):
    """What a deferred name raises when the test uses it: the release lacks this API."""


#: the deferred names a test (or its module's own code) used: the verdict is then "untestable", whatever else
#: happened (a test that caught the error broadly must not pass or fail on it)
USED: list[str] = []


class _Missing:
    """A name the test module imports that this release does not have (a torch_xla module or function added
    later), bound in the test module's namespace only; any use raises the import's own error. Tests of the
    module that never use it run as upstream wrote them; one that does is untestable."""

    def __init__(self, what: str, error: str):
        object.__setattr__(self, "_what", what)
        object.__setattr__(self, "_error", error)

    def _use(self, *_args, **_kwargs):
        USED.append(self._what)
        raise _Absent(self._error)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._use()

    __call__ = __getitem__ = __iter__ = __bool__ = __len__ = __setattr__ = __enter__ = __mro_entries__ = _use
    __eq__ = __lt__ = __gt__ = __add__ = __mul__ = __contains__ = _use
    __hash__ = object.__hash__


class _AbsentModule(type(sys)):
    """A torch or torch_xla module the release lacks, as the test module imported it: its names are _Missing."""

    def __init__(self, name: str, error: str):
        super().__init__(name)
        self.__path__ = []
        self.__xlakb_error__ = error

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Missing(f"{self.__name__}.{name}", self.__xlakb_error__)


class _View(type(sys)):
    """A module as one ``from module import a, b`` of the test sees it: its own names, and _Missing for
    those this release lacks. The module itself is left alone."""

    def __init__(self, module, missing: dict):
        super().__init__(module.__name__)
        self.__xlakb_module__ = module
        self.__dict__.update(missing)

    def __getattr__(self, name):
        return getattr(self.__xlakb_module__, name)


def _ours(name: str) -> bool:
    return name.split(".")[0] in ("torch", "torch_xla", "_XLAC")


def _binds(name: str, fromlist) -> bool:
    """Whether the import statement calling ``__import__`` binds the module to a name of its own (``import
    a.b as x``, ``from a.b import c``). A plain ``import a.b`` binds only ``a``: the module is imported for
    what importing it does (``torch_xla.experimental.dynamo_mark_sharding`` registers an op), which a
    stand-in cannot do, so it is not deferred."""
    if fromlist:
        return True
    import linecache

    frame = sys._getframe(2)
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return bool(re.search(r"\bimport\s+(?:[\w.]+\s*(?:as\s+\w+)?\s*,\s*)*" + re.escape(name) + r"\s+as\s+\w+", line))


def _deferring(real_import, tests: str, deferred: set):
    """``__import__`` for code under ``tests`` that binds the names in ``deferred`` (missing modules or
    ``module:name`` pairs, each once the cause of the module's import failing) to stand-ins."""

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        origin = os.path.abspath((globals or {}).get("__file__") or "")
        if level or not _ours(name) or not origin.startswith(tests + os.sep):
            return real_import(name, globals, locals, fromlist, level)
        for gone in sorted(d for d in deferred if ":" not in d):
            if (name == gone or name.startswith(gone + ".")) and gone not in sys.modules and _binds(name, fromlist):
                parts = name.split(".")
                for i in range(gone.count(".") + 1, len(parts) + 1):
                    full = ".".join(parts[:i])
                    if full not in sys.modules:
                        sys.modules[full] = _AbsentModule(full, f"ModuleNotFoundError: No module named '{gone}'")
                        parent = sys.modules.get(full.rpartition(".")[0])
                        if parent is not None:
                            try:
                                setattr(parent, full.rpartition(".")[2], sys.modules[full])
                            except (AttributeError, TypeError):
                                pass
        module = real_import(name, globals, locals, fromlist, level)
        if "*" in (fromlist or ()) and isinstance(module, _AbsentModule):  # its names cannot be deferred one by one
            USED.append(module.__name__)
            raise _Absent(module.__xlakb_error__)
        missing = {}
        for attr in fromlist or ():
            if f"{module.__name__}:{attr}" in deferred and not hasattr(module, attr):
                missing[attr] = _Missing(f"{module.__name__}.{attr}",
                                         f"ImportError: cannot import name '{attr}' from '{module.__name__}'")
        return _View(module, missing) if missing else module

    return imp


def _stand_ins(module) -> set:
    """The names through which the test module reaches a stand-in: the globals bound to one, and the last
    part of every deferred module (``torch_xla.utils.dlpack`` read as an attribute of its parent)."""
    names = set()
    for name, value in vars(module).items():
        if isinstance(value, (_Missing, _AbsentModule)):
            names.add(name)
    names |= {full.rpartition(".")[2] for full, mod in list(sys.modules.items()) if isinstance(mod, _AbsentModule)}
    return names


def _raised_by_the_release(err: BaseException | None, tests: str) -> bool:
    """An exception raised in code outside the test tree (torch, torch_xla, the libraries they call), not by
    a stand-in and not an API gap."""
    if err is None or isinstance(err, (_Absent, AssertionError)) or _missing_api(err, tests):
        return False
    return _raised_in(err, tests) is False


def _uses_stand_in(module, names: list, tests: str) -> str:
    """The stand-in a test's code names (the test method, and the methods and test-tree functions it names,
    followed through), '' when none: a test that only compares or lists such a name (``dir(GRU)``, ``is``)
    never calls it, yet its verdict would be the stand-in's. Read from the code."""
    absent = _stand_ins(module)
    if not absent:
        return ""
    seen, todo, found = set(), [], set()
    classes = {getattr(module, full.rpartition(".")[0], None) for full in names} - {None}
    for full in names:
        todo.append(getattr(getattr(module, full.rpartition(".")[0], None), full.rpartition(".")[2], None))
    todo += [getattr(cls, m, None) for cls in classes for m in ("setUp", "setUpClass", "tearDown")]
    while todo:
        fn = todo.pop()
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None or code in seen or not os.path.abspath(code.co_filename).startswith(tests + os.sep):
            continue
        seen.add(code)
        codes = [code]
        while codes:
            c = codes.pop()
            found |= set(c.co_names) | set(c.co_freevars)
            codes += [k for k in c.co_consts if hasattr(k, "co_names")]
            for n in c.co_names:
                glob = vars(module).get(n)
                if callable(glob) and not isinstance(glob, (_Missing, _AbsentModule)):
                    todo.append(glob)
                todo += [getattr(cls, n) for cls in classes if hasattr(cls, n)]
    hit = sorted(found & absent)
    return hit[0] if hit else ""


def _deferrable(err: BaseException) -> str:
    """What a failed import of the test module lacks, when it is a torch or torch_xla module (of a package
    this release has) or a name of such a module; '' otherwise."""
    if isinstance(err, ModuleNotFoundError) and err.name and _ours(err.name) and "." in err.name:
        parent = err.name.rpartition(".")[0]
        return err.name if parent in sys.modules else ""
    m = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(err))
    if isinstance(err, ImportError) and m and _ours(m.group(2)) and m.group(2) in sys.modules:
        return f"{m.group(2)}:{m.group(1)}"
    return ""


def _load(path: str, name: str):
    """Import the test module; when it fails only for want of a torch or torch_xla module or name that this
    release lacks, import it again with that name deferred (see _Missing), one name at a time."""
    import builtins
    import importlib.util

    tests = os.path.abspath("test")
    real_import = builtins.__import__
    deferred: set = set()
    while True:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            return module
        except BaseException as err:  # noqa: BLE001 - the caller judges it
            sys.modules.pop(name, None)
            gone = _deferrable(err) if not USED else ""
            if not gone or gone in deferred or len(deferred) >= 20:
                raise
            print(f"xlakb: this release lacks {gone.replace(':', '.')}; the test module is imported with it "
                  "deferred (a test that uses it is untestable)", flush=True)
            deferred.add(gone)
            builtins.__import__ = _deferring(real_import, tests, deferred)


def run_test(path: str, test: str) -> int:
    """In the child: import the test module (not as __main__: its own main block stays out), run ``test``."""
    here, tests = os.path.dirname(os.path.abspath(path)), os.path.abspath("test")
    sys.path[:0] = [here, tests]
    sys.argv = [path]
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        module = _load(path, name)
    except BaseException as err:  # noqa: BLE001 - every way an import can fail is judged below
        traceback.print_exc()
        if USED:
            print(f"untestable: the test module needs an API this release lacks: {USED[0]} "
                  f"({_one_line(err)})", flush=True)
            return UNTESTABLE
        if TEST_PACKAGES.search(str(err)):
            print(f"XLAKB-TRIGGER BROKEN {test}: a test-only package is missing: {_one_line(err)}", flush=True)
            return BROKEN
        if _missing_api(err, tests) or _unknown_name(err, tests):
            print(f"untestable: the test module needs an API this release lacks: {_one_line(err)}", flush=True)
            return UNTESTABLE
        missing = getattr(err, "name", None) if isinstance(err, ModuleNotFoundError) else None
        if missing and missing.split(".")[0] not in ("torch", "torch_xla", "_XLAC"):
            # a package the release environment does not hold (setuptools, gone from torch's dependencies):
            # the test cannot be judged here, whatever the bug does
            print(f"XLAKB-TRIGGER BROKEN {test}: the test module imports a package this environment lacks: "
                  f"{_one_line(err)}", flush=True)
            return BROKEN
        # the release raised while the test module was imported: no test of it ran, so none is proved or
        # disproved here (a bug shown at import is a reproducer's to show, not this test's)
        print(f"XLAKB-TRIGGER BROKEN {test}: the test module cannot be imported on this release, which proves "
              f"nothing about its tests: {_one_line(err)} (while importing {path})", flush=True)
        return BROKEN
    names = resolve(module, test)
    if not names:
        print(f"XLAKB-TRIGGER BROKEN {test}: no such test in {path}", flush=True)
        return BROKEN
    used = _uses_stand_in(module, names, tests)
    suite = unittest.defaultTestLoader.loadTestsFromNames(names, module)
    _started()
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=_Result).run(suite)
    sys.stdout.flush()
    if USED:
        print(f"untestable: the test calls an API this release lacks: {USED[0]} is not in this release", flush=True)
        return UNTESTABLE
    if result.skipped and len(result.skipped) == result.testsRun and not result.failures and not result.errors:
        print(f"untestable: skipped: {result.skipped[0][1]}", flush=True)
        return UNTESTABLE
    for case, text in result.errors:  # the loader could not make the test: the runner's problem, not the bug's
        if type(case).__name__ == "_FailedTest":
            print(f"XLAKB-TRIGGER BROKEN {test}: {_exception_line(text)[:300]}", flush=True)
            return BROKEN
    raised = result.raised + [None] * (len(result.errors) - len(result.raised))
    found = ([("FAILED", _exception_line(text), None) for _, text in result.failures] +
             [("ERROR", _exception_line(text), err) for (_, text), err in zip(result.errors, raised)])
    failed = [(kind, last, err) for kind, last, err in found if not FALLBACK_CHECK.match(last) and not _wording_check(last)]
    if used and not any(_raised_by_the_release(e, tests) for e in result.raised):
        # the test's code names a stand-in: a pass or an assertion may be the stand-in's doing (a method set
        # compared, an identity checked); an exception torch or torch_xla raised before the stand-in was
        # reached (the export that failed to lower, a crash) is the release's own failure and stays one
        print(f"untestable: the test uses {used}, which this release lacks", flush=True)
        return UNTESTABLE
    for kind, last, err in failed:
        if kind == "ERROR" and err is not None and (_missing_api(err, tests) or _missing_member(err, tests)
                                                    or _unknown_name(err, tests)):
            print(f"untestable: the test calls an API this release lacks: {last[:300]}", flush=True)
            return UNTESTABLE
        print(f"XLAKB-TRIGGER {kind} {test}: {last[:300]}", flush=True)
        return 1
    if result.testsRun == 0:
        print(f"XLAKB-TRIGGER BROKEN {test}: no test ran", flush=True)
        return BROKEN
    if found:
        what = ("that no op ran through the CPU fallback" if FALLBACK_CHECK.match(found[0][1])
                else "of a message's wording")
        print(f"XLAKB-TRIGGER PASSED {test} (only its checks {what} failed: {found[0][1][:120]})", flush=True)
        return 0
    print(f"XLAKB-TRIGGER PASSED {test}", flush=True)
    return 0


#: signals the code under test raises when it crashes: a failure while the test runs
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGTRAP,
                 signal.SIGSYS}
#: the child writes this to the pipe the parent reads once the test module is imported and the test starts
_STARTED = b"T"
_PHASE_FD: list = []


def _started() -> None:
    for fd in _PHASE_FD:
        try:
            os.write(fd, _STARTED)
        except OSError:
            pass


def judge_signal(test: str, sig: int, started: bool) -> tuple[int, str]:
    """The exit code and last line for a child ended by ``sig``: a crash of the test is its failure; a crash
    while its module is imported proves nothing about it; a signal the system sends (the out-of-memory
    killer's SIGKILL, SIGTERM) is never a proof."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"SIG{sig}"
    if sig not in CRASH_SIGNALS:
        return BROKEN, (f"XLAKB-TRIGGER KILLED {test}: signal {sig} ({name}) sent from outside the test (out of memory, "
                        "a timeout or a person): nothing is proved")
    if not started:
        return BROKEN, (f"XLAKB-TRIGGER BROKEN {test}: signal {sig} ({name}) while the test module was imported, "
                        "which proves nothing about its tests")
    return 1, f"XLAKB-TRIGGER CRASHED {test}: signal {sig} ({name})"


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: xlakb_trigger.py TEST_FILE TEST_ID", file=sys.stderr)
        return BROKEN
    path, test = sys.argv[1], sys.argv[2]
    sys.stdout.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _PHASE_FD.append(write_end)
        code = BROKEN
        try:
            code = run_test(path, test)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    os.set_blocking(read_end, False)  # what the child wrote is there; its own children may hold the pipe open
    try:
        started = _STARTED in os.read(read_end, 16)
    except (BlockingIOError, OSError):
        started = False
    os.close(read_end)
    if os.WIFSIGNALED(status):
        code, line = judge_signal(test, os.WTERMSIG(status), started)
        print(f"\n{line}", flush=True)
        return code
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
