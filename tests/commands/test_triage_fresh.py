"""A corpus kept apart from the one the signatures were written against: `tests/data/triage/fresh/`.

Its entries come from upstream threads no module or corpus entry cited when it was made, and each
was decided from the thread's own diagnosis (the `decision:` lines) before triage ever ran on it:
positives, and above all hard negatives, look-alike errors of the same subsystems from other causes.
Figures (recall; precision on the hard negatives, with "this is" and "looks like" counted apart, and
"possibly", the answer for a log that alone cannot tell its cause and names the one fact of a machine that
does, counted apart again):

    python tests/commands/test_triage_fresh.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

HERE = Path(__file__).resolve().parents[1]  # tests/
sys.path.insert(0, str(Path(__file__).resolve().parent))  # test_triage_corpus, beside this file

from test_triage_corpus import Entry, load, resolve  # noqa: E402

from inductor_doctor.kb import registry  # noqa: E402
from inductor_doctor.triage.context import POSSIBLE  # noqa: E402
from inductor_doctor.triage.engine import EXACT, LogInput, triage_text  # noqa: E402
from inductor_doctor.triage.scan import normalize  # noqa: E402

FRESH = HERE / "data" / "triage" / "fresh"
ENTRIES = [load(p) for p in sorted(FRESH.glob("*.log"))]


def outcome(entry: Entry) -> Tuple[str, Dict[str, str]]:
    """("positive"|"negative", issue id -> confidence of every match)."""
    data, stripped = normalize(entry.log.encode("utf-8"))
    result = triage_text(LogInput("fresh", data, len(data), ansi_stripped=stripped), list(registry()))
    matched = {m.issue.id: m.confidence for m in result.matches if m.confidence != "version-only"}
    return ("positive" if entry.expect else "negative"), matched


def figures() -> Dict[str, object]:
    """Recall on the positives; on the hard negatives, how many were called the look-alike exactly
    ("this is") or possibly ("looks like")."""
    pos = found = found_exact = 0
    neg = neg_exact = neg_possible = neg_machine = 0
    wrong: List[str] = []
    for e in ENTRIES:
        kind, matched = outcome(e)
        if kind == "positive":
            pos += 1
            want = {i for i in resolve(e.expect) if i}
            if want & set(matched):
                found += 1
                found_exact += any(matched.get(i) == EXACT for i in want)
            else:
                wrong.append(f"missed {e.path.name}: {matched}")
            continue
        neg += 1
        if any(c == EXACT for c in matched.values()):
            neg_exact += 1
            wrong.append(f"exact on {e.path.name}: {matched}")
        elif named(matched):
            neg_possible += 1
            wrong.append(f"looks like on {e.path.name}: {matched}")
        elif matched:
            neg_machine += 1
            wrong.append(f"possibly (the machine decides) on {e.path.name}: {matched}")
    return {
        "positives": pos, "found": found, "found_exact": found_exact,
        "hard_negatives": neg, "called_exactly": neg_exact, "called_possibly": neg_possible,
        "left_to_the_machine": neg_machine,
        "wrong": wrong,
    }


def named(matched: Dict[str, str]) -> Dict[str, str]:
    """The matches that name an issue from the log ("this is", "looks like"), without those the log
    leaves to a machine ("possibly X", decided by one fact of the machine the log came from)."""
    return {i: c for i, c in matched.items() if c != POSSIBLE}


def test_every_fresh_entry_cites_its_thread_and_its_decision():
    for e in ENTRIES:
        text = e.path.read_text(encoding="utf-8")
        assert e.source.startswith("https://github.com/"), e.path.name
        assert "# decision:" in text, f"{e.path.name}: say what the thread decided, and why"
        if not e.expect:
            assert e.near_miss, f"{e.path.name}: a hard negative names the issue it looks like"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.path.stem)
def test_fresh_entry(entry: Entry, request):
    """A positive is found; a hard negative is not named at all, not even as "looks like". Where its
    words alone are the issue's own (torch's bare "CUDA error: no kernel image ..."), "possibly X" is
    the honest answer: it names the fact that decides, and `--check` drops it on a machine without it."""
    if entry.known_miss:  # strict: finding it means the header goes
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"known miss: {entry.known_miss}"))
    kind, matched = outcome(entry)
    if kind == "positive":
        want = {i for i in resolve(entry.expect) if i}
        assert want & set(matched), f"{entry.path.name}: expected {want}, matched {matched}"
        return
    assert not named(matched), f"{entry.path.name} is a look-alike, but triage says {matched}"


if __name__ == "__main__":
    f = figures()
    print(f"positives       : {f['found']}/{f['positives']} found ({f['found_exact']} as 'this is')")
    print(f"hard negatives  : {f['hard_negatives']}, called 'this is' {f['called_exactly']}, "
          f"'looks like' {f['called_possibly']}, 'possibly' (the machine decides) {f['left_to_the_machine']}")
    for line in f["wrong"]:  # type: ignore[union-attr]
        print("  " + line)
