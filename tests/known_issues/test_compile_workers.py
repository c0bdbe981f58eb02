"""compile-workers-fail: /dev/shm broken for real, Inductor's compile worker pool started for real.

Each broken state is a tmpfs mounted over /dev/shm in a private mount namespace (`unshare
--mount`): read-only, full, out of inodes. Python's own semaphores fail there with the errors the
rule quotes; the probe reads each state; and the real CLI, with an interpreter whose torch.compile
starts the pool (torch 2.6.0 + Triton 3.2.0, the cached `xla-2.6.0` venv), reports the issue from
its canary and clears once a writable /dev/shm is mounted. torch 2.13 here has no Triton, so its
torch.compile starts no pool at all: the check says so. The rest of the rule is tested on recorded
facts. Nothing here removes or unmounts anything outside its own namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import REPO, venv_python
from test_rules_environment import make_facts, only

from inductor_doctor.check.cache import stable_facts
from inductor_doctor.core.facts import CacheInfo, ShmInfo, TritonInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry

#: How each state is made, inside the namespace only.
STATES = {
    "read-only": "mount -t tmpfs -o ro,size=16m tmpfs /dev/shm",
    "full": "mount -t tmpfs -o size=64k tmpfs /dev/shm && (head -c 1048576 /dev/zero >/dev/shm/fill || true)",
    "no-inodes": "mount -t tmpfs -o size=16m,nr_inodes=2 tmpfs /dev/shm && touch /dev/shm/a",
    "noexec": "mount -t tmpfs -o noexec,size=16m tmpfs /dev/shm",
    "writable": "mount -t tmpfs -o size=16m tmpfs /dev/shm",
}
TRITON_VENV = "xla-2.6.0"  # torch 2.6.0 + Triton 3.2.0: its torch.compile starts the pool (no GPU needed)


def in_namespace(script: str, env: Dict[str, str] = None, timeout: float = 600):
    """`script` in a private mount namespace; skips where one cannot be made (no unshare, no rights)."""
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare or "unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=1m tmpfs /dev/shm"], capture_output=True, text=True)
    if unshare is None or probe.returncode != 0:
        pytest.skip(f"no tmpfs over /dev/shm in a private namespace here ({probe.stderr.strip()[:200]})")
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-ec", script],
                          capture_output=True, text=True, env=full_env, timeout=timeout, cwd=str(REPO))


# --- the states, for real ---------------------------------------------------------------------------

SEMLOCK = ("import multiprocessing\n"
           "try:\n"
           "    multiprocessing.get_context('fork').Lock()\n"
           "    print('made a semaphore')\n"
           "except OSError as e:\n"
           "    print(f'{type(e).__name__}: {e}')\n")


@pytest.mark.parametrize("state, error", [
    ("read-only", "OSError: [Errno 30] Read-only file system"),
    ("full", "OSError: [Errno 28] No space left on device"),
    ("no-inodes", "OSError: [Errno 28] No space left on device"),
    ("noexec", "made a semaphore"),  # semaphores are mapped, never executed
    ("writable", "made a semaphore"),
])
def test_pythons_own_semaphores_and_the_probe_in_each_state(state: str, error: str):
    """The error a pool meets in /dev/shm, and what the probe reads there (no torch involved)."""
    probe = ("import dataclasses, json\n"
             "from inductor_doctor.probe.caches import gather_caches\n"
             "print(json.dumps(dataclasses.asdict(gather_caches().shm)))\n")
    script = f'{STATES[state]}\n"{sys.executable}" -c "$SEMLOCK"\n"{sys.executable}" -c "$PROBE"\n'
    proc = in_namespace(script, env={"SEMLOCK": SEMLOCK, "PROBE": probe})
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == error
    shm = json.loads(lines[-1])
    assert shm["exists"] is True and shm["fs_type"] == "tmpfs" and shm["cpus"] >= 1
    broken = {"read-only": ("mounted read-only", False, False), "full": ("full (", True, True),
              "no-inodes": ("full (0 inodes left)", True, True)}
    if state in broken:
        words, writable, full = broken[state]
        assert words in shm["error"] and shm["writable"] is writable and shm["full"] is full, shm
    else:
        assert shm["error"] is None and shm["writable"] is True and shm["full"] is False, shm
    assert shm["read_only"] is (state == "read-only"), shm


def _doctor(python: str, args: str) -> str:
    """One CLI call printing its JSON on one line."""
    cli = f'"{sys.executable}" -m inductor_doctor {args} --python "{python}" --format json --quiet'
    return cli + ' | tr -d "\\n"; echo'


def _check(python: str, tmp_path: Path, states: List[str], static: bool = False,
           fix: bool = False) -> List[dict]:
    """`check --only compile-workers-fail` once per state, in one namespace, each state mounted over
    the last (a fresh writable tmpfs is how /dev/shm gets fixed in a container); with `fix`, `fix`
    after the first check."""
    check = _doctor(python, f"check --only compile-workers-fail {'--static' if static else ''}")
    lines = [f"{STATES[states[0]]}\n{check}"] + ([_doctor(python, "fix")] if fix else [])
    lines += [f"{STATES[s]}\n{check}" for s in states[1:]]
    proc = in_namespace("\n".join(lines), env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == len(states) + fix, f"rc={proc.returncode} {proc.stderr[-2000:]}"
    return [r if r["schema"].startswith("inductor-doctor/fix") else r["results"][0] for r in reports]


@pytest.mark.envs
def test_check_flags_a_read_only_dev_shm_and_clears_when_it_is_writable(tmp_path: Path):
    """Two canary runs: the real pool dies on a read-only /dev/shm, and starts on a writable one."""
    python = venv_python(TRITON_VENV)
    broken, fix, fixed = _check(python, tmp_path, ["read-only", "writable"], fix=True)
    assert broken["status"] == "affected" and broken["basis"] == "canary", broken
    assert "OSError: [Errno 30] Read-only file system" in broken["reason"], broken["reason"]
    assert "SemLock" in broken["reason"] and "died as it started" in broken["reason"]
    commands = [w["command"] for w in broken["workarounds"]]
    assert "export TORCHINDUCTOR_COMPILE_THREADS=1" in commands
    # torch 2.6 reads no TORCHINDUCTOR_WORKER_START: that workaround is not offered for it
    assert "export TORCHINDUCTOR_WORKER_START=fork" not in commands
    # `fix` tries the variable for real: with it, no pool, so the check comes out clean
    verified = [item["command"] for item in fix["results"] if item["verified"]]
    assert verified == ["export TORCHINDUCTOR_COMPILE_THREADS=1"], fix["results"]
    assert fixed["status"] == "ok" and fixed["basis"] == "canary", fixed
    assert "a C++ kernel compiled in a worker" in fixed["reason"], fixed["reason"]


@pytest.mark.envs
def test_a_full_dev_shm_is_predicted_from_the_facts(tmp_path: Path):
    python = venv_python(TRITON_VENV)
    [row] = _check(python, tmp_path, ["full"], static=True)
    assert row["status"] == "likely" and "is full" in row["reason"], row
    assert "[Errno 28] No space left on device" in row["reason"] and "does not notice" in row["reason"]


@pytest.mark.envs
def test_the_sidecars_real_output_is_triaged_to_it(tmp_path: Path):
    """torch 2.6 with Triton starts its pool as Inductor is imported: on a read-only /dev/shm the
    sidecar prints its death to the user's stderr, and `explain --log` names the issue."""
    python = venv_python(TRITON_VENV)
    code = ("import time, torch._inductor.async_compile as ac\n"
            "pool = ac.AsyncCompile.process_pool()\n"
            "deadline = time.time() + 120\n"
            "while pool.process.poll() is None and time.time() < deadline:\n"
            "    time.sleep(0.2)\n"
            "print('sidecar exit code', pool.process.poll())\n")
    log = tmp_path / "run.log"
    proc = in_namespace(f'{STATES["read-only"]}\n"{python}" -c "$CODE" 2>"{log}"',
                        env={"CODE": code, "TORCHINDUCTOR_COMPILE_THREADS": "2"})
    assert "sidecar exit code 0" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    text = log.read_text()
    assert "Uncaught exception in compile_worker subprocess" in text
    assert "OSError: [Errno 30] Read-only file system" in text
    explain = [sys.executable, "-m", "inductor_doctor", "explain", "--log", str(log), "--format", "json"]
    out = json.loads(subprocess.run(explain, capture_output=True, text=True, cwd=str(REPO)).stdout)
    first = out["results"][0]
    assert first["id"] == "compile-workers-fail" and first["confidence"] == "exact", out["results"][:2]


def test_torch_2_13_without_triton_starts_no_pool_and_says_so(tmp_path: Path):
    """This interpreter: torch.compile hands C++ kernels to threads; /dev/shm is named, not flagged."""
    if _has_triton():
        pytest.skip("Triton is installed here")
    [row] = _check(sys.executable, tmp_path, ["read-only"], static=True)
    assert row["status"] == "ok", row
    assert "Triton is not installed" in row["reason"] and "mounted read-only" in row["reason"]


def _has_triton() -> bool:
    proc = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('triton'))"],
                          capture_output=True, text=True)
    return proc.stdout.strip() != "None"


# --- the rule, on recorded facts --------------------------------------------------------------------

ID = "compile-workers-fail"


def shm(**kw) -> CacheInfo:
    base = dict(exists=True, writable=True, mount_point="/dev/shm", fs_type="tmpfs",
                mount_options=["rw", "nosuid", "nodev"], size_bytes=64 << 20, free_bytes=60 << 20,
                free_inodes=1000, full=False, cpus=16)
    base.update(kw)
    return CacheInfo(shm=ShmInfo(**base))


READ_ONLY = dict(writable=False, read_only=True, mount_options=["ro"], error="/dev/shm is mounted read-only")
TRITON = TritonInfo(version="3.5.0")


def facts(torch: str = "2.13.0+cu128", triton=TRITON, env: Dict[str, str] = None, **shm_kw):
    f = make_facts(torch_version=torch, cuda="12.8", triton=triton, caches=shm(**shm_kw))
    f.env = dict(env or {})
    return f


def test_a_writable_dev_shm_is_ok():
    o = only(ID, facts())
    assert o.status is Status.OK and "16 workers, one per CPU" in o.reason and "writable" in o.reason


def test_the_sidecar_on_a_read_only_dev_shm_is_likely_and_says_what_torch_does():
    o = only(ID, facts(**READ_ONLY))
    assert o.status is Status.LIKELY and "[Errno 30] Read-only file system" in o.reason
    assert "does not notice" in o.reason and "one at a time" in o.reason
    later = only(ID, facts(torch="2.14.1+cu128", **READ_ONLY))
    assert later.status is Status.LIKELY and "Attempting to use a closed pool" in later.reason


def test_an_in_process_pool_on_a_read_only_dev_shm_fails_the_compile():
    o = only(ID, facts(env={"TORCHINDUCTOR_WORKER_START": "fork"}, **READ_ONLY))
    assert o.status is Status.AFFECTED and "'fork'" in o.reason and "[Errno 30]" in o.reason
    old = only(ID, facts(torch="2.3.1", triton=None, **READ_ONLY))  # fork, as Inductor is imported
    assert old.status is Status.AFFECTED and "torch < 2.4 always does" in old.reason
    # torch 2.6 reads no TORCHINDUCTOR_WORKER_START: its pool is the sidecar whatever it says
    six = only(ID, facts(torch="2.6.0", env={"TORCHINDUCTOR_WORKER_START": "fork"}, **READ_ONLY))
    assert six.status is Status.LIKELY and "'subprocess'" in six.reason


def test_each_broken_state_names_its_error():
    missing = only(ID, facts(exists=False, writable=False, mount_point=None, error="/dev/shm does not exist"))
    assert missing.status is Status.LIKELY and "[Errno 2] No such file or directory" in missing.reason
    denied = only(ID, facts(writable=False, error="/dev/shm is not writable by this user"))
    assert "[Errno 13] Permission denied" in denied.reason
    full = only(ID, facts(free_bytes=0, full=True, error="/dev/shm is full (0 bytes left)",
                          env={"TORCHINDUCTOR_WORKER_START": "spawn"}))
    assert full.status is Status.LIKELY and "[Errno 28] No space left on device" in full.reason


def test_one_compile_thread_or_one_cpu_starts_no_pool():
    forced = only(ID, facts(env={"TORCHINDUCTOR_COMPILE_THREADS": "1"}, **READ_ONLY))
    assert forced.status is Status.NOT_APPLICABLE and "TORCHINDUCTOR_COMPILE_THREADS=1" in forced.reason
    assert only(ID, facts(cpus=1, **READ_ONLY)).status is Status.NOT_APPLICABLE
    many = only(ID, facts(env={"TORCHINDUCTOR_COMPILE_THREADS": "4"}, **READ_ONLY))
    assert many.status is Status.LIKELY and "4 workers (TORCHINDUCTOR_COMPILE_THREADS)" in many.reason


def test_without_triton_torch_starts_no_pool():
    o = only(ID, facts(torch="2.13.0+cpu", triton=None, **READ_ONLY))
    assert o.status is Status.OK and "Triton is not installed" in o.reason and "read-only" in o.reason


def test_what_the_rule_cannot_know():
    f = facts()
    f.caches = None
    assert only(ID, f).status is Status.INCONCLUSIVE
    mac = facts(**READ_ONLY)
    mac.python.platform = "darwin"
    assert only(ID, mac).status is Status.NOT_APPLICABLE
    bad = only(ID, facts(env={"TORCHINDUCTOR_WORKER_START": "forkserver"}))
    assert bad.status is Status.AFFECTED and "Invalid start method: forkserver" in bad.reason


def test_workarounds_are_offered_for_the_releases_that_read_them():
    issue = registry().find(ID)
    by_command = {w.command: w for w in issue.workarounds if w.command}
    fork = by_command["export TORCHINDUCTOR_WORKER_START=fork"]
    assert fork.applies_to({"torch": ["2.13.0"]}) and fork.applies_to({"torch": ["2.4.1"]})
    assert not fork.applies_to({"torch": ["2.6.0"]}) and not fork.applies_to({"torch": ["2.3.1"]})
    threads = by_command["export TORCHINDUCTOR_COMPILE_THREADS=1"]
    assert threads.applies_to({"torch": ["2.1.0"]}) and not threads.applies_to({"torch": ["2.0.1"]})


def test_what_dev_shm_has_left_never_changes_a_canarys_key():
    a, b = facts(free_bytes=1 << 20, free_inodes=5), facts(free_bytes=2 << 20, free_inodes=500)
    assert stable_facts(a.to_dict()) == stable_facts(b.to_dict())
    assert stable_facts(a.to_dict()) != stable_facts(facts(**READ_ONLY).to_dict())
