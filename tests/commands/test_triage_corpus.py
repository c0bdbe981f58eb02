"""Every corpus log is matched to its issue and to nothing else; unrelated logs match nothing.

The corpus (`tests/data/triage/`, see its README) holds real error output from the upstream
threads, and hard negatives: real logs worded like an issue whose cause was another. Each entry is
also tried the way users paste it: with Windows line endings and colour codes, and buried in the
middle of a long log. What today's signatures get wrong is recorded as strict xfails
(`known-false-positive`, `known-miss`), so the fix that corrects it has to drop the header.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from inductor_doctor.kb import registry
from inductor_doctor.triage.engine import EXACT, LogInput, triage_text
from inductor_doctor.triage.scan import lowered, normalize
from inductor_doctor.triage.versions import in_range, versions_mentioned

CORPUS = Path(__file__).resolve().parents[1] / "data" / "triage"


@dataclass
class Entry:
    path: Path
    expect: List[str]
    log: str
    confidence: Optional[str] = None
    near_miss: List[str] = field(default_factory=list)
    source: str = ""
    known_false_positive: List[str] = field(default_factory=list)
    known_miss: str = ""
    versions: str = ""
    out_of_range: List[str] = field(default_factory=list)


def _split(value: str) -> List[str]:
    return [v.strip() for v in value.split(",") if v.strip() and v.strip() != "none"]


def load(path: Path) -> Entry:
    header: Dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == "# ---":
            body = "".join(lines[i + 1 :])
            break
        m = re.match(r"#\s*([\w-]+):\s*(.*)", line)
        if m:
            key = m.group(1).lower()
            header[key] = (header.get(key, "") + " " + m.group(2)).strip()
    else:
        raise AssertionError(f"{path.name}: no '# ---' line ends the header")
    assert "expect" in header and "source" in header, f"{path.name}: expect and source are required"
    return Entry(
        path,
        _split(header["expect"]),
        body,
        header.get("confidence"),
        _split(header.get("near-miss", "")),
        header["source"],
        _split(header.get("known-false-positive", "")),
        header.get("known-miss", ""),
        header.get("versions", ""),
        _split(header.get("out-of-range", "")),
    )


ENTRIES = [load(p) for p in sorted(CORPUS.glob("*.log"))]


def resolve(names: List[str]) -> List[Optional[str]]:
    out = []
    for name in names:
        issue = registry().find(name)
        out.append(issue.id if issue else None)
    return out


def _colour(text: str) -> str:
    """What a terminal capture looks like: CRLF and SGR codes around error lines."""
    out = []
    for line in text.splitlines():
        if re.search(r"error|Error|fatal|undefined", line):
            line = f"\x1b[1;31m{line}\x1b[0m"
        out.append(line)
    return "\r\n".join(out) + "\r\n"


NOISE = "".join(
    f"2026-11-22T07:{i // 60 % 60:02d}:{i % 60:02d}.123Z INFO step {i} loss=0.{i % 97:02d} "
    f"lr=3e-4 tokens/s=12345 grad_norm=1.{i % 13}\n"
    for i in range(20000)
)


def _buried(text: str) -> str:
    return NOISE + text + NOISE


VARIANTS = {"as-posted": lambda t: t, "crlf-ansi": _colour, "buried": _buried}


def triage(text: str):
    data, stripped = normalize(text.encode("utf-8"))
    return triage_text(LogInput("corpus", data, len(data), ansi_stripped=stripped), list(registry()))


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.path.stem)
def test_corpus_entry(entry: Entry, variant: str, request):
    expected = resolve(entry.expect)
    if None in expected:
        missing = [n for n, i in zip(entry.expect, expected) if i is None]
        msg = f"{entry.path.name}: {missing} not registered yet"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    allowed_partial = {i for i in resolve(entry.near_miss) if i}
    result = triage(VARIANTS[variant](entry.log))
    matched = {m.issue.id: m for m in result.matched}

    if entry.known_false_positive:  # strict: passing means the signature was fixed; drop the header
        request.applymarker(
            pytest.mark.xfail(strict=True, reason=f"known false positive of {entry.known_false_positive}")
        )
    if entry.known_miss:  # strict, likewise: passing means the expected issue is now found; drop the header
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"known miss: {entry.known_miss}"))
    if not expected:
        stray = {
            i: m.confidence
            for i, m in matched.items()
            if not (i in allowed_partial and m.confidence != EXACT)
        }
        assert not stray, f"{entry.path.name} is unrelated but matched {stray}"
        return

    # A near-miss the entry names (the same words from another cause) may stand beside the expected
    # issue, never as exact and never first: "possibly torch-gpu-arch-missing" beside an extension's.
    beside = {i for i, m in matched.items()
              if i in allowed_partial and i not in expected and m.confidence != EXACT}
    assert set(matched) - beside == set(expected), (
        f"{entry.path.name}: expected {expected}, matched "
        f"{ {i: (m.confidence, [e.text for e in m.evidence]) for i, m in matched.items()} }"
    )
    assert result.matches[0].issue.id in expected, "the expected issue ranks first"
    if entry.confidence == "exact":
        for issue_id in expected:
            assert matched[issue_id].confidence == EXACT, f"{issue_id}: {matched[issue_id].confidence}"
    for m in matched.values():
        assert m.evidence and all(e.line >= 1 for e in m.evidence)


def test_several_issues_in_one_log():
    """Two real failures pasted together are both found, each with its own evidence line."""
    by_name = {e.path.stem: e for e in ENTRIES}
    a = by_name["triton_constexpr__pytorch_136512"]
    b = by_name["view_dtype_align__comfyui_gguf_257"]
    expected = set(resolve(a.expect + b.expect))
    if None in expected:
        pytest.skip("issues not registered yet")
    result = triage(a.log + "\n" + NOISE[:5000] + b.log)
    assert {m.issue.id for m in result.matched} == expected
    lines = {m.issue.id: m.evidence[0].line for m in result.matched}
    assert len(set(lines.values())) == 2


def test_every_registered_issue_with_signatures_has_a_corpus_entry():
    covered = {i for e in ENTRIES for i in resolve(e.expect) if i}
    missing = sorted(
        i.id for i in registry() if i.signatures and i.source == "builtin" and i.id not in covered
    )
    if missing and not os.environ.get("CI"):
        pytest.skip(f"no corpus entry yet for {missing}")
    assert not missing, f"no corpus entry for {missing}: add a real log from its upstream thread"


def hard_negatives(issue_id: str) -> List[Entry]:
    """Entries that expect nothing of `issue_id` but share its wording (they name it a near miss)."""
    return [e for e in ENTRIES if issue_id in resolve(e.near_miss) and issue_id not in resolve(e.expect)]


def test_every_issue_has_two_cited_hard_negatives():
    """Same words, another cause: what keeps a signature from claiming every log that quotes it."""
    thin = {
        i.id: len(hard_negatives(i.id))
        for i in registry()
        if i.signatures and i.source == "builtin" and len(hard_negatives(i.id)) < 2
    }
    if thin and not os.environ.get("CI"):
        pytest.skip(f"fewer than two hard negatives for {thin}")
    assert not thin, f"fewer than two hard negatives for {thin}: add real ones from upstream threads"


def test_every_entry_cites_its_source():
    for e in ENTRIES:
        assert re.search(r"https://github\.com/|[\w-]+/[\w.-]+#\d+", e.source), e.path.name


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.out_of_range], ids=lambda e: e.path.stem)
def test_out_of_range_entry_states_versions_outside_the_range(entry: Entry):
    """An entry marked out-of-range for an issue states versions the triage reads as outside its range.

    These logs are the same wording on a release the issue does not affect: a version-aware
    triage can only use them if it reads the versions the log states.
    """
    data, _ = normalize(entry.log.encode("utf-8"))
    versions = versions_mentioned(lowered(data))
    for name in entry.out_of_range:
        issue = registry().find(name)
        if issue is None:
            pytest.skip(f"{name} not registered yet")
        assert issue.affected, f"{entry.path.name}: {issue.id} has no affected range"
        verdict, seen, _ = in_range(issue, versions)
        assert verdict is False, f"{entry.path.name}: read {versions}, {issue.id} affected={issue.affected}"


def test_header_keys_fit_the_entry():
    """known-miss marks an expected issue; known-false-positive and out-of-range an issue id; a file
    named as a hard negative expects nothing and names the issue whose wording it shares."""
    for e in ENTRIES:
        if "__neg__" in e.path.name:
            assert not e.expect and e.near_miss, f"{e.path.name}: needs expect none and near-miss"
        if e.known_miss:
            assert e.expect, f"{e.path.name}: known-miss on an entry that expects nothing"
        for name in e.known_false_positive + e.out_of_range:
            assert registry().find(name) or not os.environ.get("CI"), f"{e.path.name}: unknown id {name}"
