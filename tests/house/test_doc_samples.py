"""The samples in the README and docs/ read as a user's, not as the machine they were made on: no
checkout path, no pyenv root, no home directory, no wheel folder inside the checkout. A sample shows
`<venv>/...` and `~/...`, as `report` shows `/home/<user>`."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Paths that only ever belong to the machine a sample was made on.
MACHINE = re.compile(r"/work/|/root/|/\.pyenv/|/home/(?!<user>)[^/\s`'\")]+/|/Users/(?!<user>)[^/\s`'\")]+/"
                     r"|/\.whl/")


def documents() -> list:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def test_no_sample_carries_the_path_of_the_machine_it_was_made_on():
    found = []
    for path in documents():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if MACHINE.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:120]}")
    assert found == [], "\n".join(found)


def test_the_pattern_finds_what_it_must():
    for bad in ("/root/.pyenv/versions/3.11.7/lib", "/work/main/inductor_doctor/x.py", "/home/alice/venv/bin",
                "in /work/main/.whl/doctor", "/Users/bob/miniconda3/"):
        assert MACHINE.search(bad), bad
    for fine in ("<venv>/lib/python3.11/site-packages/torch", "~/.cache/inductor-doctor", "/home/<user>",
                 "/tmp/torchinductor_root", ".whl/doctor (in the checkout)"):
        assert not MACHINE.search(fine), fine
