"""The fleet engines' adapters in contrib/: each keeps its engine's contract with the doctor's real verdicts.

`contrib/node-verdict.sh` (what every adapter runs): the doctor's exit code (0 healthy, 1 a problem,
anything else unknown), the verdict's one line of reason on stdout, and the verdict kept for readers
with no doctor. node-problem-detector's custom plugin (exit 0 OK, 1 a problem, other unknown; stdout
the message) reads that kept verdict, and says unknown for none or a stale one. The Slurm adapter's
round trip with a real Slurm is tests/commands/test_fleet_slurm.py (-m heavy); the manifests are
checked for what they run and where they keep the verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
CONTRIB = REPO / "contrib"
VERDICT = CONTRIB / "node-verdict.sh"
PLUGIN = CONTRIB / "node-problem-detector" / "inductor-doctor-plugin.sh"
ONLY = "--static --only cxx-compiler-missing,cache-dir-unwritable,torch-missing"


def sh(script: Path, env: Dict[str, Optional[str]]) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    return subprocess.run(["/bin/sh", str(script)], capture_output=True, text=True, env=full, timeout=300)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """A node's settings as its defaults file would hold them: this checkout's doctor, a verdict dir."""
    root = tmp_path_factory.mktemp("node")
    bin_dir = root / "bin"  # a PATH with the tools the script uses and no C++ compiler
    bin_dir.mkdir()
    for tool in ("timeout", "mktemp", "sed", "cp", "mv", "rm", "getent", "id", "head", "cut", "grep",
                 "tail", "mkdir", "cat", "env"):
        found = subprocess.run(["/bin/sh", "-c", f"command -v {tool}"], capture_output=True,
                               text=True).stdout.strip()
        if found:
            os.symlink(found, bin_dir / tool)
    return {"root": root, "bin": str(bin_dir),
            "env": {"INDUCTOR_DOCTOR_NODE_DEFAULTS": str(root / "none"),
                    "INDUCTOR_DOCTOR_NODE_COMMAND": f"{sys.executable} -m inductor_doctor",
                    "INDUCTOR_DOCTOR_NODE_ARGS": ONLY, "INDUCTOR_DOCTOR_NODE_DIR": str(root / "verdict"),
                    "PYTHONPATH": str(REPO)}}


def test_a_healthy_node_and_a_broken_one_through_node_verdict_and_the_npd_plugin(node):
    env = dict(node["env"])
    proc = sh(VERDICT, env)
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert line.startswith("inductor-doctor: compile stack PASS")
    kept = node["root"] / "verdict"
    assert json.loads((kept / "verdict.json").read_text())["reason"] == line
    assert (kept / "verdict.txt").read_text() == f"0 {line}\n"
    npd = sh(PLUGIN, {"INDUCTOR_DOCTOR_NODE_DIR": str(kept)})
    assert (npd.returncode, npd.stdout) == (0, line + "\n")

    broken = sh(VERDICT, {**env, "PATH": node["bin"], "CXX": None, "CC": None})
    assert broken.returncode == 1, broken.stderr
    [line] = broken.stdout.splitlines()
    doc = json.loads((kept / "verdict.json").read_text())
    assert line == doc["reason"]
    assert line.startswith("[node_problem] inductor-doctor: cxx-compiler-missing on cpu")
    npd = sh(PLUGIN, {"INDUCTOR_DOCTOR_NODE_DIR": str(kept)})
    assert (npd.returncode, npd.stdout) == (1, line + "\n")
    # A verdict nobody renews no longer stands for the node: unknown.
    old = time.time() - 7200
    os.utime(kept / "verdict.txt", (old, old))
    npd = sh(PLUGIN, {"INDUCTOR_DOCTOR_NODE_DIR": str(kept)})
    assert npd.returncode == 2 and "old" in npd.stdout


def test_no_verdict_is_unknown_with_a_reason(node, tmp_path):
    kept = tmp_path / "verdict"
    # The doctor's usage error (exit 2): unknown, and the one line says why.
    proc = sh(VERDICT, {**node["env"], "INDUCTOR_DOCTOR_NODE_DIR": str(kept),
                        "INDUCTOR_DOCTOR_NODE_ARGS": "--only no-such-issue"})
    assert proc.returncode == 2
    [line] = proc.stdout.splitlines()
    assert line.startswith("inductor-doctor: no verdict (exit 2): ") and "no-such-issue" in line
    assert (kept / "verdict.txt").read_text().startswith("2 inductor-doctor: no verdict")
    npd = sh(PLUGIN, {"INDUCTOR_DOCTOR_NODE_DIR": str(kept)})
    assert npd.returncode == 2
    # A check that runs past its time is stopped: unknown (124).
    hang = tmp_path / "hang.sh"
    hang.write_text("sleep 30\n")
    slow = sh(VERDICT, {**node["env"], "INDUCTOR_DOCTOR_NODE_DIR": str(kept),
                        "INDUCTOR_DOCTOR_NODE_TIMEOUT": "1",
                        "INDUCTOR_DOCTOR_NODE_COMMAND": f"/bin/sh {hang}"})
    assert slow.returncode == 124 and "ran past 1s" in slow.stdout
    # A doctor that exits 0 or 1 with no verdict at all is not believed: unknown.
    silent = sh(VERDICT, {**node["env"], "INDUCTOR_DOCTOR_NODE_DIR": str(kept),
                          "INDUCTOR_DOCTOR_NODE_COMMAND": "/bin/sh -c true"})
    assert silent.returncode == 3 and silent.stdout.startswith("inductor-doctor: no verdict (exit 0): ")
    assert sh(PLUGIN, {"INDUCTOR_DOCTOR_NODE_DIR": str(tmp_path / "nothing")}).returncode == 2


def test_the_npd_config_and_the_kubernetes_manifests_point_at_the_same_verdict():
    yaml = pytest.importorskip("yaml")
    monitor = json.loads((CONTRIB / "node-problem-detector" / "inductor-doctor-monitor.json").read_text())
    assert monitor["plugin"] == "custom" and monitor["pluginConfig"]["max_output_length"] >= 200
    [rule] = monitor["rules"]
    assert rule["path"].endswith("/inductor-doctor-plugin.sh") and rule["condition"] == "CompileStackProblem"
    assert [c["type"] for c in monitor["conditions"]] == ["CompileStackProblem"]
    manifest = CONTRIB / "kubernetes" / "inductor-doctor-daemonset.yaml"
    daemonset, job = yaml.safe_load_all(manifest.read_text())
    assert (daemonset["kind"], job["kind"]) == ("DaemonSet", "Job")
    for doc in (daemonset, job):
        [container] = doc["spec"]["template"]["spec"]["containers"]
        runs = " ".join(container["command"] + container.get("args", []))
        assert "/opt/inductor-doctor/node-verdict.sh" in runs
        env = {e["name"]: e["value"] for e in container["env"]}
        assert set(env) <= {"INTERVAL", "INDUCTOR_DOCTOR_NODE_DIR", "INDUCTOR_DOCTOR_NODE_ARGS",
                            "INDUCTOR_DOCTOR_NODE_TIMEOUT", "INDUCTOR_DOCTOR_CACHE_DIR"}
    [container] = daemonset["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    # Where the DaemonSet keeps the verdict is where the plugin reads it by default.
    assert env["INDUCTOR_DOCTOR_NODE_DIR"] == "/var/lib/inductor-doctor"
    assert "INDUCTOR_DOCTOR_NODE_DIR:-/var/lib/inductor-doctor" in PLUGIN.read_text()
    volumes = daemonset["spec"]["template"]["spec"]["volumes"]
    hostpaths = [v["hostPath"]["path"] for v in volumes if "hostPath" in v]
    assert hostpaths == ["/var/lib/inductor-doctor"]
