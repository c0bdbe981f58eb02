"""The doctor survives every sick patient: each fault is created for real, and each must end in a
verdict with its reason, the contract's exit code, no traceback from the doctor, and no process
left behind (`fault_canaries.doctor.run_doctor` checks the last two on every run).

The expected outcomes live in tests/fault_canaries/faults.py, which docs/reliability.md mirrors.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from conftest import sigint_as_a_terminal_leaves_it, venv_python, without_progress
from fault_canaries.doctor import describe, doctor_env, kill_tagged, new_tag, run_doctor, tagged
from fault_canaries.faults import FAULTS, covers
from fault_canaries.plugin import plugin_env

from inductor_doctor.schemas import validate


@pytest.fixture()
def faulty(tmp_path) -> Dict[str, str]:
    """The environment that registers the `fault-*` issues, with a private result cache."""
    return {**plugin_env(tmp_path), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}


def check(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 300):
    """`check ... --format json` under run_doctor: (process, the report, its results by id)."""
    proc = run_doctor(["check", *args, "--format", "json"], env=env, timeout=timeout)
    assert proc.stdout.strip(), f"rc={proc.returncode}: {proc.stderr[-2000:]}"
    doc = json.loads(proc.stdout)
    validate("check", doc)
    return proc, doc, {r["id"]: r for r in doc["results"]}


def expect(fault_id: str, result: dict, rc: int, status: Optional[str] = None) -> None:
    f = FAULTS[fault_id]
    assert status is None or result["status"] == status, result
    assert f.reason in result["reason"], result["reason"]
    assert rc == int(f.exit.split()[0]), (rc, f.exit)


# --- canaries ------------------------------------------------------------------------------------


@covers("canary-segfault")
def test_canary_segfault(faulty):
    proc, _, by_id = check(["--only", "fault-segfault", "--no-cache"], faulty)
    expect("canary-segfault", by_id["fault-segfault"], proc.returncode, "inconclusive")
    strict = run_doctor(["check", "--only", "fault-segfault", "--fail-on", "inconclusive"], env=faulty)
    assert strict.returncode == 1


@covers("canary-abort", "canary-abort-is-the-bug")
def test_canary_abort(faulty):
    proc, _, by_id = check(["--only", "fault-abort,fault-abort-is-bug", "--no-cache"], faulty)
    expect("canary-abort", by_id["fault-abort"], 0, "inconclusive")
    expect("canary-abort-is-the-bug", by_id["fault-abort-is-bug"], proc.returncode, "affected")
    assert proc.returncode == 1
    assert "donor hash mismatch" in " ".join(by_id["fault-abort-is-bug"]["evidence"])


@pytest.mark.envs
@pytest.mark.slow
@covers("canary-abort-xla")
def test_canary_abort_real_torch_xla(tmp_path):
    py = venv_python("xla-2.5.1")
    proc, _, by_id = check(["--only", "xla-donor-hash", "--python", py, "--no-cache"],
                           {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)})
    expect("canary-abort-xla", by_id["xla-donor-hash"], proc.returncode, "affected")
    assert by_id["xla-donor-hash"]["device"] == "xla"


@covers("canary-hang")
def test_canary_hang_is_killed_with_its_children(faulty, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    start = time.monotonic()
    proc, _, by_id = check(["--only", "fault-hang", "--timeout", "2", "--no-cache"],
                           {**faulty, "FAULT_PIDS_DIR": str(pids)})
    assert time.monotonic() - start < 60
    expect("canary-hang", by_id["fault-hang"], proc.returncode, "inconclusive")
    # The canary, its child and its setsid grandchild: all dead (run_doctor checks the whole tree).
    [line] = [p.read_text().split() for p in pids.iterdir()]
    assert len(line) == 3
    for pid in map(int, line):
        assert not _alive(pid), pid


@covers("canary-unreapable")
def test_an_unreapable_canary_does_not_hold_the_check(faulty):
    """Killed at its timeout, the canary cannot be reaped: the check still ends within --timeout plus
    the grace, says so, and a second canary beside it is not held up either."""
    start = time.monotonic()
    proc, _, by_id = check(["--only", "fault-unreapable,fault-clean", "--timeout", "2", "--no-cache",
                            "--jobs", "2"], faulty)
    took = time.monotonic() - start
    expect("canary-unreapable", by_id["fault-unreapable"], proc.returncode, "inconclusive")
    assert "timed out after 2s" in by_id["fault-unreapable"]["reason"]
    assert by_id["fault-clean"]["status"] == "ok"
    assert took < 2 + 5 + 20, took  # the timeout, the grace, and a doctor's start on a busy machine


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@covers("canary-noise")
def test_canary_noise(faulty):
    start = time.monotonic()
    proc, doc, by_id = check(["--only", "fault-noise", "--no-cache"], faulty)
    expect("canary-noise", by_id["fault-noise"], proc.returncode, "affected")
    assert len(proc.stdout) < 200_000  # the report carries the evidence, not the noise
    assert time.monotonic() - start < 120
    text = run_doctor(["check", "--only", "fault-noise", "--no-cache"], env=faulty)
    assert text.returncode == 1 and "FAULT-SIGNATURE" in text.stdout


@covers("canary-no-result")
def test_canary_without_result(faulty):
    proc, _, by_id = check(["--only", "fault-no-result", "--no-cache"], faulty)
    expect("canary-no-result", by_id["fault-no-result"], proc.returncode, "inconclusive")


# --- the interpreter under diagnosis -----------------------------------------------------------


@covers("python-missing", "python-not-executable")
def test_python_that_is_no_file_or_not_executable(tmp_path):
    text = tmp_path / "python"
    text.write_text("print('I am not an interpreter')\n")
    for path, fault in ((tmp_path / "nope", "python-missing"), (text, "python-not-executable")):
        proc = run_doctor(["check", "--static", "--python", str(path)])
        assert proc.returncode == 2
        [line] = proc.stderr.strip().splitlines()
        assert FAULTS[fault].reason in line and str(path) in line


@covers("python-not-python")
def test_python_that_is_not_python(tmp_path):
    """A shell script that answers (or exits 0 printing nothing), /bin/false: not an interpreter,
    so a usage error, never a report of 36 inconclusive checks that exits 0."""
    talks = tmp_path / "python3"
    talks.write_text("#!/bin/sh\necho 'hello from a shell script'\n")
    silent = tmp_path / "python"
    silent.write_text("#!/bin/sh\nexit 0\n")
    for script in (talks, silent):
        script.chmod(0o755)
    for path in (talks, silent, Path("/bin/false")):
        for extra in ([], ["--static"], ["--fail-on", "never"]):
            proc = run_doctor(["check", "--only", "block-mask-cpu", "--python", str(path), *extra])
            assert proc.returncode == 2, (path, extra, proc.stdout[-500:])
            [line] = proc.stderr.strip().splitlines()
            assert FAULTS["python-not-python"].reason in line and str(path) in line, line
    proc = run_doctor(["check", "--static", "--python", str(tmp_path)])  # a directory, not a venv
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@covers("python-without-torch")
def test_python_without_torch(tmp_path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc, doc, by_id = check(["--only", "block-mask-cpu,view-dtype-align,xla-donor-hash,const-data-ptr-abi",
                              "--python", str(venv)], {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0
    assert {r["status"] for r in by_id.values()} == {"not-applicable"}
    assert doc["environment"]["torch"] is None
    assert FAULTS["python-without-torch"].reason in by_id["const-data-ptr-abi"]["reason"]


@pytest.mark.envs
@pytest.mark.slow
@covers("torch-import-fails")
def test_torch_whose_import_fails(tmp_path):
    py = venv_python("torch-2.9-nodeps")
    proc, doc, by_id = check(["--only", "cxx-compiler-missing,block-mask-cpu", "--python", py, "--no-cache",
                              "--timeout", "120"], {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)})
    for issue in ("cxx-compiler-missing", "block-mask-cpu"):
        expect("torch-import-fails", by_id[issue], proc.returncode, "inconclusive")
    assert doc["environment"]["torch"]["version"].startswith("2.9.0")


# --- the toolchain -----------------------------------------------------------------------------


@covers("no-compiler")
def test_no_compiler_on_path(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {"PATH": str(bin_dir), "CC": None, "CXX": None, "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "c")}
    proc, _, by_id = check(["--only", "cxx-compiler-missing", "--no-cache"], env)  # type: ignore[arg-type]
    expect("no-compiler", by_id["cxx-compiler-missing"], proc.returncode, "affected")


@pytest.mark.slow
@pytest.mark.heavy  # the probe waits out its 30 s compiler timeout: that is the test
@covers("compiler-hangs")
def test_compiler_that_hangs(tmp_path):
    fake = tmp_path / "g++"
    fake.write_text("#!/bin/sh\nsleep 600\n")
    fake.chmod(0o755)
    start = time.monotonic()
    proc, _, by_id = check(["--static", "--only", "const-data-ptr-abi,cxx-compiler-missing", "--no-cache"],
                           {"CXX": str(fake), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "c")})
    assert time.monotonic() - start < 180
    expect("compiler-hangs", by_id["const-data-ptr-abi"], proc.returncode, "inconclusive")
    # Inductor would hang on it too: affected, and said as it is (found, but does not answer).
    missing = by_id["cxx-compiler-missing"]
    assert missing["status"] == "affected" and "does not answer `--version`" in missing["reason"]
    assert "is not found" not in missing["reason"]


# --- disks, homes and caches ---------------------------------------------------------------------


def _tmpfs(where: Path, size: str = "64k", read_only: bool = False) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    # mode=700: a tmpfs is 1777 by default, and a cache directory others can write is refused
    # (cache-dir-shared) before it could be found read-only.
    opts = f"size={size},mode=700" + (",ro" if read_only else "")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode(errors='replace').strip()}")
    return where


@pytest.fixture()
def mounts():
    made: List[Path] = []
    yield lambda where, **kw: made.append(_tmpfs(where, **kw)) or where
    for m in reversed(made):
        subprocess.run(["umount", "-l", str(m)], capture_output=True)


@covers("cache-dir-read-only")
def test_cache_dir_read_only(faulty, tmp_path, mounts):
    ro = mounts(tmp_path / "ro", read_only=True)
    proc, doc, _ = check(["--only", "fault-clean"], {**faulty, "INDUCTOR_DOCTOR_CACHE_DIR": str(ro)})
    assert proc.returncode == 0
    assert FAULTS["cache-dir-read-only"].reason in doc["meta"]["cache_note"]


@covers("home-read-only")
def test_home_read_only(tmp_path, mounts):
    ro = mounts(tmp_path / "home", read_only=True)
    env = {"HOME": str(ro), "XDG_CACHE_HOME": None, "INDUCTOR_DOCTOR_CACHE_DIR": None}
    proc, doc, _ = check(["--static", "--only", "block-mask-cpu"], env)  # type: ignore[arg-type]
    assert proc.returncode == 0
    assert FAULTS["home-read-only"].reason in doc["meta"]["cache_note"]
    assert doc["results"][0]["status"] == "ok"


NO_HOME = {"HOME": None, "XDG_CACHE_HOME": None, "INDUCTOR_DOCTOR_CACHE_DIR": None}


@pytest.fixture()
def no_stray_nonexistent():
    """Remove a /nonexistent that a run with HOME unset might create (the test below says it must not)."""
    existed = Path("/nonexistent").exists()
    yield
    if not existed:
        import shutil

        shutil.rmtree("/nonexistent", ignore_errors=True)


@covers("home-unset")
def test_home_unset(tmp_path, no_stray_nonexistent):
    from inductor_doctor.core import paths as cache

    env = {**NO_HOME, "TORCH_FAULT_NONCE": new_tag()}
    proc, doc, _ = check(["--static", "--only", "block-mask-cpu"], env)  # type: ignore[arg-type]
    assert proc.returncode == 0 and "cache_note" not in doc["meta"] and doc["meta"]["cached"] is False
    code = "from inductor_doctor.core import paths; print(paths.cache_dir())"
    where = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME",
                                                                                  "INDUCTOR_DOCTOR_CACHE_DIR")})
    import pwd

    assert where.stdout.strip() == str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "inductor-doctor")
    assert cache.cache_dir() is not None


@covers("home-unset")
def test_home_unset_creates_nothing_at_nonexistent(tmp_path, no_stray_nonexistent):
    if Path("/nonexistent").exists():
        pytest.skip("/nonexistent exists already")
    # A fresh result-cache key (TORCH* variables are part of it), so that the probe really runs.
    env = {**NO_HOME, "TORCH_FAULT_NONCE": new_tag()}
    run_doctor(["check", "--static", "--only", "block-mask-cpu"], env=env)  # type: ignore[arg-type]
    assert not Path("/nonexistent").exists()


@covers("cache-corrupt")
def test_corrupt_cache_is_a_miss(faulty, tmp_path):
    env = faulty
    cache = Path(faulty["INDUCTOR_DOCTOR_CACHE_DIR"])
    args = ["--only", "fault-clean,const-data-ptr-abi"]
    _, first, _ = check(args, env)
    [path] = list((cache / "canaries").glob("*.json"))
    good = path.read_text()
    _, again, _ = check(args, env)
    assert again["meta"]["cached"] is True
    for damage in ("truncate", "garbage", "foreign", "directory", "deep"):
        if path.is_dir():
            path.rmdir()
        elif damage == "directory":
            path.unlink()
        if damage == "truncate":
            path.write_text(good[: len(good) // 2])
        elif damage == "garbage":
            path.write_bytes(os.urandom(4096))
        elif damage == "foreign":
            path.write_text(json.dumps({"key": "someone-else", "run": json.loads(good)["run"]}))
        elif damage == "directory":
            path.mkdir()
        else:
            path.write_text("[" * 100_000 + "]" * 100_000)
        proc, doc, _ = check(args, env)
        assert proc.returncode == 0, damage
        assert doc["meta"]["cached"] is False, damage
        assert [r["status"] for r in doc["results"]] == [r["status"] for r in first["results"]], damage
        if damage != "directory":
            assert json.loads(path.read_text())["key"] == json.loads(good)["key"], damage


@covers("tmp-full")
def test_tmp_full(faulty, tmp_path, mounts):
    tmp = mounts(tmp_path / "tmp")
    proc, _, by_id = check(["--only", "fault-noise,fault-clean", "--no-cache", "--jobs", "1"],
                           {**faulty, "TMPDIR": str(tmp)})
    expect("tmp-full", by_id["fault-noise"], proc.returncode, "inconclusive")
    assert str(tmp) in by_id["fault-noise"]["reason"]


@covers("output-unwritable")
def test_merge_output_unwritable(tmp_path, mounts):
    _, doc, _ = check(["--static", "--only", "block-mask-cpu"], {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)})
    report = tmp_path / "r.json"
    report.write_text(json.dumps(doc))
    ro = mounts(tmp_path / "ro", read_only=True)
    proc = run_doctor(["merge", str(report), "--output", str(ro / "fleet.txt")])
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert FAULTS["output-unwritable"].reason in line and "fleet.txt" in line


@covers("output-unwritable")
def test_check_output_unwritable_is_not_a_doctor_failure(tmp_path, mounts):
    ro = mounts(tmp_path / "ro", read_only=True)
    proc = run_doctor(["check", "--static", "--only", "block-mask-cpu", "--output", str(ro / "r.json")],
                      env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 2
    [line] = without_progress(proc.stderr)  # a check over two seconds also says its stages
    assert FAULTS["output-unwritable"].reason in line and "r.json" in line


# --- signals ---------------------------------------------------------------------------------------


def _start_parallel_run(faulty: Dict[str, str], tmp_path: Path, tag: str) -> subprocess.Popen:
    marker, pids = tmp_path / "clean-done", tmp_path / "pids"
    pids.mkdir()
    env = doctor_env({**faulty, "FAULT_CLEAN_MARKER": str(marker), "FAULT_PIDS_DIR": str(pids)}, tag)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inductor_doctor", "check", "--only", "fault-clean,fault-hang,fault-hang-too",
         "--jobs", "3", "--timeout", "300", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
        stdin=subprocess.DEVNULL, preexec_fn=sigint_as_a_terminal_leaves_it,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if marker.exists() and len(list(pids.iterdir())) == 2:
            time.sleep(0.5)  # the clean canary's harness reports, the runner collects it
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"the canaries did not start: {proc.communicate()[1][-2000:]}")


FAULT_ROWS = ("fault-clean", "fault-hang", "fault-hang-too")


def _interrupted(proc: subprocess.Popen, tag: str, fault: str, rc: int) -> None:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        left = tagged(tag)
        kill_tagged(tag)
    assert not left, f"processes left behind: {describe(left)}"
    assert proc.returncode == rc, err[-2000:]
    assert "Traceback" not in err
    assert "interrupted: partial results" in out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.split() and ln.split()[0] in FAULT_ROWS}
    assert "ok" in lines["fault-clean"]
    assert "inconclusive" in lines["fault-hang"] and "inconclusive" in lines["fault-hang-too"]
    assert FAULTS[fault].reason in out


@covers("sigint-mid-run")
def test_ctrl_c_in_a_parallel_run(faulty, tmp_path):
    tag = new_tag()
    proc = _start_parallel_run(faulty, tmp_path, tag)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the foreground process group
    _interrupted(proc, tag, "sigint-mid-run", 130)


@covers("sigterm-mid-run")
def test_sigterm_in_a_parallel_run(faulty, tmp_path):
    tag = new_tag()
    proc = _start_parallel_run(faulty, tmp_path, tag)
    os.kill(proc.pid, signal.SIGTERM)  # what a process manager does: the doctor alone
    _interrupted(proc, tag, "sigterm-mid-run", 143)


@covers("sigint-during-probe")
def test_ctrl_c_during_the_probe(tmp_path):
    tag = new_tag()
    env = doctor_env({"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)}, tag)
    proc = subprocess.Popen([sys.executable, "-m", "inductor_doctor", "check", "--no-cache", "--only",
                             "block-mask-cpu"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                            preexec_fn=sigint_as_a_terminal_leaves_it)
    time.sleep(1.5)  # imports done, probe running (it takes several seconds here)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        left = tagged(tag)
        kill_tagged(tag)
    assert not left, describe(left)
    assert proc.returncode == 130, (out[-500:], err[-2000:])
    assert "Traceback" not in err


# --- concurrency -------------------------------------------------------------------------------------


@covers("concurrent-runs")
def test_concurrent_runs_share_one_cache(faulty, tmp_path):
    tag = new_tag()
    env = doctor_env(faulty, tag)
    cache = Path(faulty["INDUCTOR_DOCTOR_CACHE_DIR"])
    cmd = [sys.executable, "-m", "inductor_doctor", "check", "--only", "fault-clean,const-data-ptr-abi",
           "--format", "json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    left = tagged(tag)
    kill_tagged(tag)
    assert not left
    assert [p.returncode for p in procs] == [0, 0, 0], [e[-500:] for _, e in outs]
    docs = [json.loads(o) for o, _ in outs]
    assert len({json.dumps([(r["id"], r["status"], r["reason"]) for r in d["results"]]) for d in docs}) == 1
    files = list((cache / "canaries").iterdir())
    assert len(files) == 1 and files[0].suffix == ".json", files  # no temporary file left over
    json.loads(files[0].read_text())
    assert files[0].stat().st_mode & 0o777 == 0o600
    _, again, _ = check(["--only", "fault-clean,const-data-ptr-abi"], faulty)
    assert again["meta"]["cached"] is True
