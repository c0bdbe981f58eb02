"""The CUDA variants PyTorch's own index serves: read from the build scripts at the release tags,
cross-checked against the wheel, and used by `plan` and `plan --suggest`.

The committed snapshot holds no variant (no clone of pytorch/pytorch with its release tags was at
hand when it was made: it says so per release). These tests give the audit a real git repository
with release tags whose two build scripts are the test's own (the shape of upstream's
`.ci/manywheel/build_cuda.sh` and `.github/scripts/generate_binary_build_matrix.py`), run
`release_audit.py variants` on it as a maintainer would, and run the command line against the
snapshot it writes. The script values below are test inputs, not facts about any release.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
from audit import check, index_variants  # noqa: E402

SNAPSHOT = REPO / "inductor_doctor" / "core" / "_data" / "releases.json"

BUILD_CUDA = """#!/usr/bin/env bash
set -ex
TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0;7.5;8.0;8.6"
case ${CUDA_VERSION} in
    #removing sm_50-sm_60 as these architectures are deprecated
    12.8)
        TORCH_CUDA_ARCH_LIST="%(cu128)s"
        ;;
    13.0)
        TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;9.0;10.0;12.0"
        ;;
    12.6)
        TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};9.0"
        if [[ "$PACKAGE_TYPE" == "libtorch" ]]; then
            export TORCH_NVCC_FLAGS="${TORCH_NVCC_FLAGS} --compress-mode=default"
        fi
        ;;
    12.9)
        if [[ "$GPU_ARCH_TYPE" == "cuda-aarch64" ]]; then
            TORCH_CUDA_ARCH_LIST="8.0;9.0;10.0;12.0+PTX"
        fi
        ;;
    *)
        echo "unknown cuda version $CUDA_VERSION"
        exit 1
        ;;
esac
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}
"""

MATRIX = '''"""Generates a matrix to be utilized through github actions"""
CUDA_ARCHES = %(arches)r
CUDA_STABLE = "12.8"
CUDA_ARCHES_FULL_VERSION = {"12.6": "12.6.3", "12.8": "12.8.1", "12.9": "12.9.1", "13.0": "13.0.0"}
'''

CU128 = "7.0;7.5;8.0;8.6;9.0;10.0;12.0"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
                          check=True, capture_output=True, text=True).stdout


def upstream(tmp: Path, cu128: str = CU128) -> Path:
    """A pytorch-shaped repository: v2.10.0 builds cu126/cu128/cu129, v2.13.0 cu126/cu128/cu130,
    v2.12.0 predates the scripts (tagged without them); no other release is tagged."""
    repo = tmp / "pytorch"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("x\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "before the scripts")
    _git(repo, "tag", "v2.12.0")
    for tag, arches in (("v2.10.0", ["12.6", "12.8", "12.9"]), ("v2.13.0", ["12.6", "12.8", "13.0"])):
        (repo / ".ci" / "manywheel").mkdir(parents=True, exist_ok=True)
        (repo / ".github" / "scripts").mkdir(parents=True, exist_ok=True)
        (repo / ".ci/manywheel/build_cuda.sh").write_text(BUILD_CUDA % {"cu128": cu128})
        (repo / ".github/scripts/generate_binary_build_matrix.py").write_text(MATRIX % {"arches": arches})
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", tag)
        _git(repo, "tag", tag)
    return repo / ".git"


def audit_variants(tmp: Path, git_dir: Path) -> Path:
    """`release_audit.py variants --pytorch-git DIR` on a copy of the committed snapshot."""
    out = tmp / "releases.json"
    shutil.copy(SNAPSHOT, out)
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "release_audit.py"), "variants",
                           "--pytorch-git", str(git_dir), "--output", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert "index variants of 2 torch releases read, 26 not" in proc.stdout, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def snap_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("variants")
    return audit_variants(tmp, upstream(tmp))


def doctor(snapshot: Path, *args: str) -> subprocess.CompletedProcess:
    """The command line as a user runs it, reading `snapshot` as its release snapshot."""
    boot = ("import runpy, sys; from inductor_doctor.core import releases as _releases; "
            "_releases.SNAPSHOT = sys.argv.pop(1); sys.argv[0] = 'inductor-doctor'; "
            "runpy.run_module('inductor_doctor', run_name='__main__', alter_sys=True)")
    return subprocess.run([sys.executable, "-c", boot, str(snapshot), *args], capture_output=True,
                          text=True, timeout=300, env=_env())


def _env() -> Dict[str, str]:
    import os

    env = dict(os.environ)
    env.setdefault("INDUCTOR_DOCTOR_CACHE_DIR", str(Path(os.environ.get("PYTEST_TMP_CACHE", "/tmp"))
                                                    / "indoc-test-cache"))
    env["PYTHONPATH"] = str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def plan_rows(snapshot: Path, *args: str) -> Dict[str, tuple]:
    proc = doctor(snapshot, "plan", *args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return {r["id"]: (r["status"], r["reason"]) for r in json.loads(proc.stdout)["results"]}


def suggest(snapshot: Path, *args: str) -> dict:
    proc = doctor(snapshot, "plan", "--suggest", *args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def over(doc: dict) -> List[str]:
    return [f"{o['torch']} {o['variant']}: {o['reason']}" for o in doc["passed_over"]]


# --- reading the scripts ------------------------------------------------------------------------


def test_the_arch_list_follows_the_case_and_refuses_what_an_if_decides():
    lists = index_variants.arch_lists(BUILD_CUDA % {"cu128": CU128})
    assert lists["12.6"] == "5.0;6.0;7.0;7.5;8.0;8.6;9.0"  # the base, extended by the branch
    assert lists["12.8"] == CU128 and lists["13.0"] == "7.5;8.0;8.6;9.0;10.0;12.0"
    assert lists["12.9"] == "set under an if inside its case branch"
    cubins, ptx = index_variants.parse_arch_list("8.0;9.0;12.0+PTX")
    assert cubins == ["sm_80", "sm_90", "sm_120"] and ptx == ["compute_120"]


def test_the_audit_records_each_variant_with_its_tag_and_file_and_says_what_it_could_not_read(snap_path):
    snap = check.load(snap_path)
    v210 = snap["torch"]["2.10.0"]["index_variants"]
    assert v210["read"] and sorted(v210["variants"]) == ["cu126", "cu128"]
    cu126 = v210["variants"]["cu126"]
    assert cu126["archs"] == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert cu126["cuda_full"] == "12.6.3" and cu126["index_url"] == "https://download.pytorch.org/whl/cu126"
    assert cu126["source"]["archs"].startswith("pytorch/pytorch v2.10.0 (")
    assert cu126["source"]["archs"].endswith(".ci/manywheel/build_cuda.sh case 12.6")
    assert v210["unread"] == {"cu129": "set under an if inside its case branch"}
    assert snap["torch"]["2.12.0"]["index_variants"] == {
        "read": False, "why": ".github/scripts/generate_binary_build_matrix.py is not at v2.12.0",
        "commit": snap["torch"]["2.12.0"]["index_variants"]["commit"]}
    assert snap["torch"]["2.14.1"]["index_variants"] == {"read": False, "why": "the clone has no tag v2.14.1"}
    assert check.check_index_variants(snap) == []


def test_check_catches_a_build_script_that_disagrees_with_the_wheel(tmp_path):
    """PyPI's 2.10.0 wheel is cu128, built for sm_70 ... sm_120 (read from the wheel): a tag whose
    build_cuda.sh sets another cu128 list is a disagreement between the two sources."""
    path = audit_variants(tmp_path, upstream(tmp_path, cu128="7.5;8.0;8.6;9.0;10.0;12.0"))
    bad = check.check_index_variants(check.load(path))
    assert any(b.startswith("torch 2.10.0 cu128: build_cuda.sh at v2.10.0 sets 7.5;8.0;8.6;9.0;10.0;12.0")
               and "the PyPI wheel is built for sm_100 sm_120 sm_70" in b for b in bad), bad


# --- plan: an explicit variant is judged from its facts ------------------------------------------


def test_plan_judges_an_index_variant_from_its_build_script(snap_path):
    rows = plan_rows(snap_path, "torch==2.10.0+cu126", "--gpu", "sm_61", "--driver", "550.54.14")
    status, reason = rows["torch-gpu-arch-missing"]
    assert status == "ok" and "sm_60 kernels" in reason and "build_cuda.sh case 12.6" in reason, reason
    assert rows["cuda-driver-too-old"][0] == "ok"
    rows = plan_rows(snap_path, "torch==2.10.0", "--index-url", "https://download.pytorch.org/whl/cu126",
                     "--gpu", "sm_120")
    status, reason = rows["torch-gpu-arch-missing"]
    assert status == "affected" and "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" in reason, reason
    rows = plan_rows(snap_path, "torch==2.13.0+cu128", "--gpu", "sm_90", "--driver", "525.60.13")
    assert rows["cuda-driver-too-old"][0] == "ok", rows["cuda-driver-too-old"]
    # What was not read stays inconclusive: cu129 (an if decides it), and every untagged release.
    for spec in ("torch==2.10.0+cu129", "torch==2.14.1+cu126"):
        assert plan_rows(snap_path, spec, "--gpu", "sm_90")["torch-gpu-arch-missing"][0] == "inconclusive"


# --- plan --suggest: the index variants are candidates too ----------------------------------------


def test_pascal_on_550_gets_a_cu126_variant_newer_than_any_pypi_wheel_with_its_kernels(snap_path):
    doc = suggest(snap_path, "--gpu", "sm_61", "--driver", "550.54.14", "--python-version", "3.11")
    s = doc["suggestion"]
    assert (s["torch"], s["variant"]) == ("2.13.0", "cu126"), over(doc)  # PyPI alone: 2.7.1
    assert s["index_url"] == "https://download.pytorch.org/whl/cu126" and "sm_60" in s["archs"]
    assert s["pip"] == "pip install torch==2.13.0+cu126 --index-url https://download.pytorch.org/whl/cu126"
    assert s["uv"] == "uv pip install torch==2.13.0+cu126 --index-url https://download.pytorch.org/whl/cu126"
    assert over(doc)[-1] == ("2.13.0 cu128: torch-gpu-arch-missing: built for sm_70 sm_75 sm_80 sm_86 sm_90 "
                             "sm_100 sm_120: no kernel for sm_61")
    assert [i["id"] for i in doc["issues_no_release_avoids"]] == ["gpu-too-old-for-triton"]


def test_hopper_on_a_525_driver_gets_a_cuda12_variant_of_a_release_whose_pypi_wheel_is_cuda13(snap_path):
    doc = suggest(snap_path, "--gpu", "sm_90", "--driver", "525.60.13", "--python-version", "3.12")
    s = doc["suggestion"]
    assert (s["torch"], s["variant"]) == ("2.13.0", "cu128") and s["clean"], over(doc)
    assert s["pip"] == "pip install torch==2.13.0+cu128 --index-url https://download.pytorch.org/whl/cu128"
    assert ("2.13.0 cu130: cuda-driver-too-old: CUDA 13.0 needs driver >= 580.65.06; this one is 525.60.13"
            in over(doc))


def test_text_output_prints_the_index_url(snap_path):
    proc = doctor(snap_path, "plan", "--suggest", "--gpu", "sm_90", "--driver", "525.60.13",
                  "--python-version", "3.12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Install: torch 2.13.0 (cu128)" in proc.stdout
    index = "--index-url https://download.pytorch.org/whl/cu128"
    assert f"$ pip install torch==2.13.0+cu128 {index}" in proc.stdout
    assert f"$ uv pip install torch==2.13.0+cu128 {index}" in proc.stdout
    assert "(PyTorch's cu128 index; pytorch/pytorch v2.13.0 (" in proc.stdout


def test_blackwell_on_575_is_told_why_the_newer_cu128_variant_is_not_it(snap_path):
    """2.13.0's cu128 build has sm_120 kernels, but its Triton's ptxas for sm_120 is CUDA 13.x."""
    doc = suggest(snap_path, "--gpu", "sm_120", "--driver", "575.57.08", "--python-version", "3.12")
    assert (doc["suggestion"]["torch"], doc["suggestion"]["variant"]) == ("2.10.0", "cu128")
    assert any(o.startswith("2.13.0 cu128: triton-ptxas-driver on sm_120") for o in over(doc)), over(doc)


def test_the_committed_snapshot_says_why_no_variant_is_read():
    snap = check.load(SNAPSHOT)
    for version, entry in snap["torch"].items():
        facts: Optional[dict] = entry.get("index_variants")
        assert facts is not None and (facts["read"] or facts["why"]), version
