"""The versions a log states, and what they say about a match.

Users paste `collect_env` blocks, `pip list` or `pip freeze` output, wheel paths
(`site-packages/torch-2.5.1.dist-info`, `torch-2.5.1+cu121-cp311-...whl`), `PyTorch version: 2.5.1`
lines and prose ("torch.compile does not work in PyTorch 2.2.0"). Those are the versions of the
machine that failed, and they decide two things: a match outside the issue's affected range is
the same words from another cause (or a regression), and an upgrade to what is already installed
is no advice at all.

Not every number after a package name is its version: `CUDA used to build PyTorch: 12.1` is
CUDA's, `libtorch-2.5` is another package. The CUDA release torch was built for and the driver
are read on their own lines (the header shows them; no issue range uses them yet).
"""

from __future__ import annotations

import re
import shlex
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core.model import KnownIssue, Workaround

_VERSION = rb"v?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.?dev|\.?post)\d+)*(?:\+[0-9a-z.]+)?)"
#: `torch==2.5.1`, `torch: 2.5.1`, `torch 2.5.1` (pip list), `torch-2.5.1` (a wheel or dist-info),
#: `PyTorch version: 2.5.1`, `[conda] pytorch 2.5.1 py3.11_cuda12.1...`, `torch.__version__ = '2.5.1'`.
_MENTION = re.compile(
    rb"(t(?:orch[_-]xla|orch|riton))(?:[_-]rocm)?(?:\.__version__\W{0,8}|\s+version)?"
    rb"(?:\s*(?:==|:|=)\s*|[ \t]+|-)" + _VERSION
)
_NAMES = {b"torch": "torch", b"triton": "triton"}
#: `CUDA used to build PyTorch: 12.1`, `torch.version.cuda: 12.4`, `CUDA runtime version: 12.4.131`,
#: `+cu124`, `Driver Version: 550.54.15`. Each is searched only around a literal it cannot match
#: without (a regex that may start anywhere costs a second per 50 MB of log).
_CUDA = re.compile(
    rb"(?:used to build pytorch|torch\.version\.cuda\W{0,8}|cuda runtime version|cuda version)"
    rb"\s*[:=]?\s*'?(\d+\.\d+)"
)
_CUDA_TAG = re.compile(rb"\d+\.\d+(?:\.\d+)?\+cu(\d{2,3})\b")  # torch 2.5.1+cu124, and its siblings
_DRIVER = re.compile(rb"driver version\s*[:=]?\s*(\d{3}\.\d+(?:\.\d+)?)")
_NEAR = (
    (b"version", _CUDA, 40),
    (b"used to build", _CUDA, 0),
    (b"+cu", _CUDA_TAG, 24),
    (b"driver version", _DRIVER, 0),
)


def _near_literal(
    low: bytes, literal: bytes, regex: re.Pattern, back: int, lo: int = 0, stop: Optional[int] = None
) -> List[bytes]:
    """regex's first group wherever it matches from `back` bytes before a `literal` (one that
    starts in [lo, stop)) to the end of its line, found at memchr speed."""
    out = []
    stop = len(low) if stop is None else stop
    pos = low.find(literal, lo)
    while 0 <= pos < stop:
        end = low.find(b"\n", pos)
        hi = len(low) if end < 0 else min(end, pos + 200)
        m = regex.search(low, max(0, pos - back), hi)
        if m:
            out.append(m.group(1))
        pos = low.find(literal, max(hi, pos + 1))
    return out


def versions_mentioned(
    low: bytes,
    limit: int = 5,
    found: Optional[Dict[str, List[str]]] = None,
    lo: int = 0,
    hi: Optional[int] = None,
) -> Dict[str, List[str]]:
    """Package -> the versions the lower-cased log states, first seen first (at most `limit`).

    A stream adds one block at a time: `found` is what earlier blocks stated, and only mentions
    that start in low[lo:hi] are read (the rest of `low` is the block's context).
    """
    found = {} if found is None else found
    hi = len(low) if hi is None else hi

    def add(name: str, version: str) -> None:
        seen = found.setdefault(name, [])
        if version not in seen and len(seen) < limit:
            seen.append(version)

    for m in _MENTION.finditer(low, lo, min(len(low), hi + 200)):
        if m.start() >= hi:
            break
        before = low[max(0, m.start() - 24) : m.start()]
        if before.endswith(b"py"):  # PyTorch
            before = before[:-2]
        if before[-1:].isalnum() or before[-1:] == b"_":
            continue  # libtorch-2.5, mytriton 1.0, numpytorch
        if before.rstrip().endswith(b"build"):
            continue  # "CUDA used to build PyTorch: 12.1" states CUDA's version
        name = _NAMES.get(m.group(1), "torch-xla")  # pytorch-triton: its "triton" is read
        add(name, m.group(2).decode("ascii").lstrip("v"))
    for literal, regex, back in _NEAR:
        for raw in _near_literal(low, literal, regex, back, lo, hi):
            v = raw.decode("ascii")
            if regex is _CUDA_TAG:
                v = f"{v[:-1]}.{v[-1]}"
            add("driver" if regex is _DRIVER else "cuda", v)
    return found


def in_range(
    issue: KnownIssue, versions: Mapping[str, List[str]]
) -> Tuple[Optional[bool], Dict[str, List[str]], List[str]]:
    """Whether the versions the log states fall in the issue's affected range.

    True when, for every affected package the log names, one of its versions is inside; False
    when one package's versions are all outside; None when the log names none of them.
    """
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    verdict: Optional[bool] = None
    seen: Dict[str, List[str]] = {}
    clauses: List[str] = []
    for pkg, spec in issue.affected.items():
        name = canonicalize_name(pkg)
        mentioned = versions.get(name)
        if not mentioned:
            continue
        try:
            spec_set = SpecifierSet(spec)
            inside = [v for v in mentioned if spec_set.contains(Version(v), prereleases=True)]
        except (InvalidSpecifier, InvalidVersion):
            continue
        seen[name] = mentioned
        shown = f"{_shown(name)} {', '.join(mentioned)}"
        if inside:
            clauses.append(f"the log's {shown} is in the affected range {spec}")
            verdict = True if verdict is None else verdict
        else:
            fixed = issue.fixed.get(pkg)
            past = f" (fixed in {fixed})" if fixed else ""
            clauses.append(f"the log's {shown} is outside the affected range {spec}{past}")
            verdict = False
    return verdict, seen, clauses


def _shown(name: str) -> str:
    return {"torch-xla": "torch_xla"}.get(name, name)


def already_met(workaround: Workaround, versions: Mapping[str, Sequence[str]]) -> Optional[str]:
    """Why a workaround does nothing for the versions the log states, or None when it may help.

    An upgrade (`pip install 'torch>=2.6'`) whose every named package the log already has at a
    satisfying version changes nothing; a workaround whose `applies` range excludes the log's
    versions does not apply there.
    """
    if versions and workaround.applies and not workaround.applies_to(versions):
        named = ", ".join(
            f"{_shown(n)} {' / '.join(versions[n])}" for n in workaround.applies if versions.get(n)
        )
        return f"not for the log's {named}"
    if workaround.kind not in ("upgrade", "install", "pin") or not workaround.command:
        return None
    wanted = _pip_requirements(workaround.command)
    if not wanted:
        return None
    from packaging.version import InvalidVersion, Version

    said = []
    for name, spec in wanted:
        have = versions.get(name)
        if not have or not spec:
            return None
        try:
            if not all(spec.contains(Version(Version(v).public), prereleases=True) for v in have):
                return None
        except InvalidVersion:
            return None
        said.append(f"{_shown(name)} {' / '.join(have)}")
    return f"the log's {', '.join(said)} already satisfies this"


def _pip_requirements(command: str) -> List[Tuple[str, object]]:
    """(canonical name, SpecifierSet) of each requirement a `pip install` command names."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if "install" not in words or not any(w in ("pip", "pip3") or w.endswith("/pip") for w in words):
        return []
    out = []
    for word in words[words.index("install") + 1 :]:
        if word.startswith("-") or word in ("&&", ";", "|"):
            if word in ("&&", ";", "|"):
                break
            continue
        try:
            req = Requirement(word)
        except InvalidRequirement:
            continue
        out.append((canonicalize_name(req.name), req.specifier))
    return out
