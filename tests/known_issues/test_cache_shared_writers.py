"""cache-shared-writers for real: torch 2.9.0 and this machine's torch 2.13 each save a compiled artifact,
save it again under a file-size limit that stops the writer half-way (a full disk or quota), and load it;
the doctor's verdict on each interpreter, and on the torch 2.9.0 one with vLLM's cache shared.

`-m heavy`: minutes of real compiles, and the torch 2.9.0 venv of tests/envs/build_caches.sh (`envs`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Dict

import pytest
from conftest import REPO, run_cli, venv_python

pytestmark = [pytest.mark.heavy, pytest.mark.envs]
SCRIPT = REPO / "tests" / "data" / "caches" / "shared_writers.py"


def _run(python: str, *args: str, env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([python, str(SCRIPT), *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **env})


@pytest.fixture(scope="module")
def cut_off(tmp_path_factory) -> Dict[str, Dict[str, str]]:
    """Per torch: what the first save, the cut-off save and the load printed, and what the load said."""
    out: Dict[str, Dict[str, str]] = {}
    for name, python in (("2.9.0", venv_python("caches-torch-2.9.0")), ("here", sys.executable)):
        d = tmp_path_factory.mktemp(f"writers-{name}")
        env = {"TORCHINDUCTOR_CACHE_DIR": str(d / "inductor"), "TRITON_CACHE_DIR": str(d / "triton")}
        path = str(d / "artifact.bin")
        first = _run(python, "save", path, env=env)
        second = _run(python, "save", path, "8192", env=env)
        load = _run(python, "load", path, env=env)
        out[name] = {"first": first.stdout.strip(), "second": second.stdout.strip(),
                     "load": load.stdout.strip(), "stderr": load.stderr,
                     "left": " ".join(sorted(os.listdir(d)))}
    return out


def test_torch_2_9_leaves_a_truncated_artifact_that_no_one_can_load(cut_off):
    run = cut_off["2.9.0"]
    assert run["first"].startswith("saved "), run
    assert run["second"].startswith("save failed: [Errno 27] File too large"), run
    assert run["load"].startswith("load failed: RuntimeError: Bytes object is corrupted, checksum does not "
                                  "match"), run


def test_an_atomic_save_leaves_the_artifact_whole(cut_off):
    run = cut_off["here"]
    torch = pytest.importorskip("torch")
    if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 10):
        pytest.skip("this interpreter's torch saves in place too")
    assert run["second"].startswith("save failed: [Errno 27] File too large"), run
    assert run["load"].startswith("loaded ") and run["load"] == run["first"].replace("saved", "loaded"), run
    assert ".tmp" in run["left"], "the cut-off writer's temporary file is left beside the artifact"


def _verdict(python: str, env: Dict[str, str]) -> Dict[str, str]:
    args = ["check", "--static", "--python", python, "--only", "cache-shared-writers", "--format", "json"]
    proc = run_cli(args, env=env)
    assert proc.stdout.strip(), proc.stderr
    (row,) = json.loads(proc.stdout)["results"]
    return row


def test_the_doctor_reads_how_each_torch_saves(tmp_path):
    old = venv_python("caches-torch-2.9.0")
    cache = tmp_path / "vllm-cache"
    row = _verdict(old, {"VLLM_CACHE_ROOT": str(cache), "LOCAL_WORLD_SIZE": "4"})
    assert row["status"] == "likely", row
    assert "torch 2.9.0" in row["reason"] and "saves its compiled artifacts in place" in row["reason"]
    assert "standalone_compile.py:" in row["reason"] and "4 processes were launched" in row["reason"]
    row = _verdict(old, {"VLLM_CACHE_ROOT": str(cache), "LOCAL_WORLD_SIZE": None})
    assert row["status"] == "inconclusive", row
    row = _verdict(old, {"VLLM_DISABLE_COMPILE_CACHE": "1"})
    assert row["status"] == "not-applicable", row
    here = _verdict(sys.executable, {})
    assert here["status"] in ("ok", "not-applicable"), here
    if here["status"] == "ok":
        assert "write_atomic" in here["reason"]


def test_the_load_failure_is_possibly_this_issue_and_the_machine_decides(cut_off, tmp_path):
    """`explain --log` on the real traceback: "possibly" from the log alone; `--check` on the torch 2.9.0
    interpreter with several local processes makes it "looks like"."""
    log = tmp_path / "load.log"
    log.write_text(cut_off["2.9.0"]["stderr"])
    proc = run_cli(["explain", "--log", str(log), "--match", "possible", "--format", "json"])
    doc = json.loads(proc.stdout)
    ids = {m["id"]: m for m in doc["results"]}
    assert "cache-shared-writers" in ids, doc
    assert "possibly" in ids["cache-shared-writers"]["assessment"] or "looks like" in \
        ids["cache-shared-writers"]["assessment"]
