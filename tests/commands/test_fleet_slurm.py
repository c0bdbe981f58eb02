"""A real Slurm drains a node whose compile stack is broken, with the doctor's reason, and resumes it.

Debian's `slurmctld`, `slurmd` and `munged` (tests/setup.sh installs them) run as one single-node
cluster of this machine, private to the test: their own munge key and socket, configuration, ports,
state and spool directories under the test's temporary directory. `contrib/slurm/inductor-doctor-health.sh`
is the node's HealthCheckProgram, every 5 seconds, through a two-line wrapper that gives it the
configuration a site keeps in /etc/default/inductor-doctor. slurmd runs in a private mount namespace, so
the read-only cache is a real read-only mount that no other process of this machine sees.

The states are the node's own, as a site would break it: its PATH holds no C++ compiler (an image
without one), then its Inductor cache directory is a read-only mount. Each is drained with
`[node_problem] inductor-doctor: <issue> on <device>: ...`, and resumed once fixed; a drain someone
else made is never lifted. Minutes of round trips: `-m heavy`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
HEALTH = REPO / "contrib" / "slurm" / "inductor-doctor-health.sh"
DAEMONS = ("slurmctld", "slurmd", "munged", "sinfo", "scontrol", "srun", "unshare", "nsenter")
#: What the node's scripts run, without a compiler among them (the PATH of an image that has none).
NODE_TOOLS = ("sh", "timeout", "mktemp", "sed", "cp", "mv", "rm", "getent", "id", "head", "cut", "grep",
              "tail", "cat", "mkdir", "sinfo", "scontrol", "logger", "hostname", "dirname", "env", "uname",
              "ldconfig")

pytestmark = pytest.mark.heavy


def _missing() -> List[str]:
    return [d for d in DAEMONS if shutil.which(d) is None and not Path("/usr/sbin", d).exists()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """One node, its controller and munge, all the test's own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.defaults = root / "defaults"
        self.verdicts = root / "verdicts"
        self.procs: List[subprocess.Popen] = []
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)}: rc={proc.returncode} {proc.stderr[-2000:]}")
        return proc

    def start(self) -> None:
        r = self.root
        for d in ("munge", "state", "spool", "log", "node-tmp", "doctor-cache", "node-bin"):
            (r / d).mkdir(mode=0o755)
        r.chmod(0o755)
        munge = r / "munge"
        shutil.chown(munge, "munge", "munge")
        munge.chmod(0o711)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge")
        key.chmod(0o400)
        self.procs.append(subprocess.Popen(
            ["runuser", "-u", "munge", "--", shutil.which("munged") or "/usr/sbin/munged", "-F", "-f",
             f"--socket={munge}/sock", f"--key-file={key}", f"--log-file={munge}/log",
             f"--pid-file={munge}/pid", f"--seed-file={munge}/seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait(lambda: (munge / "sock").exists(), 30, "munged did not create its socket")
        for tool in NODE_TOOLS:
            found = shutil.which(tool)
            if found:
                os.symlink(found, r / "node-bin" / tool)
        os.symlink(sys.executable, r / "node-bin" / "python3")
        wrapper = r / "health-check"
        wrapper.write_text("#!/bin/sh\n# The site's /etc/default/inductor-doctor, then the adapter.\n"
                           f"export INDUCTOR_DOCTOR_NODE_DEFAULTS={self.defaults}\n"
                           f"exec /bin/sh {HEALTH}\n")
        wrapper.chmod(0o755)
        self.healthy()
        ctld, slurmd = _free_port(), _free_port()
        self.conf.write_text("\n".join([
            "ClusterName=doctortest", f"SlurmctldHost={self.node}", "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={munge}/sock", "CredType=cred/munge",
            f"SlurmctldPort={ctld}", f"SlurmdPort={slurmd}", f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool", f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log", f"SlurmdLogFile={r}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "ReturnToService=2", f"HealthCheckProgram={wrapper}", "HealthCheckInterval=5",
            "HealthCheckNodeState=ANY", f"NodeName={self.node} CPUs={os.cpu_count() or 1} State=UNKNOWN",
            f"PartitionName=debug Nodes={self.node} Default=YES State=UP", ""]))
        ctl = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
        self.procs.append(subprocess.Popen([ctl, "-D", "-c", "-f", str(self.conf)], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # slurmd in a mount namespace of its own: the read-only cache mount is its alone.
        slurmd = shutil.which("slurmd") or "/usr/sbin/slurmd"
        self.slurmd = subprocess.Popen(["unshare", "--mount", "--propagation", "private", slurmd, "-D", "-f",
                                        str(self.conf)], env=self.env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        self.procs.append(self.slurmd)
        self._wait(lambda: self.state() in ("idle", "drained", "draining", "drain"), 90,
                   "the node never came up", self.logs)

    def healthy(self, **extra: str) -> None:
        """The node's configuration, as the defaults file the adapter reads: a working node."""
        values = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "SLURM_CONF": str(self.conf),
                  "PYTHONPATH": str(REPO), "TMPDIR": str(self.root / "node-tmp"),
                  "INDUCTOR_DOCTOR_NODE_COMMAND": f"{sys.executable} -m inductor_doctor",
                  "INDUCTOR_DOCTOR_NODE_DIR": str(self.verdicts), "INDUCTOR_DOCTOR_NODE_TIMEOUT": "120",
                  "INDUCTOR_DOCTOR_CACHE_DIR": str(self.root / "doctor-cache"), **extra}
        self.defaults.write_text("".join(f"{k}='{v}'\n" for k, v in values.items()))

    def state(self) -> str:
        return self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", check=False).stdout.strip()

    def reason(self) -> str:
        out = self.run("scontrol", "show", "node", self.node, check=False).stdout
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("Reason="):
                return line[len("Reason="):].rsplit(" [", 1)[0]
        return ""

    def in_slurmd_namespace(self, *cmd: str) -> None:
        subprocess.run(["nsenter", "-t", str(self.slurmd.pid), "-m", *cmd], check=True, capture_output=True)

    def logs(self) -> str:
        out = []
        for name in ("slurmd.log", "slurmctld.log"):
            path = self.root / "log" / name
            if path.exists():
                out.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        txt = self.verdicts / "verdict.txt"
        if txt.exists():
            out.append("--- verdict.txt\n" + txt.read_text())
        return "\n".join(out)

    @staticmethod
    def _wait(ok: Callable[[], bool], timeout: float, what: str,
              more: Optional[Callable[[], str]] = None) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return
            time.sleep(1)
        raise AssertionError(f"{what} within {timeout:.0f}s" + (f"\n{more()}" if more else ""))

    def wait_for(self, ok: Callable[[], bool], what: str, timeout: float = 150) -> None:
        self._wait(ok, timeout, what,
                   lambda: f"state={self.state()!r} reason={self.reason()!r}\n{self.logs()}")

    def stop(self) -> None:
        pid = self.root / "munge" / "pid"  # munged under runuser: stopped by its own pid too
        if pid.exists():
            try:
                os.kill(int(pid.read_text().strip()), signal.SIGTERM)
            except (ValueError, OSError):
                pass
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    missing = _missing()
    if missing or os.geteuid() != 0:
        why = (f"needs Slurm and munge ({', '.join(missing)} missing: tests/setup.sh installs them)"
               if missing else "needs root (Slurm's daemons, a private mount namespace)")
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    # In /tmp itself: the test run's temporary root is private to root, and munged runs as `munge`.
    c = Cluster(Path(tempfile.mkdtemp(prefix="inductor-doctor-slurm-", dir="/tmp")))
    try:
        c.start()
        yield c
    finally:
        c.stop()
        shutil.rmtree(c.root, ignore_errors=True)


def _drained_for(c: Cluster, prefix: str) -> Callable[[], bool]:
    return lambda: "drain" in c.state() and c.reason().startswith(prefix)


def _back(c: Cluster) -> Callable[[], bool]:
    return lambda: c.state() == "idle" and not c.reason()


def test_a_node_without_a_compiler_is_drained_with_the_doctors_reason_and_resumed(cluster: Cluster):
    c = cluster
    c.wait_for(lambda: (c.verdicts / "verdict.txt").exists() and _back(c)(), "the healthy node's first check")
    assert (c.verdicts / "verdict.txt").read_text().startswith("0 inductor-doctor: compile stack PASS")
    c.healthy(PATH=str(c.root / "node-bin"))
    c.wait_for(_drained_for(c, "[node_problem] inductor-doctor: cxx-compiler-missing on cpu: "),
               "the drain for the missing compiler")
    assert "g++" in c.reason()
    # A drained node takes no job; the doctor's drain is its own, and is lifted once fixed.
    c.healthy()
    c.wait_for(_back(c), "the resume once the compiler is back")
    job = c.run("srun", "-N1", "-w", c.node, "--immediate=60", "true", timeout=120)
    assert job.returncode == 0


def test_a_read_only_cache_is_drained_and_resumed_once_writable(cluster: Cluster):
    c = cluster
    cache = c.root / "node-tmp" / "torchinductor_root"  # Inductor's default: <TMPDIR>/torchinductor_<user>
    cache.mkdir(exist_ok=True)
    c.wait_for(_back(c), "a healthy node to start from")
    c.in_slurmd_namespace("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(cache))
    try:
        c.wait_for(_drained_for(c, "[node_problem] inductor-doctor: cache-dir-unwritable on toolchain: "),
                   "the drain for the read-only cache")
        assert str(cache) in c.reason()
        # The one line is cut at 200 characters; the whole verdict is kept beside it.
        [check] = [x for x in json.loads((c.verdicts / "verdict.json").read_text())["checks"]
                   if x["check_id"] == "cache-dir-unwritable"]
        assert "read-only" in check["message"]
    finally:
        c.in_slurmd_namespace("umount", str(cache))
    c.wait_for(_back(c), "the resume once the cache is writable")


def test_a_drain_someone_else_made_is_never_lifted(cluster: Cluster):
    c = cluster
    c.wait_for(_back(c), "a healthy node to start from")
    c.run("scontrol", "update", f"NodeName={c.node}", "State=DRAIN", "Reason=disk replacement")
    verdict = c.verdicts / "verdict.txt"
    seen = verdict.stat().st_mtime
    c.wait_for(lambda: verdict.stat().st_mtime > seen + 5, "two more health checks")
    assert "drain" in c.state() and c.reason() == "disk replacement"
    c.run("scontrol", "update", f"NodeName={c.node}", "State=RESUME")

