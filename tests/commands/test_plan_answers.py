"""`plan` keeps its three answers apart: predicted, cannot arise, cannot be predicted (and what decides it).

Before, `plan torch==2.13.0 --cxx clang++-19` predicted nothing and folded openmp-headers-missing
into "34 more cannot arise here (not-applicable); `--all` lists them" (exit 0), while `CXX=clang++-19
check` on the same machine says affected; and `plan --all` was "No such option" (exit 2). A row the
plan cannot predict is now `inconclusive` with `answer: cannot-be-predicted` and `decided_by` (the
option the plan lacks, or the issue's check where the stack is installed); one that cannot arise is
`not-applicable` with `answer: cannot-arise`; and a `--cxx` compiler that is on this machine is
probed as `check` would, so its rows are predictions, the same as `check`'s.
"""

from __future__ import annotations

import functools
import json
from typing import Dict, List, Mapping

import pytest
from conftest import run_cli, which_or_skip

from inductor_doctor.schemas import validate

ANSWER_OF = {"affected": "predicted", "likely": "predicted", "ok": "predicted",
             "not-applicable": "cannot-arise", "inconclusive": "cannot-be-predicted"}


@functools.cache
def plan_json(*args: str) -> dict:
    """`plan ARGS --format json` through the real CLI, in this process (a plan runs nothing but the
    compiler it names), each plan once."""
    from click.testing import CliRunner

    from inductor_doctor import cli

    result = CliRunner().invoke(cli.app, ["plan", *args, "--format", "json"], standalone_mode=False)
    assert result.exception is None and result.return_value in (0, 1), result.output
    doc = json.loads(result.output)
    validate("plan", doc)
    assert doc["meta"]["predicted"] is (result.return_value == 1)
    return doc


def rows(doc: Mapping) -> Dict[str, Mapping]:
    return {r["id"]: r for r in doc["results"]}


@pytest.fixture(scope="module")
def clang19_plan() -> dict:
    which_or_skip("clang++-19")
    return plan_json("torch==2.13.0", "--cxx", "clang++-19")


@pytest.fixture(scope="module")
def clang19_check() -> Dict[str, Mapping]:
    """What `CXX=clang++-19 check` says of the compiler's rows on this machine (one real run)."""
    which_or_skip("clang++-19")
    proc = run_cli(["check", "--only", "openmp-headers-missing,cxx-compiler-missing", "--static",
                    "--format", "json"], env={"CXX": "clang++-19"})
    assert proc.returncode in (0, 1), proc.stderr
    return {r["id"]: r for r in json.loads(proc.stdout)["results"]}


# --- the three answers, everywhere ----------------------------------------------------------------

PLANS = {
    "a pin, a compiler here": ("torch==2.13.0", "--cxx", "clang++-19"),
    "a pin alone": ("torch==2.13.0",),
    "a CPU-only build, a GPU and a driver": ("torch==2.13.0+cpu", "--gpu", "sm_90", "--driver", "550.54.15"),
    "a range, a compiler that is not here": ("torch>=2.4,<2.7", "--cxx", "clang++-99"),
}


@pytest.mark.parametrize("case", sorted(PLANS))
def test_every_row_is_one_of_three_answers_and_an_unpredicted_one_says_what_decides_it(case: str) -> None:
    doc = plan_json(*PLANS[case])
    for r in doc["results"]:
        assert r["answer"] == ANSWER_OF[r["status"]], r
        if r["answer"] == "cannot-be-predicted":
            assert r["reason"].startswith("cannot be predicted from the plan: "), r
            assert "inductor-doctor check --only " + r["id"] in r["decided_by"], r
        else:
            assert r["decided_by"] is None, r
            assert "cannot be predicted" not in r["reason"], r
    answers = doc["meta"]["answers"]
    assert sum(answers.values()) == len(doc["results"])


# --- cannot be predicted, and what decides it ----------------------------------------------------

#: (plan, issue, what its decided_by names)
UNPREDICTED = [
    (("torch==2.13.0",), "openmp-headers-missing", "add --cxx COMPILER to the plan"),
    (("torch==2.13.0",), "cxx-compiler-missing", "add --cxx COMPILER to the plan"),
    (("torch==2.13.0", "--cxx", "clang++-99"), "openmp-headers-missing",
     "CXX=clang++-99 inductor-doctor check --only openmp-headers-missing, where the stack is installed"),
    (("torch==2.13.0",), "torch-gpu-arch-missing", "add --gpu sm_XX to the plan"),
    (("torch==2.13.0", "--gpu", "sm_90"), "cuda-driver-too-old", "add --driver VER"),
    (("torch==2.13.0",), "libcuda-not-found", "inductor-doctor check --only libcuda-not-found"),
]


@pytest.mark.parametrize("case", range(len(UNPREDICTED)))
def test_what_the_plan_cannot_predict_is_said_so_never_cannot_arise(case: int) -> None:
    args, issue_id, decided = UNPREDICTED[case]
    found = rows(plan_json(*args))[issue_id]
    assert found["status"] == "inconclusive" and found["answer"] == "cannot-be-predicted", found
    assert decided in found["decided_by"], found


#: (plan, issue): what cannot arise in the planned stack, whatever the machine
CANNOT_ARISE = [
    (("torch==2.13.0",), "windows-long-paths"),
    (("torch==2.13.0",), "xla-torch-skew"),
    (("torch==2.13.0",), "torch-missing"),
    (("torch==2.13.0+cpu",), "torch-gpu-arch-missing"),
    (("torch==2.13.0", "--cxx", "g++"), "clang-on-linux"),
]


@pytest.mark.parametrize("case", range(len(CANNOT_ARISE)))
def test_what_cannot_arise_is_said_so(case: int) -> None:
    args, issue_id = CANNOT_ARISE[case]
    found = rows(plan_json(*args))[issue_id]
    assert found["status"] == "not-applicable" and found["answer"] == "cannot-arise", found


# --- a compiler that is here is probed, as check would -------------------------------------------


def test_a_named_compiler_that_is_here_is_probed_and_agrees_with_check(clang19_plan, clang19_check) -> None:
    planned = rows(clang19_plan)
    for issue_id in ("openmp-headers-missing", "cxx-compiler-missing"):
        assert planned[issue_id]["answer"] == "predicted"
        assert planned[issue_id]["status"] == clang19_check[issue_id]["status"], (planned[issue_id],
                                                                                  clang19_check[issue_id])
        assert planned[issue_id]["reason"].startswith("probed here: clang++-19 ") or \
            planned[issue_id]["reason"].startswith("probed here: Inductor compiles with clang++-19")
    assert clang19_plan["environment"]["cxx"]["probed"] is True
    assert clang19_plan["environment"]["cxx"]["path"]


@pytest.mark.parametrize("compiler", ["g++", "clang++-16"])
def test_each_compiler_here_is_asked_itself(compiler: str) -> None:
    """GCC brings its OpenMP; a clang without its libomp-N-dev does not: the answer is the compiler's."""
    which_or_skip(compiler)
    found = rows(plan_json("torch==2.13.0", "--cxx", compiler))["openmp-headers-missing"]
    assert found["answer"] == "predicted" and found["basis"] == "static"
    assert found["reason"].startswith(f"probed here: {compiler} ")
    assert found["status"] in ("ok", "affected")
    assert ("cannot compile" in found["reason"]) is (found["status"] == "affected")


# --- the text -------------------------------------------------------------------------------------


def test_text_keeps_the_answers_apart_and_all_lists_every_row(clang19_plan) -> None:
    which_or_skip("clang++-19")
    text = run_cli(["plan", "torch==2.13.0", "--cxx", "clang++-19"], env={"COLUMNS": "100"})
    assert text.returncode == (1 if clang19_plan["meta"]["predicted"] else 0), text.stderr
    flat = " ".join(text.stdout.split())
    n_unknown = clang19_plan["meta"]["answers"]["cannot-be-predicted"]
    n_arise = clang19_plan["meta"]["answers"]["cannot-arise"]
    assert f"{n_unknown} more cannot be predicted from the plan" in flat
    assert f"and {n_arise} cannot arise in it; `--all` lists them" in flat
    assert f"CANNOT BE PREDICTED from the plan: {n_unknown} issues, decided by" in flat
    assert "add --gpu sm_XX to the plan: " in flat
    assert f"; {n_unknown} cannot be predicted; {n_arise} cannot arise" in flat
    every = run_cli(["plan", "torch==2.13.0", "--cxx", "clang++-19", "--all"], env={"COLUMNS": "100"})
    assert every.returncode == text.returncode, every.stderr
    listed: List[str] = [line.split()[0] for line in every.stdout.splitlines() if line[:1].isalpha()]
    assert set(rows(clang19_plan)) <= set(listed)
    assert "unpredicted" in every.stdout and "n/a" in every.stdout


# --- every issue's hook, as a class: "cannot arise" is never an input the plan lacks ---------------

#: One option at a time added to a plan of a pinned CUDA torch: what a plan may lack.
OPTIONS = {
    "--gpu sm_90": {"gpu": "sm_90"},
    "--gpu sm_61": {"gpu": "sm_61"},
    "--driver 470.57.02": {"driver": "470.57.02"},
    "--cxx g++-9": {"cxx": "g++-9"},
    "--cxx clang++-19": {"cxx": "clang++-19"},
}


def _statuses(**options: str) -> Dict[str, str]:
    from inductor_doctor.kb import registry
    from inductor_doctor.plan.predict import predict_issue
    from inductor_doctor.plan.resolve import PlanRequest, build_input

    inp = build_input(PlanRequest(specs=["torch==2.6.0"], python_version="3.11", **options))[0]
    out: Dict[str, str] = {}
    for issue in registry():
        if issue.predict is None:
            continue
        found = predict_issue(inp, issue)
        out[issue.id] = "+".join(sorted({f.status.value for f in found}))
    return out


def test_no_hook_says_cannot_arise_where_an_option_of_the_plan_decides() -> None:
    """Every issue's `predict` hook, the knowledge base's and any added later: a row that is
    `not-applicable` without an option and something else with it was never "cannot arise": it was
    "cannot be predicted" without that option (`unpredictable`, with the option in `decided_by`)."""
    base = _statuses()
    wrong = []
    for shown, options in OPTIONS.items():
        for issue_id, status in _statuses(**options).items():
            if base[issue_id] == "not-applicable" and status != "not-applicable":
                wrong.append(f"{issue_id}: not-applicable without {shown}, {status} with it")
    assert not wrong, wrong
