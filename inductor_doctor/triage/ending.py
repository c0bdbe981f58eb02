"""What a log ends in, and which matches stand beside that failure instead of in it.

A log's diagnosis is about the failure the log ends in. Logs carry more than that failure: an
Inductor warning printed at start-up ("Not enough SMs to use max_autotune_gemm mode"), an error a
library caught and retried, a compile error Dynamo logged before it fell back to eager. Such a
line is a bystander of the failure, not its cause: a user whose Triton kernel raises `NameError:
name 'tl' is not defined` has no use for "this is small-gpu-no-autotune-gemm", and a script doing
`explain --log build.log && ...` must not act on it. So triage reads, besides the signatures:

* the log's final failure (`Ending`): its last error line that is not a warning and that nothing
  after it shows handled (retried, fallen back, ignored), and where that failure starts (its
  traceback, back through the chained tracebacks before it, or the frames above it), read from
  the log's last `TAIL_BYTES`;
* for each match it keeps as evidence (`Closure`): whether its line is a warning, whether the
  lines after it show it handled, and the traceback it sits in.

A match is a bystander (`bystander`) when the log ends in a failure that none of its issue's
signatures appears in, and every line of its evidence stands before that failure and is closed: a
warning (and any match of a warning-severity issue, a degradation that never fails a run), an
error the log shows handled, or an error inside an earlier traceback. A final failure that only
wraps the output before it (`CalledProcessError`, torchrun's `ChildFailedError`, "see above")
keeps an error-severity match in it: the cause is printed above the wrapper. A log that ends
without a failure makes a bystander only of an error it shows handled. A bystander is reported as
context, never as the diagnosis, and never makes `explain --log` exit 0.

Byte patterns throughout, as the stream reads the log (`triage/stream.py`); nothing here is
called per line of the whole log, only on the tail and on the few evidence lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

#: The end of the log the final failure is looked for in (what the stream holds at its end).
TAIL_BYTES = 256 * 1024
#: How far above its last line a failure's traceback is looked for, in lines.
EPISODE_LINES = 2000
#: Lines after an error in which a sign of it being handled counts.
HANDLED_LINES = 8
#: Bytes before a match in which the traceback it sits in is looked for.
TRACEBACK_BYTES = 64 * 1024
#: The start of a line in which a log level (W1122, [WARNING], ERROR) is looked for.
PREFIX_BYTES = 160
SHOWN = 160

#: A log level's mark of a warning, in a line's prefix: glog's W1122, c10's [W ...], logging's WARNING.
_WARNING_LEVEL = re.compile(
    rb"(?:^|[\s\]\)|:>\[])W\d{4} \d\d:\d\d:\d\d|\[W(?:\d{4})? |\[\s*WARN(?:ING)?\s*\]|"
    rb"(?:^|[\s\]\)|:>-])WARN(?:ING)?(?=[:\s\]|-])"
)
#: A warning by its class or its tool: Python's `UserWarning: ...`, a compiler's `warning: ...`.
_WARNING_ANYWHERE = re.compile(rb"\b[A-Z]\w*Warning: |^\s*warnings\.warn\(|\bwarning: ")
_TRACEBACK = re.compile(rb"Traceback \(most recent call last\)")
#: An exception line (`NameError: ...`, `torch._inductor.exc.InductorError: ...`), a compiler's or
#: a logger's error, a process killed.
_FAILURE = re.compile(
    rb"(?:^|[\s\]\)|:>])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::\s+\S|:?\s*$)|"
    rb"\b(?:fatal )?error: |\bERROR\b|(?:^|[\s\]\)|:>\[])[EF]\d{4} \d\d:\d\d:\d\d|"
    rb"Segmentation fault|core dumped|^\s*Killed\b|\bAborted\b"
)
#: Code shown in a traceback's frames, not an exception raised.
_CODE = re.compile(rb"^\s*(?:[\w\[\]:.-]*[\]:)]\s*)?(?:except|raise|class|def|if|elif|assert|return)\b")
#: The sign, on a line after an error, that it was handled: retried, fallen back from, ignored.
_HANDLED = re.compile(
    rb"\bretry(?:ing)?\b|\bretried\b|\battempt \d+\s*(?:/|of)\s*\d+|\bfalling back\b|\bignoring\b",
    re.IGNORECASE,
)
#: The sign, on a line after an error, that the step that failed went on: it succeeded after all.
_SUCCEEDED = re.compile(rb"\bsucceeded\b|\bsuccessfully\b", re.IGNORECASE)
_IGNORED = re.compile(rb"Exception ignored in", re.IGNORECASE)
#: What links a traceback to the one before it: both are one failure.
_CHAINED = re.compile(rb"The above exception was the direct cause|During handling of the above exception")
#: A final failure whose cause is the output before it: a subprocess's status, a launcher's summary.
_WRAPPER = re.compile(
    rb"CalledProcessError|non-zero exit status|exit status \d|ChildFailedError|BrokenProcessPool|"
    rb"terminated abruptly|SubprocException|(?:see|in) the (?:error|output|log)s? above|"
    rb"\b(?:error|output|log)s? above\b|Error compiling objects|Failed building wheel|"
    rb"subprocess-exited-with-error|ninja: build stopped|failed with exit (?:code|status)|\bexitcode\b|"
    rb"core dumped|^\s*Aborted\b",
    re.IGNORECASE,
)


def _segment(line: bytes) -> bytes:
    """What a terminal shows of a line: the part after its last carriage return (a progress bar's redraw)."""
    line = line.rstrip(b"\r")
    return line[line.rfind(b"\r") + 1 :]


def is_warning(line: bytes) -> bool:
    line = _segment(line)
    return bool(_WARNING_LEVEL.search(line[:PREFIX_BYTES]) or _WARNING_ANYWHERE.search(line))


def is_failure(line: bytes) -> bool:
    """An error line of its own (not a warning, not a frame's code)."""
    line = _segment(line)
    if is_warning(line) or line.lstrip().startswith(b'File "'):
        return False
    if _TRACEBACK.search(line):
        return True
    return bool(_FAILURE.search(line)) and not _CODE.search(line)


def handled_in(lines: Sequence[bytes]) -> Optional[str]:
    """What shows the error of `lines[0]` handled, on the few lines after it (up to the next
    traceback), or None. Its own line does not count: an error's own words may say "ignoring"
    (LLVM's "'sm_120' is not a recognized processor for this target (ignoring processor)")."""
    for line in lines[1 : HANDLED_LINES + 1]:
        if _TRACEBACK.search(line):
            return None
        m = _HANDLED.search(line) or _SUCCEEDED.search(line)
        if m:
            seg = _segment(line)
            at = max(0, seg.find(m.group()))
            return shown(seg[at:])[:60]
    return None


def shown(line: bytes) -> str:
    text = _segment(line).decode("utf-8", errors="replace").strip()
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


@dataclass(frozen=True)
class Closure:
    """What the lines around one evidence line say of it: a warning, handled, or in a traceback."""

    warning: bool = False
    handled: Optional[str] = None  # the line that shows it handled
    traceback: Optional[int] = None  # the line of the traceback it sits in


@dataclass(frozen=True)
class Ending:
    """The failure a log ends in: the line that says it, and where that failure starts."""

    line: int
    text: str
    start: int

    def says(self) -> str:
        return f"line {self.line}: {self.text}"


def closure(buf: bytes, a: int, line_of: Callable[[int], int]) -> Closure:
    """The closure of the evidence line holding offset `a` of `buf` (a block with context either side)."""
    start = buf.rfind(b"\n", 0, a) + 1
    end = buf.find(b"\n", a)
    end = len(buf) if end < 0 else end
    line = buf[start:end]
    handled = handled_in(buf[start : min(len(buf), end + 4096)].split(b"\n"))
    tb = buf.rfind(b"Traceback (most recent call last)", max(0, start - TRACEBACK_BYTES), start)
    traceback = None
    if tb >= 0:
        tb_start = buf.rfind(b"\n", 0, tb) + 1
        tb_end = buf.find(b"\n", tb)
        before = buf[max(0, buf.rfind(b"\n", 0, max(0, tb_start - 1)) - 256) : tb_start]
        tb_line = buf[tb_start : tb_end if tb_end >= 0 else len(buf)]
        if not is_warning(tb_line) and not _IGNORED.search(before):
            traceback = line_of(tb)
    return Closure(is_warning(line), handled, traceback)


def read_ending(tail: bytes, first_line: int) -> Optional[Ending]:
    """The failure the log ends in, from its last bytes (`tail`, whose first line is `first_line`);
    None when the log ends in no failure (a clean run, warnings only, every error handled).

    A last failure that only wraps the output before it (a subprocess's exit status, torchrun's
    `ChildFailedError`, a process that aborted) is followed back to the failure it wraps, the
    last one before it that is not a wrapper: that is what the log ends in, from its start on."""
    lines = tail.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    last = _last_failure(lines, len(lines))
    if last is None:
        return None
    i, start = last
    while _WRAPPER.search(b"\n".join(lines[start : i + 1])):
        cause = _last_failure(lines, start)
        if cause is None:
            return Ending(first_line + i, shown(lines[i]), first_line)  # its cause is before the tail
        i, start = cause
    return Ending(first_line + i, shown(lines[i]), first_line + start)


def _last_failure(lines: List[bytes], end: int) -> Optional[Tuple[int, int]]:
    """The last failure in `lines[:end]` that nothing after it shows handled: (its last line,
    where it starts)."""
    for i in range(end - 1, -1, -1):
        if not is_failure(lines[i]) or _HANDLED.search(lines[i]) or handled_in(lines[i:end]) is not None:
            continue  # none, one saying it is handled ("Ignoring this choice."), or one handled after
        start = _episode_start(lines, i)
        if start is None:  # an ignored exception's traceback (`Exception ignored in: ...`)
            continue
        return i, _chain_start(lines, start)
    return None


def _episode_start(lines: List[bytes], i: int) -> Optional[int]:
    """Where the failure whose last line is `lines[i]` starts: its traceback, else the frames above
    it; None when that traceback is one Python says it ignored."""
    floor = max(0, i - EPISODE_LINES)
    for j in range(i, floor - 1, -1):
        line = lines[j]
        if j < i and _HANDLED.search(line):
            break
        if _TRACEBACK.search(line) and not is_warning(line):
            before = b"\n".join(lines[max(0, j - 2) : j])
            return None if _IGNORED.search(before) else j
    j = i
    while j > 0 and (lines[j - 1].startswith((b" ", b"\t")) or lines[j - 1].lstrip().startswith(b'File "')):
        j -= 1
    return j


def _chain_start(lines: List[bytes], start: int) -> int:
    """Back through the tracebacks chained before this one ("The above exception was the direct cause
    of the following exception:"): one failure."""
    while True:
        j = start - 1
        while j >= 0 and start - j <= 3 and not lines[j].strip():
            j -= 1
        if j < 0 or not _CHAINED.search(lines[j]):
            return start
        above = range(j - 1, max(-1, j - EPISODE_LINES), -1)
        k = next((k for k in above if _TRACEBACK.search(lines[k])), None)
        if k is None:
            return 0  # chained to a traceback before the tail: the failure starts at least there
        start = k


def bystander(
    closures: Sequence[Closure], lines: Sequence[int], related: bool, ending: Optional[Ending]
) -> Optional[str]:
    """Why a match is a bystander of the failure the log ends in, or None when it may be its cause.

    `closures` and `lines` are its evidence's; `related` says whether any of its issue's signatures
    appears in the final failure (from `ending.start` on).
    """
    if not closures:
        return None
    first = min(lines)
    if ending is None:
        if all(c.handled for c in closures):
            handled = next(c.handled for c in closures if c.handled)
            return f"line {first}'s error was handled ({handled}), and the log ends without a failure"
        return None
    if related or any(line >= ending.start for line in lines):
        return None
    kinds = []
    for c in closures:
        if c.warning:
            kinds.append("a warning")
        elif c.handled:
            kinds.append(f"an error it shows handled ({c.handled})")
        elif c.traceback is not None and c.traceback < ending.start:
            kinds.append(f"an earlier error (the traceback of line {c.traceback})")
        else:
            return None
    return f"line {first} is {kinds[0]}, and the log ends in another failure, {ending.says()}"
