"""platform-not-covered: on a platform the checks were not written for, the doctor says so first.

Recorded facts for each platform (there is no ROCm, XPU, Mac or Windows machine here), and the CLI
with a stand-in ROCm torch: a package whose version.py says what a ROCm wheel's says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_rules_environment import make_facts, only

from inductor_doctor.core.model import Status


@pytest.mark.parametrize(
    "version,hip,platform,expected,says",
    [
        ("2.5.1+rocm6.2", "6.2.41133", "linux", Status.INCONCLUSIVE, "ROCm build"),
        ("2.6.0", "6.3.0", "linux", Status.INCONCLUSIVE, "ROCm build"),  # hip set, no local tag
        ("2.7.0+xpu", None, "linux", Status.INCONCLUSIVE, "Intel XPU"),
        ("2.9.0", None, "darwin", Status.INCONCLUSIVE, "macOS"),
        ("2.9.0+cu128", None, "win32", Status.INCONCLUSIVE, "Windows"),
        ("2.9.0+cu128", None, "linux", Status.OK, "CUDA 12.8 build"),
        ("2.13.0+cpu", None, "linux", Status.OK, "CPU build"),
    ],
)
def test_each_platform(version, hip, platform, expected, says):
    facts = make_facts(torch_version=version, cuda="12.8" if "cu128" in version else None)
    facts.torch.hip = hip
    facts.python.platform = platform
    o = only("platform-not-covered", facts)
    assert o.status is expected and says in o.reason, o.reason
    if expected is Status.INCONCLUSIVE:
        assert "does not cover" in o.reason


def test_no_torch_is_left_to_torch_missing():
    assert only("platform-not-covered", make_facts(torch_version=None)).status is Status.NOT_APPLICABLE


def _fake_rocm_venv(tmp_path: Path) -> str:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    torch = site / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text("raise ImportError('a stand-in for a ROCm torch')\n")
    (torch / "version.py").write_text("__version__ = '2.5.1+rocm6.2'\ncuda = None\nhip = '6.2.41133'\n")
    dist = site / "torch-2.5.1+rocm6.2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+rocm6.2\n")
    return str(venv / "bin" / "python")


def test_check_says_it_first_on_a_rocm_torch(tmp_path: Path):
    python = _fake_rocm_venv(tmp_path)
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    text = run_cli(["check", "--static", "--python", python, "-q"], env=env)
    assert text.returncode in (0, 1), text.stderr[-2000:]
    head = "\n".join(text.stdout.splitlines()[:8])
    assert "ROCm build" in head and "does not cover" in head, text.stdout[:3000]
    data = json.loads(run_cli(["check", "--static", "--python", python, "--format", "json"], env=env).stdout)
    [row] = [r for r in data["results"] if r["id"] == "platform-not-covered"]
    assert row["status"] == "inconclusive"
    assert any("ROCm build" in n for n in data["meta"].get("notices", []))
    # The list of what is not covered, row by row: the GPU rows say they are not checked, never ok.
    assert any(e.startswith("not checked (each says why in its row): ") and "torch-gpu-arch-missing" in e
               for e in row["evidence"]), row["evidence"]
    assert any(e.startswith("no row covers ") for e in row["evidence"])
    gpu = [r for r in data["results"] if r["id"] == "torch-gpu-arch-missing"]
    assert gpu and all(r["status"] == "inconclusive" and r["reason"].startswith("not checked on ROCm")
                       for r in gpu), gpu
    assert "not checked on ROCm" in text.stdout
