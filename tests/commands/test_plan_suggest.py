"""`plan --suggest`: what to install, for the machines the issue names and this one, through the CLI.

Each case is a machine where the newest release is wrong, and the solver must pass it over with
the reason the wheel facts give (its CUDA's driver floor, its arch list, its Python tags, the
user's own pin). The facts behind each answer are the release snapshot's, read from the wheels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest
from conftest import has_cuda, local_torch_index, run_cli

from inductor_doctor.plan.suggest import Machine, solve
from inductor_doctor.schemas import validate


def suggest(*args: str) -> dict:
    proc = run_cli(["plan", "--suggest", *args, "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    validate("suggest", doc)
    assert proc.returncode == (0 if doc["ok"] else 1)
    return doc


def over(doc: dict) -> List[str]:
    return [f"{o['torch']} {o['variant']}: {o['reason']}" for o in doc["passed_over"]]


def test_blackwell_consumer_card_on_a_575_driver_gets_the_newest_cuda12_build():
    doc = suggest("--gpu", "sm_120", "--driver", "575.57.08", "--python-version", "3.12")
    s = doc["suggestion"]
    assert (s["torch"], s["variant"], s["triton"]) == ("2.10.0", "cu128", "3.6.0") and s["clean"]
    assert "sm_120" in s["archs"] and s["pip"] == "pip install torch==2.10.0 triton==3.6.0"
    assert s["uv"] == "uv pip install torch==2.10.0 triton==3.6.0"
    assert over(doc)[0] == ("2.15.0 cu132: cuda-driver-too-old: CUDA 13.2 needs driver >= 580.65.06; "
                            "this one is 575.57.08")
    assert len(doc["passed_over"]) == 7  # 2.11.0 ... 2.15.0, all CUDA 13


def test_blackwell_on_a_580_driver_gets_the_newest_release():
    doc = suggest("--gpu", "sm_120", "--driver", "580.95.05", "--python-version", "3.12")
    assert doc["suggestion"]["torch"] == "2.15.0" and doc["passed_over"] == []


def test_pascal_card_gets_the_last_build_with_its_kernels_and_the_truth_about_triton():
    doc = suggest("--gpu", "sm_61", "--driver", "550.54.14", "--python-version", "3.11")
    s = doc["suggestion"]
    assert (s["torch"], s["variant"]) == ("2.7.1", "cu126") and not s["clean"] and not doc["ok"]
    assert "sm_60" in s["archs"]
    assert [i["id"] for i in doc["issues_no_release_avoids"]] == ["gpu-too-old-for-triton"]
    arch = [o for o in over(doc) if o.startswith("2.10.0")]
    assert arch and "torch-gpu-arch-missing: built for sm_70" in arch[0] and "no kernel for sm_61" in arch[0]


def test_volta_card_is_passed_over_by_the_releases_that_dropped_sm70():
    doc = suggest("--gpu", "sm_70", "--driver", "580.95.05", "--python-version", "3.11")
    assert (doc["suggestion"]["torch"], doc["suggestion"]["variant"]) == ("2.10.0", "cu128")
    assert all("torch-gpu-arch-missing: built for sm_75" in o for o in over(doc)), over(doc)


def test_hopper_on_an_old_driver_gets_a_cuda12_build():
    doc = suggest("--gpu", "sm_90", "--driver", "525.60.13", "--python-version", "3.11")
    assert (doc["suggestion"]["torch"], doc["suggestion"]["cuda"]) == ("2.10.0", "12.8")
    assert all("needs driver >= 580.65.06; this one is 525.60.13" in o for o in over(doc))


@pytest.mark.skipif(has_cuda(), reason="this host has a GPU: the probe's answer is a CUDA build")
def test_this_cpu_host_gets_a_cpu_build_from_the_cpu_index():
    doc = suggest()
    m, s = doc["machine"], doc["suggestion"]
    assert m["source"].startswith("this machine") and m["gpus"] == []
    assert s["variant"] == "cpu" and s["index_url"] == "https://download.pytorch.org/whl/cpu"
    assert s["pip"].endswith("--index-url https://download.pytorch.org/whl/cpu") and s["triton"] is None


def test_the_users_own_pin_is_honoured(tmp_path: Path):
    req = tmp_path / "requirements.txt"
    req.write_text("numpy\ntorch<2.10\n")
    doc = suggest("--gpu", "sm_120", "--driver", "580.95.05", "--python-version", "3.12", "-r", str(req))
    assert doc["suggestion"]["torch"] == "2.9.1"
    assert over(doc)[0] == f"2.15.0 cu132: excluded by {req}:2 (torch<2.10)"


def test_a_python_without_wheels_is_passed_over():
    doc = suggest("--gpu", "sm_90", "--driver", "580.95.05", "--python-version", "3.10")
    assert doc["suggestion"]["torch"] == "2.14.1"
    assert over(doc) == ["2.15.0 cu132: no CPython 3.10 wheel (it has 3.11, 3.12, 3.13, 3.14, 3.14t, 3.15, "
                         "3.15t)"]


def test_a_glibc_below_the_manylinux_floor_is_passed_over():
    sol = solve(Machine(gpus=(90,), driver="580.95.05", python_version="3.11", glibc="2.17"))
    assert sol.chosen is not None and sol.chosen.candidate.torch == "2.6.0"
    assert sol.passed_over[0].reasons == ["needs glibc >= 2.28 (manylinux_2_28); this machine has 2.17"]


def test_two_gpus_no_build_covers_say_so_and_what_each_gets():
    doc = suggest("--gpu", "sm_61", "--gpu", "sm_120", "--driver", "575.57.08", "--python-version", "3.11")
    assert doc["suggestion"] is None and not doc["ok"]
    best = {p["gpu"]: p["best"] for p in doc["per_gpu"]}
    assert best["sm_61"].startswith("torch 2.7.1 cu126") and best["sm_120"] == "torch 2.10.0 cu128"
    proc = run_cli(["plan", "--suggest", "--gpu", "sm_61", "--gpu", "sm_120", "--driver", "575.57.08"])
    assert "no build covers them all" in proc.stdout and proc.returncode == 1


def test_two_gpus_one_build_covers():
    doc = suggest("--gpu", "sm_90", "--gpu", "sm_120", "--driver", "580.95.05", "--python-version", "3.12")
    assert doc["suggestion"]["torch"] == "2.15.0" and doc["per_gpu"] == []


def test_torch_xla_when_asked():
    doc = suggest("--gpu", "sm_90", "--driver", "580.95.05", "--python-version", "3.11", "--xla")
    s = doc["suggestion"]
    assert s["torch_xla"] == s["torch"] and f"torch_xla=={s['torch']}" in s["pip"]


@pytest.mark.parametrize("args", [["--verify"], ["--keep"], ["--suggest", "torch==2.6.0"],
                                  ["--gpu", "sm_90", "--gpu", "sm_80", "torch==2.6.0"]])
def test_misused_options_are_one_line_usage_errors(args):
    proc = run_cli(["plan", *args])
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


@pytest.mark.heavy
@pytest.mark.slow
def test_verify_installs_the_suggestion_in_a_scratch_venv_and_checks_it(tmp_path: Path):
    """For real: torch 2.13.0's CPU build installed by pip from a local index of the test's own
    (whatever index this machine's pip reaches), a scratch venv under TMPDIR, the doctor's full
    check there, and nothing left behind."""
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.13.0\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = run_cli(["plan", "--suggest", "-r", str(req), "--verify", "--format", "json"],
                   env={"TMPDIR": str(scratch), **local_torch_index("2.13.0")}, timeout=1500)
    doc = json.loads(proc.stdout)
    validate("suggest", doc)
    v = doc["verify"]
    assert v["installed"] and v["torch"].startswith("2.13.0"), v
    assert v["ok"] and proc.returncode == 0, v
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in v["install"]
    assert list(scratch.iterdir()) == [], "the scratch venv is removed"
