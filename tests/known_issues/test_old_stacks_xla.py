"""xla-torch-skew in a real broken state: torch_xla 2.5.1 in front of torch 2.6.0.

The state is made from the two cached torch_xla venvs without copying gigabytes: a venv whose
site-packages puts 2.5.1's torch_xla (its package, its `_XLAC` extensions, its metadata) ahead of
the xla-2.6.0 venv's packages, so `import torch_xla` really loads 2.5.1's `_XLAC` against torch
2.6.0, as after a `pip install torch` that replaced torch under an installed torch_xla.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, venv_python

pytestmark = pytest.mark.envs


def _site(python: str) -> Path:
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


@pytest.fixture(scope="module")
def skewed(tmp_path_factory) -> str:
    old, new = _site(venv_python("xla-2.5.1")), _site(venv_python("xla-2.6.0"))
    root = tmp_path_factory.mktemp("xla-skew")
    front = root / "front"
    front.mkdir()
    for entry in old.iterdir():
        if entry.name.startswith(("torch_xla", "_XLAC")):
            (front / entry.name).symlink_to(entry)
    venv = root / "venv"
    base = subprocess.run([venv_python("xla-2.6.0"), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = _site(str(venv / "bin" / "python"))
    (site / "00-front.pth").write_text(f"{front}\n")
    (site / "01-rest.pth").write_text(f"{new}\n")
    return str(venv / "bin" / "python")


def test_the_state_is_real(skewed: str):
    proc = subprocess.run([skewed, "-c", "import torch, torch_xla"], capture_output=True, text=True,
                          timeout=300, env={"PJRT_DEVICE": "CPU", "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0
    assert "_XLAC" in proc.stderr and "undefined symbol" in proc.stderr, proc.stderr[-2000:]


def test_check_flags_it_and_only_it(skewed: str, tmp_path: Path):
    env = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}

    def flagged(python: str) -> tuple:
        args = ["check", "--static", "--python", python, "--format", "json"]
        data = json.loads(run_cli(args, env=env).stdout)
        return data, {r["id"]: r["status"] for r in data["results"] if r["status"] in ("affected", "likely")}

    data, now = flagged(skewed)
    _, before = flagged(venv_python("xla-2.6.0"))  # this machine's own findings (no CUDA toolkit here)
    # torch_xla 2.5.1 also has pytorch/xla#8464 (xla-donor-hash), which its version predicts.
    new = {k: v for k, v in now.items() if k not in before}
    assert new == {"xla-torch-skew": "affected", "xla-donor-hash": "likely"}, (now, before)
    [row] = [r for r in data["results"] if r["id"] == "xla-torch-skew"]
    assert "torch_xla 2.5.1 was built for torch 2.5" in row["reason"] and "2.6.0" in row["reason"]


def test_the_real_error_is_triaged_to_it(skewed: str, tmp_path: Path):
    proc = subprocess.run([skewed, "-c", "import torch, torch_xla"], capture_output=True, text=True,
                          timeout=300, env={"PJRT_DEVICE": "CPU", "PATH": "/usr/bin:/bin"})
    log = tmp_path / "import.log"
    log.write_text(proc.stderr)
    out = json.loads(run_cli(["explain", "--log", str(log), "--format", "json"]).stdout)
    assert out["results"][0]["id"] == "xla-torch-skew"
    assert out["results"][0]["assessment"] == "this is xla-torch-skew"


def test_the_normal_pairs_are_ok(tmp_path: Path):
    for name in ("xla-2.5.1", "xla-2.6.0"):
        data = json.loads(run_cli(["check", "--static", "--only", "xla-torch-skew", "--python",
                                   venv_python(name), "--format", "json"],
                                  env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / name)}).stdout)
        assert [r["status"] for r in data["results"]] == ["ok"], (name, data["results"])

