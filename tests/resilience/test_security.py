"""Security: shared reports are redacted, nothing from a log or a report is ever executed, nothing
touches the network, and the result cache is private and written atomically."""

from __future__ import annotations

import ast
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fault_canaries.doctor import run_doctor
from fault_canaries.faults import covers
from fault_canaries.plugin import plugin_env

PACKAGE = Path(__file__).resolve().parents[2] / "inductor_doctor"
USER = "alicesmith"
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
SECRETS = {
    "USER": USER,
    "HOME": f"/home/{USER}",
    "TORCHINDUCTOR_CACHE_DIR": f"/home/{USER}/.cache/inductor",
    "PYTORCH_EXTRA_INDEX": f"https://{USER}:hunter2hunter2@pypi.example.com/simple",
    "TORCH_SESSION_ID": "s3ss10n-value-9f8e7d",
    "TRITON_DEBUG_TOKEN": "hf_" + "Z" * 30,
    "PYTORCH_NOTE": f"cloned with {GH_TOKEN}",
}
LEAKS = (USER, GH_TOKEN, "hunter2hunter2", "s3ss10n-value-9f8e7d", "hf_ZZZZ")


@covers("secrets-in-env")
def test_reports_meant_for_sharing_are_redacted(tmp_path):
    env = {**SECRETS, "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)}
    args = ["check", "--static", "--only", "block-mask-cpu,const-data-ptr-abi"]
    plain = run_doctor([*args, "--format", "json"], env=env)
    assert plain.returncode == 0
    # The secret-named variables are never collected at all; the others are, as they are.
    assert "hf_ZZZZ" not in plain.stdout and GH_TOKEN in plain.stdout and USER in plain.stdout
    shared = (["--format", "json", "--redact"], ["--format", "markdown"], ["--format", "text", "--redact"])
    for extra in shared:
        out = run_doctor([*args, *extra], env=env).stdout
        for leak in LEAKS:
            assert leak not in out, (extra, leak)
    redacted = json.loads(run_doctor([*args, "--format", "json", "--redact"], env=env).stdout)
    envvars = redacted["environment"]["env"]
    assert envvars["TORCH_SESSION_ID"] == "<redacted>"
    assert envvars["TORCHINDUCTOR_CACHE_DIR"] == "/home/<user>/.cache/inductor"
    assert envvars["PYTORCH_EXTRA_INDEX"] == "https://<redacted>@pypi.example.com/simple"
    # Package versions are not secrets, whatever the package is called.
    assert redacted["environment"]["packages"] == json.loads(plain.stdout)["environment"]["packages"]
    kept = run_doctor([*args, "--format", "markdown", "--no-redact"], env=env)
    assert kept.returncode == 0


@covers("secrets-in-env")
def test_merge_markdown_is_redacted_by_default(tmp_path):
    env = {**SECRETS, "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path)}
    report = tmp_path / "r.json"
    args = ["check", "--static", "--only", "block-mask-cpu", "--format", "json", "-o", str(report)]
    proc = run_doctor(args, env=env)
    assert proc.returncode == 0
    other = json.loads(report.read_text())
    other["environment"]["env"]["TORCHINDUCTOR_CACHE_DIR"] = f"/home/{USER}/elsewhere"
    other["environment"]["host"]["hostname"] = "node-b"
    (tmp_path / "b.json").write_text(json.dumps(other))
    md = run_doctor(["merge", str(report), str(tmp_path / "b.json"), "--format", "markdown"], env=env).stdout
    assert "TORCHINDUCTOR_CACHE_DIR" in md and "/home/<user>/elsewhere" in md
    for leak in LEAKS:
        assert leak not in md, leak


def test_redaction_units():
    from inductor_doctor.render.redact import redact_report, redact_text

    users = {"bob"}
    assert redact_text("/home/bob/x and /Users/carol/y", users) == "/home/<user>/x and /Users/<user>/y"
    assert redact_text("key AKIAABCDEFGHIJKLMNOP, tok sk-" + "a" * 24, users).count("<redacted>") == 2
    assert redact_text("Authorization: Bearer abcdef0123456789", users).endswith("Bearer <redacted>")
    assert redact_text("https://pytorch.org/get-started and pytorch/pytorch#151589", users) == (
        "https://pytorch.org/get-started and pytorch/pytorch#151589"
    )
    data = {"packages": {"asttokens": "3.0", "tokenizers": "0.21"}, "env": {"WANDB_API_KEY": "x" * 40},
            "pairs": [["AWS_SECRET_ACCESS_KEY", "y"], ["PATH", "/home/bob/bin"]]}
    out = redact_report(data, users)
    assert out["packages"] == data["packages"]
    assert out["env"]["WANDB_API_KEY"] == "<redacted>"
    assert out["pairs"] == [["AWS_SECRET_ACCESS_KEY", "<redacted>"], ["PATH", "/home/<user>/bin"]]


@covers("hostile-log")
def test_a_log_is_never_executed(tmp_path):
    pwned = tmp_path / "pwned"
    log = tmp_path / "log.txt"
    log.write_text(
        "Traceback (most recent call last):\n"
        f'  File "$(touch {pwned})", line 1, in <module>\n'
        f"    `touch {pwned}`; touch {pwned} && rm -rf {tmp_path}/nothing\n"
        f"RuntimeError: {{__import__('os').system('touch {pwned}')}} %(x)s {{0}}\n"
        "torch._inductor.exc.InductorError: Expect the tensor to be 16 bytes aligned\n"
    )
    for args in (["explain", "--log", str(log)], ["explain", "--log", str(log), "--format", "json"]):
        proc = run_doctor(args)
        assert proc.returncode in (0, 1), proc.stderr
    proc = run_doctor(["explain", "--log", "-"], env=None)
    assert proc.returncode in (0, 1, 2)
    assert not pwned.exists()


RUNS_TEXT = {("os", "system"), ("os", "popen"), ("subprocess", "getoutput"),
             ("subprocess", "getstatusoutput")}
#: The one module that replaces a process with a program: `run -- CMD` starts the user's own command,
#: an argv list (no shell), with `os.execve` in a forked child where it must hand over the terminal,
#: as `subprocess` itself does; nothing else in the doctor may exec.
EXECS_ARGV = {"run/process.py"}


@covers("hostile-log", "hostile-report")
def test_the_package_has_no_way_to_run_text():
    """No shell, no eval/exec, no os.system anywhere in the doctor: text can only ever be data."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id in ("eval", "exec"):
                offenders.append(f"{where} {fn.id}()")
            if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
                call = (fn.value.id, fn.attr)
                execs = call[0] == "os" and call[1].startswith("exec")
                if call in RUNS_TEXT or (execs and str(path.relative_to(PACKAGE)) not in EXECS_ARGV):
                    offenders.append(f"{where} {fn.value.id}.{fn.attr}()")
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    offenders.append(f"{where} shell=")
    assert offenders == []


NETWORK_AUDIT = '''
import os, socket
_log = os.environ["FAULT_CONNECT_LOG"]
_orig = socket.socket.connect, socket.socket.connect_ex

def _record(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        with open(_log, "a") as fh:
            fh.write("%d %r\\n" % (os.getpid(), address))

def connect(self, address):
    _record(self, address)
    return _orig[0](self, address)

def connect_ex(self, address):
    _record(self, address)
    return _orig[1](self, address)

socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
'''


@covers("no-network")
def test_no_network_needed_and_none_used(tmp_path):
    """In a network namespace with no interfaces the verdicts are the same, and no process of the
    tree (the doctor, the probe's subprocesses, the canaries) so much as tries to connect."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-n", "true"]).returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare -n)")
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "sitecustomize.py").write_text(NETWORK_AUDIT)
    log = tmp_path / "connects.log"
    plugin = plugin_env(tmp_path)
    env = dict(os.environ)
    env.update(plugin)
    env.update(PYTHONPATH=f"{audit}{os.pathsep}{plugin['PYTHONPATH']}", FAULT_CONNECT_LOG=str(log),
               INDUCTOR_DOCTOR_CACHE_DIR=str(tmp_path / "cache"))
    args = ["check", "--only", "fault-clean,const-data-ptr-abi,cxx-compiler-missing", "--no-cache",
            "--format", "json"]
    offline = subprocess.run(["unshare", "-n", sys.executable, "-m", "inductor_doctor", *args],
                             capture_output=True, text=True, env=env, timeout=300)
    online = subprocess.run([sys.executable, "-m", "inductor_doctor", *args], capture_output=True, text=True,
                            env=env, timeout=300)
    assert offline.returncode == online.returncode == 0, offline.stderr[-2000:]
    statuses = [[(r["id"], r["status"]) for r in json.loads(p.stdout)["results"]] for p in (offline, online)]
    assert statuses[0] == statuses[1]
    assert ("fault-clean", "ok") in statuses[0]
    assert not log.exists(), log.read_text()


@covers("cache-permissions")
def test_result_cache_is_private_whatever_the_umask(tmp_path):
    root = tmp_path / "a" / "b" / "cache"
    cmd = (f"umask 000 && exec {sys.executable} -m inductor_doctor check --static --only block-mask-cpu "
           "--format json")
    env = {**os.environ, "INDUCTOR_DOCTOR_CACHE_DIR": str(root)}
    proc = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = root / "last"  # the check's report, kept for `explain` and `fix`
    [entry] = list(results.iterdir())
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(results.stat().st_mode) == 0o700


@covers("cache-permissions")
def test_cache_store_creates_private_dirs_and_tightens_results(tmp_path, monkeypatch):
    from inductor_doctor.check import cache

    root = tmp_path / "x" / "y"
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(root))
    old = os.umask(0)
    try:
        assert cache.save_last("/usr/bin/python-a", {"results": []}) is None
    finally:
        os.umask(old)
    for d in (tmp_path / "x", root, root / "last"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    (root / "last").chmod(0o755)
    assert cache.save_last("/usr/bin/python-b", {"results": []}) is None
    assert stat.S_IMODE((root / "last").stat().st_mode) == 0o700
    assert cache.last_report("/usr/bin/python-a")["results"] == []


@covers("cache-permissions")
def test_cache_is_written_atomically(tmp_path, monkeypatch):
    """A reader racing a writer sees the old report or the new one, never half of one."""
    from inductor_doctor.check import cache

    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path))
    big = {"results": [{"reason": "x" * 2000, "n": n} for n in range(300)]}
    assert cache.save_last("/usr/bin/python", big) is None
    stop = threading.Event()
    errors = []

    def writer() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            cache.save_last("/usr/bin/python", {**big, "n": n})

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(300):
            if cache.last_report("/usr/bin/python") is None:
                errors.append("a reader saw a partial file")
    finally:
        stop.set()
        t.join()
    assert errors == []
    assert len(list((tmp_path / "last").iterdir())) == 1  # no temporary left


# --- a cache directory the doctor cannot trust is never read ------------------------------------------

PLANTED = ["clang", "99.9.9", "clang version 99.9.9 (planted)"]


def _nobody() -> int:
    import pwd

    if os.getuid() != 0:
        pytest.skip("making a directory of another user's needs root")
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user 'nobody' here")


def _planted_cache(tmp_path: Path, name: str) -> Path:
    """A cache directory with the doctor's own records in it, every compiler identity rewritten to
    'clang 99.9.9': what another user who can write the directory can put there (the keys are
    the doctor's own, computable by anyone)."""
    where = tmp_path / name
    args = ["check", "--static", "--only", "clang-on-linux,compiler-too-old", "--format", "json"]
    proc = run_doctor(args, env={"INDUCTOR_DOCTOR_CACHE_DIR": str(where)})
    assert proc.returncode == 0, proc.stderr
    identities = list((where / "probe").glob("identity-*.json"))
    assert identities, "the probe kept no compiler identity to plant over"
    for record in identities:
        record.write_text(json.dumps({"answer": PLANTED}))
    return where


def _files(root: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for p in root.rglob("*")}


def _check_refuses(where: Path, says: str) -> None:
    before = _files(where)
    args = ["check", "--static", "--only", "clang-on-linux,compiler-too-old", "--format", "json"]
    proc = run_doctor(args, env={"INDUCTOR_DOCTOR_CACHE_DIR": str(where)})
    assert proc.returncode == 0, proc.stderr
    assert "99.9.9" not in proc.stdout, "a planted record was read"
    warnings = [ln for ln in proc.stderr.splitlines() if "cache directory" in ln]
    assert len(warnings) == 1, proc.stderr
    assert warnings[0].startswith(f"inductor-doctor: warning: the cache directory {where} is not used (")
    assert says in warnings[0] and warnings[0].endswith("; running uncached")
    doc = json.loads(proc.stdout)
    assert says in doc["meta"]["cache_note"]
    assert _files(where) == before, "the doctor wrote into a directory it does not trust"
    # preflight refuses it the same way: the planted identity is not read, and it says why.
    code = ("import json, inductor_doctor; v = inductor_doctor.preflight('xla'); "
            "print(json.dumps({'reason': v.reason, 'warnings': list(v.warnings), 'cached': v.cached}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "INDUCTOR_DOCTOR_CACHE_DIR": str(where)})
    verdict = json.loads(out.stdout.strip().splitlines()[-1])
    assert verdict["cached"] is False and any(says in w for w in verdict["warnings"]), verdict
    assert _files(where) == before


@covers("cache-dir-foreign")
def test_a_cache_directory_of_another_user_is_refused(tmp_path):
    nobody = _nobody()
    where = _planted_cache(tmp_path, "foreign")
    subprocess.run(["chown", "-R", f"{nobody}", str(where)], check=True)
    _check_refuses(where, f"belongs to uid {nobody}, not to this user")


@covers("cache-dir-shared")
def test_a_world_writable_sticky_cache_directory_is_refused(tmp_path):
    nobody = _nobody()
    where = _planted_cache(tmp_path, "shared")
    where.chmod(0o1777)
    for sub in where.iterdir():  # what another user put there is theirs
        subprocess.run(["chown", "-R", f"{nobody}", str(sub)], check=True)
    _check_refuses(where, "is writable by others (mode 1777)")


@covers("record-foreign")
def test_a_record_of_another_user_in_our_cache_is_not_read(tmp_path):
    nobody = _nobody()
    where = _planted_cache(tmp_path, "ours")
    for record in (where / "probe").glob("identity-*.json"):
        os.chown(record, nobody, -1)
    args = ["check", "--static", "--only", "clang-on-linux,compiler-too-old", "--format", "json"]
    proc = run_doctor(args, env={"INDUCTOR_DOCTOR_CACHE_DIR": str(where)})
    assert proc.returncode == 0, proc.stderr
    assert "99.9.9" not in proc.stdout and "cache directory" not in proc.stderr
    assert "cache_note" not in json.loads(proc.stdout)["meta"]
