"""Seed checks against real old stacks, in the cached venvs built by tests/envs/build.sh:
torch 2.5.1 + torch_xla 2.5.1 (has pytorch/xla#8464 and pytorch#136504) and torch 2.6.0 +
torch_xla 2.6.0 (both fixed). `pytest -m envs` runs them; the default run skips them.
"""

from __future__ import annotations

from typing import Dict

import pytest
from conftest import run_json, venv_python

from inductor_doctor.schemas import validate

pytestmark = pytest.mark.envs


def rows(data: dict) -> Dict[str, dict]:
    validate("check", data)
    return {r["id"]: r for r in data["results"]}


def test_xla_donor_hash_is_affected_on_torch_xla_2_5_1_and_the_workaround_holds():
    py = venv_python("xla-2.5.1")
    data = run_json(["check", "--only", "xla-donor-hash", "--python", py, "--no-cache"], timeout=900)
    row = rows(data)["xla-donor-hash"]
    assert (row["device"], row["status"], row["basis"]) == ("xla", "affected", "canary"), row
    assert "deleted or donated buffer" in row["reason"] or "t1=4" in row["reason"], row["reason"]
    # The canary re-ran the steps with the documented workaround: it must have come out clean.
    assert "with XLA_ENABLE_PARAM_ALIASING=0: clean (t1=3, t2=4)" in row["reason"]
    assert "export XLA_ENABLE_PARAM_ALIASING=0" in [w["command"] for w in row["workarounds"]]
    assert data["summary"]["affected"] == 1


def test_xla_donor_hash_is_ok_on_torch_xla_2_6_0():
    py = venv_python("xla-2.6.0")
    data = run_json(["check", "--only", "xla-donor-hash", "--python", py, "--no-cache"], timeout=900)
    row = rows(data)["xla-donor-hash"]
    assert (row["device"], row["status"], row["basis"]) == ("xla", "ok", "canary"), row


def test_xla_with_the_workaround_in_effect_is_ok_and_says_why():
    """With XLA_ENABLE_PARAM_ALIASING=0 exported, the user's programs do not hit the bug: the verdict
    is about the stack as it runs here (a Dockerfile with that ENV passes its gate), and says that
    the workaround is what keeps it ok, on this torch_xla that still has the bug."""
    py = venv_python("xla-2.5.1")
    env = {"XLA_ENABLE_PARAM_ALIASING": "0"}
    live = rows(run_json(["check", "--only", "xla-donor-hash", "--python", py, "--no-cache"], env=env,
                         timeout=900))["xla-donor-hash"]
    assert (live["status"], live["basis"]) == ("ok", "canary"), live
    assert "XLA_ENABLE_PARAM_ALIASING=0 as set here" in live["reason"], live["reason"]
    static = rows(run_json(["check", "--static", "--only", "xla-donor-hash", "--python", py, "--no-cache"],
                           env=env))["xla-donor-hash"]
    assert (static["status"], static["basis"]) == ("ok", "version"), static
    assert "XLA_ENABLE_PARAM_ALIASING=0 is set here" in static["reason"]


@pytest.mark.parametrize(
    "venv,expected",
    [
        # torch 2.5.1: no `specialize_symbolic` (pytorch#136504 present), no alignment asserts at all.
        ("xla-2.5.1", {"triton-constexpr-dynamic": ("likely", "static"), "view-dtype-align": ("ok", "static"),
                       "xla-donor-hash": ("likely", "version"), "block-mask-cpu": ("ok", "version")}),
        ("xla-2.6.0", {"triton-constexpr-dynamic": ("ok", "static"), "view-dtype-align": ("ok", "static"),
                       "xla-donor-hash": ("ok", "version"), "block-mask-cpu": ("ok", "version")}),
    ],
)
def test_static_rules_read_the_real_old_torch(venv, expected):
    py = venv_python(venv)
    data = run_json(["check", "--static", "--python", py, "--no-cache", "--only",
                     ",".join(expected)])
    got = {i: (r["status"], r["basis"]) for i, r in rows(data).items()}
    assert got == expected
    if venv == "xla-2.5.1":
        reason = rows(data)["triton-constexpr-dynamic"]["reason"]
        assert "torch 2.5.1" in reason and "lacks" in reason, reason
