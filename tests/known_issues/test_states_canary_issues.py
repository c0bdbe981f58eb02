"""The four canary-backed seed checks through the real CLI, on this machine's interpreter.

Here (torch 2.13 CPU, no GPU, no torch_xla): the block-mask canary really compiles with Inductor's
C++ backend and comes out `ok`; the two CUDA checks are decided by their static rules, which read
torch's source and find both fixes (`ok`, device `cuda`); xla-donor-hash is `not-applicable`.
On a machine with a GPU the CUDA rows come from canaries instead: see test_seed_gpu.py.
"""

from __future__ import annotations

from typing import Dict

import pytest
from conftest import has_cuda, run_json

from inductor_doctor.schemas import validate

#: The seeds no canary decides on this machine (CUDA without a GPU, XLA without torch_xla).
WITHOUT_CANARY_HERE = "triton-constexpr-dynamic,view-dtype-align,xla-donor-hash"
SEEDS = "block-mask-cpu," + WITHOUT_CANARY_HERE


def by_id(report: dict) -> Dict[str, dict]:
    rows: Dict[str, dict] = {}
    for r in report["results"]:
        rows.setdefault(r["id"], r)
    return rows


@pytest.fixture(scope="module")
def report() -> dict:
    """One real `check` of the four seeds (the block-mask canary compiles: ~30-40 s on 2 cores, so
    only the heavy stage asks for it)."""
    data = run_json(["check", "--only", SEEDS, "--no-cache"], timeout=900)
    validate("check", data)
    return data


@pytest.fixture(scope="module")
def without_canary() -> dict:
    """The three seeds no canary decides here (CUDA without a GPU, XLA without torch_xla), checked
    for real without the block-mask compile: the same rows the full check gives them."""
    data = run_json(["check", "--only", WITHOUT_CANARY_HERE, "--no-cache"], timeout=900)
    validate("check", data)
    return data


@pytest.mark.heavy
@pytest.mark.slow
def test_block_mask_canary_really_compiles_and_is_ok(report):
    row = by_id(report)["block-mask-cpu"]
    assert (row["device"], row["status"], row["basis"]) == ("cpu", "ok", "canary"), row
    assert row["reason"].startswith("canary ran clean (torch ")
    assert row["duration_s"] > 2, "a real Inductor C++ compile, not a skip"
    assert row["workarounds"] == [], "no workarounds on an ok finding"


@pytest.mark.slow
@pytest.mark.parametrize("issue_id,marker", [("triton-constexpr-dynamic", "specialize_symbolic"),
                                             ("view-dtype-align", "ReinterpretView")])
def test_cuda_checks_without_gpu_are_ok_from_torch_source(without_canary, issue_id, marker):
    if has_cuda():
        pytest.skip("with a GPU the canaries decide (test_seed_gpu.py)")
    row = by_id(without_canary)[issue_id]
    assert (row["device"], row["status"], row["basis"]) == ("cuda", "ok", "static"), row
    assert marker in row["reason"]
    assert row["duration_s"] == 0


@pytest.mark.slow
def test_xla_without_torch_xla_is_not_applicable(without_canary):
    row = by_id(without_canary)["xla-donor-hash"]
    assert (row["device"], row["status"]) == ("xla", "not-applicable"), row
    assert "torch_xla is not installed" in row["reason"]


@pytest.mark.heavy
@pytest.mark.slow
def test_all_four_and_nothing_else(report):
    assert sorted(by_id(report)) == sorted(SEEDS.split(","))
    assert report["meta"]["canaries_run"] >= 1
    assert report["summary"]["affected"] == 0 and report["summary"]["inconclusive"] == 0


def test_static_check_needs_no_canary_and_says_why():
    data = run_json(["check", "--static", "--only", SEEDS, "--no-cache"])
    validate("check", data)
    rows = by_id(data)
    assert (rows["block-mask-cpu"]["status"], rows["block-mask-cpu"]["basis"]) == ("ok", "version")
    assert "2.8.0 nightly" in rows["block-mask-cpu"]["reason"]
    for issue_id in ("triton-constexpr-dynamic", "view-dtype-align"):
        assert (rows[issue_id]["status"], rows[issue_id]["basis"]) == ("ok", "static")
    assert rows["xla-donor-hash"]["status"] == "not-applicable"
    assert all(r["duration_s"] == 0 for r in data["results"])


@pytest.mark.parametrize(
    "ref,issue_id",
    [("pytorch#151887", "block-mask-cpu"), ("fla#160", "triton-constexpr-dynamic"),
     ("ComfyUI-GGUF#257", "view-dtype-align"), ("xla#8467", "xla-donor-hash")],
)
def test_only_accepts_upstream_refs(ref, issue_id):
    data = run_json(["check", "--static", "--only", ref, "--no-cache"])
    assert {r["id"] for r in data["results"]} == {issue_id}
