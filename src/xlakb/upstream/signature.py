"""Error signatures of what people paste: the error lines of a report, normalised so that two reports of the
same crash (other paths, shapes, tensor names, addresses, line numbers) get the same signature, the way
Socorro and syzbot group crash reports.

Pure code over text. A signature is the error's words with placeholders, plus the guilty location when the
paste names one (the innermost torch_xla C++ function, or the source file of a ``Check failed``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The rules are data: the site's paste box (site/assets/javascripts/triage.js) runs the same strings
# (:func:`export_rules`), so both say the same of a paste.
#: (kind, pattern): lines that hold an error a user would search for, most specific kind first
KIND_PATTERNS = (
    ("check", r"(?:Check failed|CHECK failed|RET_CHECK failure)\b.*"),
    ("assert", r"\S.*INTERNAL ASSERT FAILED.*"),
    (
        "status",
        r"(?:Non-OK-status|Bad StatusOr access|(?<![A-Z_])(?:INVALID_ARGUMENT|INTERNAL|UNIMPLEMENTED|"
        r"RESOURCE_EXHAUSTED|FAILED_PRECONDITION|NOT_FOUND|UNAVAILABLE|ABORTED|OUT_OF_RANGE|DEADLINE_EXCEEDED|"
        r"PERMISSION_DENIED|ALREADY_EXISTS|CANCELLED|DATA_LOSS|UNAUTHENTICATED|UNKNOWN)(?::| error:)|"
        # the same codes as TensorFlow-era XLA printed them (``Invalid argument: ...``), before absl's names:
        # where a status begins (a line, after an exception's or log's prefix, "handling error ..."), never in prose
        r"(?:^|(?<=: )|(?<=\] )|(?<=error ))(?:Invalid argument|Unimplemented|Resource exhausted|Failed precondition|Out of range|"
        r"Deadline exceeded|Already exists|Permission denied|Data loss|Internal|Unavailable|Cancelled|Aborted|"
        r"Not found|Unknown): (?=\S))\s*.*",
    ),
    (
        "lowering",
        r"(?:Error while lowering|Lowering (?:of )?\S+ (?:is )?not (?:supported|implemented)|"
        r"Unsupported XLA type)\b.*",
    ),
    # torch_xla's spawn prints a worker's error after the worker's device: ``Exception in device=TPU:3: ...``;
    # the dynamic loader's own line names no exception (``/x/_XLAC...so: undefined symbol: ...``), and a C++
    # exception that ends the process prints its message after ``what():``
    (
        "exception",
        r"(?:^|(?<=\s)|(?<=>))(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b:.*|"
        r"\bException in device=\S+: \S.*|"
        r"(?:^|(?<=\s))\S+\.so(?:\.\d+)*: (?:undefined symbol|cannot open shared object file)\b.*|"
        r"(?<=what\(\):)\s*\S.*",
    ),
    ("crash", r"(?:Segmentation fault|SIGSEGV|SIGABRT|Aborted \(core dumped\)|Fatal Python error:).*"),
)
LOG_PREFIX = (
    r"^\s*(?:\S+ \S+ main shadow\.py:\d+ > )?(?:[FEWI]\d{4} [\d:. ]+\s*\d*\s*\S+:\d+\]\s*|"
    r"\d{4}-\d\d-\d\d[ T][\d:.,]+:?\s*(?:[FEWI] )?(?:\S+:\d+\]\s*)?)"
)
#: TensorFlow-era XLA (XRT) put a status's message on the lines after the worker that raised it
#: (``Invalid argument: From /job:tpu_worker/replica:0/task:0:`` then ``Computation requires more parameters ...``,
#: sometimes after ``2 root error(s) found.`` and with ``(0) `` before it): such a line says which worker, not what
#: failed, so the message is read from the next line that says something, and a line with none is no error line
JOB_WRAPPER = r"\bFrom /job:[\w\-]+/replica:\d+/task:\d+:?\s*$"
#: lines between the worker and the message that say nothing of it, and the mark of one of several root errors
CONTINUED_SKIP = r"^\d+ root error\(s\) found\.?$"
CONTINUED_MARK = r"^\(\d+\)\s*"
#: how many lines after the worker the message is looked for
CONTINUED_LINES = 3
#: a fatal line of absl/glog logging (``F1114 22:32:47.676167 1232387 pjrt_c_api_helpers.cc:258] ...``): what it
#: says is the error that ended the process, whatever its words; the source file is where it was logged
FATAL_LOG = r"^\s*F\d{4} [\d:. ]+\s*\d*\s*(?:[\w.\-~]*/)*([\w.\-]+\.(?:cc|cpp|c|h)):\d+\]\s*\S"
CPP_FRAME = r"\btorch_xla::(?:\w+::)*(\w+)(?=\()"
#: a Python traceback frame: its file and function
PY_FRAME = r'File "([^"]+)", line \d+, in (\S+)'
#: a frame of a notebook's traceback, its file and function: IPython 8 (Kaggle, Jupyter:
#: ``File /x/torch_xla/core/xla_model.py:197, in xla_device(n, devkind)``) and IPython 7 (Colab: the path alone on its
#: line, ``/x/torch_xla/core/xla_model.py in xla_device(n, devkind)``, a Markdown link when copied from the page)
NOTEBOOK_FRAME = r"(?:^|\n)[ \t]*(?:File (?!\")|\[)?((?:[A-Za-z]:)?[^\s\"\[\]()<>]+\.py)(?:\]\([^)\s]*\))?(?::\d+,)? in (?:[\w.<>]+\.)?([\w<>]+)\("
#: where a check fires for every caller, so the place says nothing of the bug (Socorro's "prefix" frames,
#: syzkaller's frames that are never guilty): a check in a header (an inline accessor: a buffer's HasValue,
#: a shape's dimension) or in the bridge that unwraps every op's tensors
HELPER_SOURCE = r"\.h$|^aten_xla_bridge\.cpp$"
#: torch_xla C++ frames every op or every execution passes through: handle accessors, tensor unwrapping,
#: the graph walk, the stack printer, status unwrapping. The guilty place is the first frame below them.
HELPER_FRAME = (
    r"^(?:CurrentStackTrace|GetHandle|GetOpaqueHandle|GetXlaTensor\w*|TryGetXlaTensor|"
    r"GetOrCreateXlaTensor\w*|GetXlaTensors|RunPostOrder|ConsumeValue|MaybeThrow|GetValueOrThrow|"
    r"OkOrThrow|ShapeHelper|CheckStatus)$"
)
#: Python frames that say where the program was, not why: the step marker, autograd's and nn.Module's
#: entries, test harness wrappers (the generic entry frames of triage's data/triage_generic.yaml), and the
#: multiprocessing launcher every spawned worker starts in (xmp.spawn and the worker's start functions)
ENTRY_FRAME = (
    r"^(?:mark_step|sync|step|optimizer_step|wait_device_ops|backward|grad|_engine_run_backward|"
    r"_call_impl|_wrapped_call_impl|__call__|_op|wrapper|inner|_fn|<module>|<lambda>|"
    r"spawn|_start_fn|_mp_start_fn|run_multiprocess|_run_multiprocess|_run_singleprocess|_run_thread_per_device)$"
)
#: what a crash prints last, whatever went wrong: the fatal-signal handler's line, the shell's "Segmentation
#: fault"/"Aborted", Python's faulthandler on a signal, a spawner saying its worker died of a signal or an exit
#: code; and the TPU runtime's check that a compilation gave programs, which fails after whatever error made the
#: compilation fail (that error is logged before it). With no guilty place these are a crash's consequence, never
#: its title (ErrorLine.consequence).
CONSEQUENCE = (
    r"^(?:SIG[A-Z]+ received by PID\b|Segmentation fault\b|SIGSEGV\b|SIGABRT\b|Aborted\b|"
    r"Fatal Python error: (?:Segmentation fault|Aborted|Bus error|Floating point exception)\b|"
    r"Check failed: xla_tpu_programs\.size\(\) > )|"
    r"\bterminated with (?:signal|exit code)\b"
)
#: what a failing test's comparison prints, whatever it compared: unittest's assertTrue/assertFalse,
#: assertEqual on two values ("128.0 != 64", placeholders after normalisation), assertRaises' "RuntimeError not
#: raised", its "Lists differ" family, and torch.testing's and numpy.testing's closeness checks. Every failing
#: test of any bug prints these words; the test's name and values say which. With no guilty place they are,
#: like a crash's consequence, never the title of one bug (ErrorLine.verdict).
TEST_VERDICT = (
    r"^AssertionError: (?:(?:True|False) is not (?:true|false)$|"
    r"(?:Tensor-likes|Scalars) are not (?:close|equal)!|"
    r"The values for attribute '[^']*' do not match\b|Booleans mismatch\b|"
    r"Arrays are not (?:almost )?equal\b|Not equal to tolerance\b|"
    r"(?:Lists|Tuples|Dicts|Sets|Sequences|Strings) differ\b|"
    r"[A-Z]\w*(?:Error|Exception) not raised$|"
    r"\S+ != \S+$)"
)
SOURCE = r"(?:torch_xla/csrc|xla|tensorflow/compiler/xla)/[\w/]*?(\w+\.(?:cpp|cc|h))(?::\d+)?"
#: the exception type a signature starts with (its module path is already gone, data/normalise.yaml): the same
#: message under another type is the same error, where a wrapper printed it without its type (spawn's
#: ``Exception in device=...: ``), a user retyped it, or a release raised it as another class
EXCEPTION_TYPE = r"^[A-Z]\w*(?:Error|Exception|Exit|Interrupt): "
#: the least a message must say, placeholders aside, to name an error without its type
MIN_MESSAGE = 8
#: an inline code span of Markdown prose
CODE_SPAN = r"`([^`\n]{8,})`"
#: a quoted text that is an API name (a type, an attribute, an op) stays: it is the error
IDENTIFIER = r"^.[A-Za-z_][\w.:]{0,60}.$"


def _load_rules() -> dict:
    """The normalisation rules, with the reason for each (``data/normalise.yaml``)."""
    from pathlib import Path

    import yaml

    text = (Path(__file__).resolve().parent.parent / "data" / "normalise.yaml").read_text("utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # read at every start: the C loader


RULES = _load_rules()
#: (pattern, replacement): what differs between reports of one error, in this order; "keep-identifier":
#: <name> unless the quoted text is an API name. Each rule's reason and example are in data/normalise.yaml.
PLACEHOLDERS = tuple((r["pattern"], r["replace"]) for r in RULES["placeholders"])
MAX_SIGNATURE = 200
KINDS = tuple((k, re.compile(p)) for k, p in KIND_PATTERNS)
_LOG_PREFIX = re.compile(LOG_PREFIX)
_CPP_FRAME = re.compile(CPP_FRAME)
_FATAL_LOG = re.compile(FATAL_LOG)
_SOURCE = re.compile(SOURCE)
_IDENTIFIER = re.compile(IDENTIFIER)
_CODE_SPAN = re.compile(CODE_SPAN)
_PY_FRAME = re.compile(PY_FRAME)
_NOTEBOOK_FRAME = re.compile(NOTEBOOK_FRAME)
_HELPER_SOURCE = re.compile(HELPER_SOURCE)
_HELPER_FRAME = re.compile(HELPER_FRAME)
_ENTRY_FRAME = re.compile(ENTRY_FRAME)
_CONSEQUENCE = re.compile(CONSEQUENCE)
_TEST_VERDICT = re.compile(TEST_VERDICT)
_EXCEPTION_TYPE = re.compile(EXCEPTION_TYPE)
_JOB_WRAPPER = re.compile(JOB_WRAPPER)
_CONTINUED_SKIP = re.compile(CONTINUED_SKIP)
_CONTINUED_MARK = re.compile(CONTINUED_MARK)


def _keep_identifier(m: re.Match) -> str:
    return m.group(0) if _IDENTIFIER.match(m.group(0)) else "<name>"


_PLACEHOLDERS = tuple((re.compile(p), _keep_identifier if r == "keep-identifier" else r) for p, r in PLACEHOLDERS)


def export_rules() -> dict:
    """The rules as the site's paste box reads them."""
    return {
        "kinds": [list(k) for k in KIND_PATTERNS],
        "log_prefix": LOG_PREFIX,
        "fatal_log": FATAL_LOG,
        "cpp_frame": CPP_FRAME,
        "py_frame": PY_FRAME,
        "notebook_frame": NOTEBOOK_FRAME,
        "helper_source": HELPER_SOURCE,
        "helper_frame": HELPER_FRAME,
        "entry_frame": ENTRY_FRAME,
        "consequence": CONSEQUENCE,
        "test_verdict": TEST_VERDICT,
        "exception_type": EXCEPTION_TYPE,
        "job_wrapper": JOB_WRAPPER,
        "continued_skip": CONTINUED_SKIP,
        "continued_mark": CONTINUED_MARK,
        "continued_lines": CONTINUED_LINES,
        "min_message": MIN_MESSAGE,
        "bare_skip": BARE_SKIP,
        "min_bare": MIN_BARE,
        "bare_lines": BARE_LINES,
        "min_cut": MIN_CUT,
        "min_tail": MIN_TAIL,
        "title_separators": list(TITLE_SEPARATORS),
        "py_code": PY_CODE,
        "ipython_code": IPYTHON_CODE,
        "import_statement": IMPORT_STATEMENT,
        "import_error": IMPORT_ERROR,
        "max_cut_lines": MAX_CUT_LINES,
        "source": SOURCE,
        "identifier": IDENTIFIER,
        "code_span": CODE_SPAN,
        "placeholders": [list(p) for p in PLACEHOLDERS],
        "max_signature": MAX_SIGNATURE,
        "frames": {k: v for k, v in _FRAME_RULES.items() if k != "skip"} | {"skip": [x["pattern"] for x in _FRAME_RULES["skip"]]},
    }


@dataclass(frozen=True)
class ErrorLine:
    """One error line of a paste: its kind, the line as pasted (log prefix removed), its signature text and
    the guilty location it names (or ""). ``helper``: the place the error came out of when that place is a
    helper every caller goes through (then ``location`` is the first caller the paste shows, or the helper
    itself when it shows none: a paste that cannot tell which bug it is)."""

    kind: str
    line: str
    signature: str
    location: str
    helper: str = ""

    @property
    def specific(self) -> bool:
        """The location names the guilty place, not only a helper."""
        return bool(self.location) and self.location != self.helper

    @property
    def consequence(self) -> bool:
        """A fatal signal or abort with no guilty place: what every crash prints last (the signal handler's
        line, the shell's "Aborted"), not what went wrong. Socorro makes such a crash's signature of its stack;
        with no stack frame of torch_xla, reports sharing only this line can be any crashes. A failing test's
        verdict (:attr:`verdict`) is one too: reports sharing only it can be any failing tests."""
        return self.verdict or (not self.location and bool(_CONSEQUENCE.search(self.signature)))

    @property
    def verdict(self) -> bool:
        """A failing test's comparison with no guilty place ("AssertionError: Tensor-likes are not close!"):
        what any failing test prints, whatever bug failed it (a kind of :attr:`consequence`)."""
        return not self.location and bool(_TEST_VERDICT.search(self.signature))

    @property
    def key(self) -> str:
        return self.signature + (f" @ {self.location}" if self.location else "")


def normalise(message: str) -> str:
    """An error message with what differs between reports made into placeholders."""
    text = message.strip()
    for rx, repl in _PLACEHOLDERS:
        text = rx.sub(repl, text)
    return text.strip(" :;,.")[:MAX_SIGNATURE]


def _location(line: str, near: str, below: str, above: str) -> tuple[str, str]:
    """(guilty location, helper): the source file a check names, else the innermost torch_xla C++ function
    below it. When that is a helper every caller passes through, the guilty place is its first caller: the
    first torch_xla C++ frame below that is no helper, else the innermost Python frame above the error that
    is no generic entry; the helper stays the location when the paste shows neither. ``near``: the lines
    from the error on that may name its function; ``below``, a longer stretch, for the walk past helpers."""
    m = _SOURCE.search(line)
    source = m.group(1) if m else ""
    if source and not _HELPER_SOURCE.search(source):
        return source, ""
    if not source:
        first = _CPP_FRAME.search(near)
        if first is None:
            return "", ""
        if not _HELPER_FRAME.match(first.group(1)):
            return first.group(1), ""
    frames = _CPP_FRAME.findall(below)
    helper = source or frames[0]
    caller = next((f for f in frames if not _HELPER_FRAME.match(f)), "")
    if not caller:
        entries = [fn for _, fn in _PY_FRAME.findall(above)]
        caller = next((fn for fn in reversed(entries) if not _ENTRY_FRAME.match(fn)), "")
    return caller or helper, helper


def error_lines(text: str) -> list[ErrorLine]:
    """The error lines of a paste, in order, each once (by signature and location)."""
    out: list[ErrorLine] = []
    seen: set[str] = set()
    lines = re.split(r"\r\n|\r|\n", text)
    for i, raw in enumerate(lines):
        line = _clean(raw)
        if not line or len(line) > 2000:
            continue
        # an error quoted inline in prose ("it fails with `RuntimeError: ...` when") is that code span
        spans = [sp for sp in _CODE_SPAN.findall(line) if any(rx.search(sp) for _, rx in KINDS)]
        for segment in spans or [line]:
            for kind, rx in KINDS:
                m = rx.search(segment)
                if not m:
                    continue
                found = m.group(0).strip()
                if _JOB_WRAPPER.search(found):
                    message = continued(lines, i)
                    if not message:
                        break  # only the worker that raised it: no error line by itself
                    found = f"{found} {message}"
                sig = signature_of(found)
                if len(sig) < 8:
                    break
                location, helper = _location(
                    segment, "\n".join(lines[i : i + 12]), "\n".join(lines[i : i + 40]), "\n".join(lines[max(0, i - 40) : i])
                )
                item = ErrorLine(kind, found, sig, location, helper)  # the whole line: never cut mid-word
                if item.key not in seen:
                    seen.add(item.key)
                    out.append(item)
                break
            else:
                fatal = _FATAL_LOG.match(raw) if segment is line else None
                if fatal and len(sig := signature_of(line)) >= 8:
                    # a fatal log line no kind knows (``Unexpected error status ...``, ``Aborting: ...``): the error
                    # that ended the process, placed in the file that logged it (a header's is every caller's)
                    place = "" if _HELPER_SOURCE.search(fatal.group(1)) else fatal.group(1)
                    item = ErrorLine("fatal", line, sig, place)
                    if item.key not in seen:
                        seen.add(item.key)
                        out.append(item)
    return out


def continued(lines: list[str], i: int) -> str:
    """The message a status names its worker before (:data:`JOB_WRAPPER`): the first line after line ``i`` that
    says something, without a root error's mark; "" when none is shown within :data:`CONTINUED_LINES` lines."""
    for raw in lines[i + 1 : i + 1 + CONTINUED_LINES]:
        line = _clean(raw)
        if not line or _CONTINUED_SKIP.match(line):
            continue
        return _CONTINUED_MARK.sub("", line, count=1)
    return ""


def wrapper_only(line: str) -> bool:
    """A stored line that names only the worker a status came from, its message not stored with it."""
    return bool(_JOB_WRAPPER.search(line))


def signature_of(line: str) -> str:
    """The signature of an error line as :func:`error_lines` found it (stored reports keep the line, so a
    change of the rules reaches them without reading the reports again)."""
    return normalise(_strip_wrapper(line))


def message_of(signature: str) -> str:
    """A signature without the exception type it starts with, or "" when what is left says too little to name
    an error by itself (placeholders aside, fewer than ``MIN_MESSAGE`` characters)."""
    message = _EXCEPTION_TYPE.sub("", signature, count=1)
    return message if literal_length(message) >= MIN_MESSAGE else ""


#: a line pasted alone that could be a message without its type: not a frame, not code, not a log's chatter
BARE_SKIP = r"^(?:File \"|Traceback\b|at |#\d|@ |\*\*\*|\.\.\.|\$ |>>> |[-=*_~]{3,})|\w+::\w+\s*\(|\bline \d+, in\b"
#: the least a bare line must say, placeholders aside (more than a typed message: nothing says it is an error)
MIN_BARE = 16
#: how much of a message, placeholders and spaces aside, two lines must share when one is cut short
MIN_CUT = 20
#: ... and when they agree only after an outer layer's context (a tail says less of which error it is)
MIN_TAIL = 32
#: what a reporter puts between their own context and the error in a title ("TPU VM - <error>", "Runs on GPU,
#: error on TPU: <error>"): a title's tails start after each (a pasted line's only after ": ", where a dash is
#: part of the message: "at index 0 - got [80, 1]")
TITLE_SEPARATORS = (": ", " - ", " \u2013 ", " \u2014 ")
#: the last error lines of a paste that are compared so (a long log's earlier errors are its past)
MAX_CUT_LINES = 50
#: only the last lines of a long log are read for bare messages (the error is what a log prints last)
BARE_LINES = 400
_BARE_SKIP = re.compile(BARE_SKIP)


def _clean(raw: str) -> str:
    """A pasted line without its log prefix, its indentation and the backticks around it."""
    return _LOG_PREFIX.sub("", raw, count=1).strip().strip("`").strip()


def literal_length(signature: str) -> int:
    """The characters of a signature that are neither placeholders nor spaces."""
    return len(re.sub(r"<\w+>|\s", "", signature))


def last_lines(text: str) -> list[str]:
    """The last ``BARE_LINES`` lines of a paste that say something: the error is what a log prints last."""
    return [ln for ln in re.split(r"\r\n|\r|\n", text) if ln.strip()][-BARE_LINES:]


def bare_lines(text: str) -> list[ErrorLine]:
    """The lines of a paste that no error kind matches but that may be a message pasted alone ("Missing XLA
    configuration", "Input tensor is not an XLA tensor: torch.FloatTensor"): kind ``message``, no location.
    Frames, code and log banners are left out; each line says at least ``MIN_BARE`` characters."""
    out: list[ErrorLine] = []
    seen: set[str] = set()
    for raw in last_lines(text):
        line = _clean(raw)
        if not line or len(line) > 500 or _BARE_SKIP.search(line) or any(rx.search(line) for _, rx in KINDS):
            continue
        sig = normalise(line)
        if literal_length(sig) < MIN_BARE or sig in seen:
            continue
        seen.add(sig)
        out.append(ErrorLine("message", line, sig, ""))
    return out


#: tags a title starts with that are no part of the error (``[torchbench] ``, ``[PJRT] ``, ``[Bug] ``)
TITLE_TAGS = r"^(?:\s*\[[^\]\n]{1,40}\]\s*)+"
_TITLE_TAGS = re.compile(TITLE_TAGS)


def title_line(title: str) -> ErrorLine | None:
    """A report's title as a line of kind ``title``, when it may be the error the report shows: a reporter who
    titles a report by its error ("Computation requires more parameters (3311) than supported (limit 3305)")
    pastes no more of it. A title an error kind finds is one of the report's error lines already (None); so is a
    title that says less than a bare line must (``MIN_BARE``) or only a crash's consequence. Most titles are
    prose: they only ever match a pasted line that says the same words (:func:`xlakb.upstream.index.match_titles`)."""
    if error_lines(title) or wrapper_only(title.strip().strip("`")):
        return None  # an error line already, or only the worker a status came from
    text = _TITLE_TAGS.sub("", title).strip().strip("`").strip()
    sig = normalise(text)
    if literal_length(sig) < MIN_BARE or "\n" in text or _CONSEQUENCE.search(sig) or _TEST_VERDICT.search(sig):
        return None  # a crash's consequence ("terminated with exit code 1"), a test's verdict name no bug
    return ErrorLine("title", title.strip(), sig, "")


def _strip_wrapper(line: str) -> str:
    """``RuntimeError: torch_xla/csrc/x.cpp:12 : Check failed: a == b`` is the check, not the RuntimeError."""
    for kind, rx in KINDS[:3]:
        m = rx.search(line)
        if m and m.start() > 0:
            return m.group(0)
    return line


_FRAME_RULES = RULES["frames"]
_STACK_CPP = re.compile(_FRAME_RULES["cpp"])
_PY_PATH = re.compile(_FRAME_RULES["py_path"])
_FRAME_SKIP = tuple(re.compile(s["pattern"]) for s in _FRAME_RULES["skip"])
SPECIFIC_FRAME = int(_FRAME_RULES["specific"])


def guilty_frames(text: str, excerpt: bool = False) -> list[str]:
    """The innermost frames of torch_xla, torch's lazy core and XLA a paste shows, innermost first: C++
    (``cpp:torch_xla::Class::Function``; a printed stack lists the innermost first) then Python
    (``py:torch_xla/core/xla_model.py:function``; a traceback lists it last; a notebook's too). Frames every error passes
    through (the stack printer, accessors, dispatch, the step marker) are left out: they say where the program
    was, not why (data/normalise.yaml, ``frames``). ``excerpt``: the text is an excerpt that may be cut
    anywhere (the stored search corpus), so a Python frame it ends in is left out."""
    cpp: list[str] = []
    for m in _STACK_CPP.finditer(text):
        name = m.group(1)
        if any(rx.search(name) for rx in _FRAME_SKIP) or f"cpp:{name}" in cpp:
            continue
        cpp.append(f"cpp:{name}")
        if len(cpp) >= int(_FRAME_RULES["cpp_kept"]):
            break
    py: list[str] = []
    # the frame line an excerpt ends in may be cut inside the function's name: it names nothing
    end = len(text.rstrip(" \t"))
    found = sorted(
        (m.start(), m.groups()) for rx in (_PY_FRAME, _NOTEBOOK_FRAME) for m in rx.finditer(text) if not excerpt or m.end() < end
    )
    shown = [groups for _, groups in found]
    for path, function in reversed(shown):
        m = _PY_PATH.search(path.replace("\\", "/"))
        if not m or _ENTRY_FRAME.match(function):
            continue
        frame = f"py:{m.group(1)}:{function}"
        if frame not in py:
            py.append(frame)
        if len(py) >= int(_FRAME_RULES["py_kept"]):
            break
    return cpp + py


#: the code line a traceback stops at: the line under its last frame (Python), or its last arrow line (IPython's
#: ``---> 20 import _XLAC``)
#: (a frame that shows no code, such as importlib's frozen ones, is followed by the next frame's line, not code)
PY_CODE = r'File "[^"\n]+", line \d+, in [^\n]*\n(?![ \t]*File ")[ \t]*([^\n]*\S)'
IPYTHON_CODE = r"^-*> ?\d+ (.*\S)"  # multiline
#: an import statement: ``from m import a, b`` or ``import m, n as x``
IMPORT_STATEMENT = (
    r"^\s*(?:from\s+([\w.]+)\s+import\s+\(?([\w\s,]+?)\)?|import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*))"
    r"\s*(?:#.*)?$"
)
#: the errors an import raises
IMPORT_ERROR = r"^(?:ImportError|ModuleNotFoundError): "
_PY_CODE = re.compile(PY_CODE)
_IPYTHON_CODE = re.compile(IPYTHON_CODE, re.M)
_IMPORT_STATEMENT = re.compile(IMPORT_STATEMENT)


def import_stop(text: str) -> tuple[str, list[str]] | None:
    """The import statement a traceback stops at, with the names it imports (modules and names, ``as`` aside,
    relative ones and those under half ``MIN_MESSAGE`` characters left out), or None: a traceback whose message was
    cut off after such a line failed to import (``import _XLAC``, ``from torch._six import inf``)."""
    last = [m for rx in (_PY_CODE, _IPYTHON_CODE) for m in rx.finditer(text)]
    if not last:
        return None
    code = max(last, key=lambda m: m.end()).group(1).strip()  # the code is where each pattern ends
    m = _IMPORT_STATEMENT.match(code)
    if not m:
        return None
    parts = [m.group(1), *(m.group(2) or "").split(",")] if m.group(1) else (m.group(3) or "").split(",")
    names = []
    for part in parts:
        name = part.split(" as ")[0].strip()
        if name and not name.startswith(".") and len(name) >= MIN_MESSAGE // 2 and name not in names:
            names.append(name)
    return (code, names) if names else None


def kept_frames(frames: list[str]) -> list[str]:
    """Stored guilty frames that today's rules still call guilty (frames are read when a report is stored; a
    frame a later rule skips, such as a launcher every worker starts in, names no bug any more)."""
    out = []
    for f in frames:
        if f.startswith("cpp:") and any(rx.search(f[4:]) for rx in _FRAME_SKIP):
            continue
        if f.startswith("py:") and _ENTRY_FRAME.match(f.rsplit(":", 1)[-1]):
            continue
        out.append(f)
    return out


def stack_text(frames: list[str]) -> str:
    """A stack a user could paste that shows these guilty frames and no error line (the inverse of
    :func:`guilty_frames`): the C++ frames as absl prints them, then a Python traceback, outermost first."""
    cpp = [f"    {f[4:]}()" for f in frames if f.startswith("cpp:")]
    py = [f[3:].rsplit(":", 1) for f in frames if f.startswith("py:")]
    lines = ["*** Begin stack trace ***", *cpp, "*** End stack trace ***"] if cpp else []
    if py:
        lines.append("Traceback (most recent call last):")
        lines += [f'  File "/site-packages/{path}", line 1, in {function}\n    ...' for path, function in reversed(py)]
    return "\n".join(lines) + "\n"


def primary(lines: list[ErrorLine]) -> ErrorLine | None:
    """The line a report is grouped by: the most specific kind, the last of it (the final error)."""
    order = {k: i for i, (k, _) in enumerate(KINDS)}
    return min(reversed(lines), key=lambda e: order.get(e.kind, len(order))) if lines else None
