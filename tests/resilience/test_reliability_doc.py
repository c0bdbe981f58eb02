"""docs/reliability.md, the fault catalog and the fault tests agree: none can drift from the others."""

from __future__ import annotations

import importlib
from pathlib import Path

from fault_canaries.faults import COVERED, FAULTS, table

DOC = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
BEGIN, END = "<!-- faults:begin -->", "<!-- faults:end -->"
TEST_MODULES = ("test_reliability", "test_reliability_fuzz", "test_security", "test_suppressions",
                "test_fleet", "test_fleet_distributed")


def test_every_fault_has_a_test_and_every_test_a_fault():
    for name in TEST_MODULES:
        importlib.import_module(name)
    assert sorted(set(FAULTS) - set(COVERED)) == [], "faults in the catalog that no test creates"
    assert set(COVERED) <= set(FAULTS)


def test_the_document_shows_the_catalog():
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip() + "\n"
    assert shown == table(), (
        "docs/reliability.md is out of date: paste the output of `python tests/fault_canaries/faults.py` "
        f"between {BEGIN} and {END}"
    )
