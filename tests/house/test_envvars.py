"""Every INDUCTOR_DOCTOR_<NAME> the tree uses is one the doctor knows, so none draws the warning
for an unknown name: the known list is the options' variables plus `envvars.DOCTOR_OWN`, and this
test reads every file of the tree for the names it uses."""

from __future__ import annotations

import re
from pathlib import Path

from inductor_doctor.cli import known_env_names, unknown_env_warnings

REPO = Path(__file__).resolve().parents[2]
NAME = re.compile(r"(?<![@\w])INDUCTOR_DOCTOR_[A-Z0-9_]*[A-Z0-9](?!\w*@@)")
SUFFIXES = (".py", ".md", ".sh", ".toml", "")
#: Names written as examples of what is not known (this test and the warning's own tests).
EXAMPLES = {"INDUCTOR_DOCTOR_FAIL_ONN", "INDUCTOR_DOCTOR_FORMATT",
            "INDUCTOR_DOCTOR_NOTHING"}  # gpu_states.sh: a variable to unset that no one sets


def used_names() -> dict:
    out: dict = {}
    for path in REPO.rglob("*"):
        if ".git" in path.parts or not path.is_file() or path.suffix not in SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for name in NAME.findall(text):
            out.setdefault(name, str(path.relative_to(REPO)))
    return out


def test_every_name_used_in_the_tree_is_known():
    known = known_env_names()
    unknown = {n: where for n, where in used_names().items() if n not in known and n not in EXAMPLES}
    assert unknown == {}, "add them to envvars.DOCTOR_OWN (or make them options)"


def test_the_options_variables_and_the_doctors_own_are_known():
    known = known_env_names()
    assert {"INDUCTOR_DOCTOR_FORMAT", "INDUCTOR_DOCTOR_FAIL_ON", "INDUCTOR_DOCTOR_CACHE_DIR",
            "INDUCTOR_DOCTOR_EARLY_ISA", "INDUCTOR_DOCTOR_TEST_ENVS", "INDUCTOR_DOCTOR_DEBUG"} <= known
    assert unknown_env_warnings({n: "1" for n in known}) == []
    [line] = unknown_env_warnings({"INDUCTOR_DOCTOR_FORMATT": "json", "PATH": "/bin"})
    assert "INDUCTOR_DOCTOR_FORMATT" in line and "did you mean INDUCTOR_DOCTOR_FORMAT?" in line
