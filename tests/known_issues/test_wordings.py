"""Every wording of a known issue's error, read from the releases that raise it, is found by triage.

`inductor_doctor/core/_data/wordings.json` (written by `tools/release_audit.py wordings` from each
issue's `[[wording_sources]]`) holds every message template torch, Triton, triton-windows,
Transformers, vLLM and FlashInfer raise for a known issue, with the releases each belongs to. Each
template is rendered here, its blanks filled with plausible values (the issue's own `fill`, else a
filler chosen by the blank's name), as the log of its raise shows it: the frame of its source file
and the exception's line (a warning as torch's logger prints it, an `#error` as the compiler does),
and `explain --log` must find the issue it belongs to. A wording a signature does not cover fails
here with its release range and source line: widen the signature to the class, not to the string.

Runs offline, on the committed table; `python tests/known_issues/test_wordings.py` prints the figures
(templates matched, and how surely).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
TABLE_PATH = REPO / "inductor_doctor" / "core" / "_data" / "wordings.json"
TABLE: Dict[str, Any] = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
CASES: List[Tuple[str, Dict[str, Any]]] = [
    (issue, w) for issue, entry in TABLE["issues"].items() for w in entry["wordings"]
]

#: A blank's filler by its name (the expression that fills it in the source), or for a blank the
#: source does not name (`{}`, `%s`) by the words just before it; first match wins.
FILLERS: Tuple[Tuple[str, str], ...] = (
    (r"sm_$", "61"),
    (r"GPU$", "0"),
    (r"\bpid\b|code|lineno|\bline\b|count|\bnum", "4242"),
    (r"python|py_ver|sys\.version", "3.13"),
    (r"capability|cap\b|\bmajor", "6"),
    (r"\bminor", "1"),
    (r"\bsm\b|arch", "61"),
    (r"device_props\.name|device_name|\bname\b|gpu", "Tesla P100-PCIE-16GB"),
    (r"cudnn|compile_version|runtime_version", "(9, 1, 0)"),
    (r"driver", "11040"),
    (r"version|\($", "12.4"),
    (r"cuda_home|home|path|dir|file|include", "/usr/local/cuda"),
    (r"compiler|cxx|\bcc\b", "g++"),
    (r"required", "98304"),
    (r"limit", "65536"),
    (r"idx|index|device|ordinal|\bi\b", "1"),
    (r"key", "fx2kqoegiysdbz4mzgy5dtm7wbc7ec3dkwz6zh7y6ycaaiu6e7vv"),
)
GENERIC = "value"


def fill(issue: str, name: str, before: str = "") -> str:
    """The value a blank gets: the issue's own example for it, else the first filler its name (or,
    unnamed, the words before it) fits."""
    own = TABLE["issues"][issue].get("fill", {})
    if name in own:
        return own[name]
    name = name or before[-30:]
    for pattern, value in FILLERS:
        if re.search(pattern, name, re.IGNORECASE):
            return value
    return GENERIC


def render(issue: str, template: str) -> str:
    """A template with its blanks filled and its doubled braces undone."""
    def blank(m: re.Match[str]) -> str:
        token = m.group(0)
        return token[0] if token in ("{{", "}}") else fill(issue, m.group(1), template[: m.start()])

    return re.sub(r"\{\{|\}\}|\{([^{}]*)\}", blank, template)


def as_raised(wording: Dict[str, Any], text: str) -> str:
    """The lines a log of this raise site shows: its frame and the exception, a logged warning, or a
    compiler's `#error`."""
    where = next(reversed(wording["at"].values()))
    path, _, line = where.rpartition(":")
    site = f"/opt/venv/lib/python3.12/site-packages/{path}"
    kind = wording["kind"]
    if kind == "#error":
        return f"{site}:{line}:2: error: #error {text}\n"
    if path.endswith((".h", ".hpp", ".cuh", ".c", ".cc", ".cpp", ".cu")):  # a C++ message, as thrown
        return f"terminate called after throwing an instance of 'c10::Error'\n  what():  {text}\n"
    if kind.startswith("raise "):
        exc = kind[len("raise "):].split("(")[0] or "RuntimeError"
        return (f"Traceback (most recent call last):\n  File \"{site}\", line {line}, in <module>\n"
                f"    {kind}(...)\n{exc}: {text}\n")
    if "." in kind and kind.split(".")[-1] in ("warning", "warn", "error", "exception", "info", "debug"):
        return f"W1122 07:00:00.000000 4242 {path}:{line}] {text}\n"
    return (f"Traceback (most recent call last):\n  File \"{site}\", line {line}, in <module>\n"
            f"RuntimeError: {text}\n")


def triage(text: str):
    from inductor_doctor.kb import registry
    from inductor_doctor.triage.engine import LogInput, triage_text

    data = text.encode("utf-8")
    return triage_text(LogInput("wording", data, len(data)), list(registry()))


def case_id(case: Tuple[str, Dict[str, Any]]) -> str:
    issue, w = case
    return f"{issue}:{w['package']}-{w['first']}:{w['template'][:40]}"


def test_the_table_is_what_the_data_files_declare():
    """A data file's `[[wording_sources]]` changed (or an issue gained some) without the table being
    read again: `python tools/release_audit.py wordings` and commit both."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        from audit import wordings
    finally:
        sys.path.remove(str(REPO / "tools"))
    assert wordings.stale(TABLE) == []


def test_every_wording_says_where_it_comes_from():
    for issue, w in CASES:
        assert w["package"] in TABLE["packages"], (issue, w["package"])
        assert w["first"] in w["at"] and w["last"] in w["at"], (issue, w)
        assert all(re.match(r"[\w/.+-]+:\d+$", at) for at in w["at"].values()), (issue, w["at"])
        assert w["releases"].startswith(">=" + w["first"]), (issue, w)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_wording_is_found(case):
    issue, wording = case
    text = as_raised(wording, render(issue, wording["template"]))
    result = triage(text)
    found = {m.issue.id: m.confidence for m in result.matched}
    assert issue in found, (
        f"{issue}: the wording of {wording['package']} {wording['releases']} "
        f"({next(reversed(wording['at'].values()))}) is not found:\n{text}\nmatched: {found}")


def figures() -> Dict[str, Any]:
    """How many templates triage finds, raised and bare, and how surely."""
    out = {"issues": len(TABLE["issues"]), "templates": len(CASES),
           "releases": sum(len(p["read"]) for p in TABLE["packages"].values()),
           "raised": dict.fromkeys(("exact", "partial", "possible", "none"), 0),
           "bare": dict.fromkeys(("exact", "partial", "possible", "none"), 0),
           "missed": []}
    for issue, w in CASES:
        text = render(issue, w["template"])
        for form, log in (("raised", as_raised(w, text)), ("bare", text + "\n")):
            found = {m.issue.id: m.confidence for m in triage(log).matched}
            out[form][found.get(issue, "none")] += 1
            if form == "raised" and issue not in found:
                out["missed"].append(f"{issue}: {w['package']} {w['releases']}: {w['template'][:100]}")
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    print(json.dumps(figures(), indent=1))
