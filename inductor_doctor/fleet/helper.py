"""`check --distributed`'s gather: a torch helper subprocess per rank, and rank 0's fleet view.

Each rank runs the ordinary check on its share of the node's devices (fleet/shard.py) in its
torch-free process (`commands/distributed.py`). Meanwhile a helper (target/gather.py), started under
an interpreter that has torch, joins torchrun's TCPStore and announces the rank (host, local rank,
pid), so a rank that later dies or hangs can be named. When the check is done its JSON goes to the
helper; rank 0's helper waits for the other ranks' reports until the deadline and hands them back;
rank 0 merges (`finish_rank0`), the other ranks hand over and print nothing (`finish_other`).

The deadline is `INDUCTOR_DOCTOR_GATHER_TIMEOUT` seconds (default 600) from the start of each rank.
A rank still checking when rank 0 stops waiting is told so through the store and stops (its
canaries killed), so one wedged rank cannot keep the whole job alive.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.model import ExitCode, UsageError
from inductor_doctor.fleet.binding import launcher_local_rank
from inductor_doctor.fleet.document import MergeDocument, Missing, build_document, validate_check_report
from inductor_doctor.target import script

HELPER = script("gather.py")
#: target/gather.py's stand-ins for a report that never came (kept in step with it).
DIED, GAVE_UP = "!died", "!gave-up"
DEFAULT_GATHER_TIMEOUT_S = 600.0
#: How long a helper may take to import torch and reach the store before the next interpreter is tried.
HELPER_START_S = 120.0
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@dataclass
class RankEnv:
    """What torchrun told this process about its place in the job."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    group_rank: Optional[int]
    master_addr: str
    master_port: int
    agent_store: bool
    namespace: str
    #: The local rank torchrun's numbering implies (fleet/binding.py): a rewritten LOCAL_RANK shows.
    launcher_local_rank: Optional[int] = None

    @classmethod
    def from_environ(cls, environ: Optional[Dict[str, str]] = None) -> RankEnv:
        env = dict(os.environ) if environ is None else environ
        absent = [v for v in TORCHRUN_VARS if not env.get(v)]
        if absent:
            raise UsageError(
                "--distributed runs under torchrun (e.g. `torchrun --nproc-per-node 8 -m inductor_doctor "
                f"check --distributed`); {', '.join(absent)} not set"
            )

        def integer(name: str, default: Optional[int] = None) -> int:
            raw = env.get(name)
            if raw is None or raw == "":
                if default is None:
                    raise UsageError(f"--distributed: {name} is not set")
                return default
            try:
                return int(raw)
            except ValueError:
                raise UsageError(f"--distributed: {name}={raw!r} is not an integer") from None

        rank, world = integer("RANK"), integer("WORLD_SIZE")
        local_rank = integer("LOCAL_RANK", 0)
        local_world = integer("LOCAL_WORLD_SIZE", 1)
        port = integer("MASTER_PORT")
        if not (0 <= rank < world) or not (0 <= local_rank < local_world) or not (0 < port < 65536):
            raise UsageError(
                f"--distributed: inconsistent torchrun environment (RANK={rank}, WORLD_SIZE={world}, "
                f"LOCAL_RANK={local_rank}, LOCAL_WORLD_SIZE={local_world}, MASTER_PORT={port})"
            )
        group = env.get("GROUP_RANK")
        group_rank = int(group) if group and group.isdigit() else None
        groups = env.get("GROUP_WORLD_SIZE")
        run_id = env.get("TORCHELASTIC_RUN_ID") or "none"
        attempt = env.get("TORCHELASTIC_RESTART_COUNT") or "0"
        return cls(
            rank=rank,
            world_size=world,
            local_rank=local_rank,
            local_world_size=local_world,
            group_rank=group_rank,
            launcher_local_rank=launcher_local_rank(
                rank, group_rank, local_world, int(groups) if groups and groups.isdigit() else None, world),
            master_addr=env["MASTER_ADDR"],
            master_port=port,
            agent_store=env.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
            namespace=f"inductor-doctor/fleet/{run_id}/{attempt}",
        )


def gather_timeout() -> float:
    raw = os.environ.get("INDUCTOR_DOCTOR_GATHER_TIMEOUT")
    if not raw:
        return DEFAULT_GATHER_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"INDUCTOR_DOCTOR_GATHER_TIMEOUT={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise UsageError("INDUCTOR_DOCTOR_GATHER_TIMEOUT must be positive")
    return value


def helper_interpreters(target: str) -> List[str]:
    """Where torch probably is: the target, this interpreter, then the launcher (torchrun's own)."""
    found: List[str] = [target, sys.executable]
    try:
        import psutil

        parent = psutil.Process().parent()
        exe = parent.exe() if parent is not None else ""
        if exe and "python" in os.path.basename(exe):
            found.append(exe)
    except Exception:  # psutil may not see the parent (containers, permissions)
        pass
    out: List[str] = []
    seen = set()
    for py in found:
        real = os.path.realpath(py)
        if py and real not in seen:
            seen.add(real)
            out.append(py)
    return out


class Helper:
    """The gather helper subprocess: started in the background, fed the report, read line by line."""

    def __init__(self, ctx: RankEnv, hello: Dict[str, Any], connect_timeout_s: float) -> None:
        self.ctx = ctx
        self.hello = hello
        self.connect_timeout_s = connect_timeout_s
        self.proc: Optional[subprocess.Popen] = None
        self.lines: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.failed: List[str] = []
        self.on_done: Optional[Any] = None  # called when rank 0 stops waiting for this rank
        self._thread: Optional[threading.Thread] = None
        self._stderr_path: Optional[str] = None

    def start(self, interpreters: List[str]) -> None:
        self._thread = threading.Thread(target=self._start, args=(interpreters,), daemon=True)
        self._thread.start()

    def _config(self) -> str:
        c = self.ctx
        return json.dumps(
            {
                "rank": c.rank,
                "world_size": c.world_size,
                "host": c.master_addr,
                "port": c.master_port,
                "agent_store": c.agent_store,
                "namespace": c.namespace,
                "connect_timeout_s": self.connect_timeout_s,
                "hello": self.hello,
            }
        )

    def _start(self, interpreters: List[str]) -> None:
        import tempfile

        for py in interpreters:
            err = tempfile.TemporaryFile()
            try:
                proc = subprocess.Popen(
                    [py, str(HELPER), self._config()],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"},
                )
            except OSError as exc:
                self.failed.append(f"{py}: {exc.strerror or exc}")
                continue
            assert proc.stdout is not None
            first = self._readline(proc, HELPER_START_S)
            if first == "IMPORTED":  # torch is there; the store may take up to its own timeout
                first = self._readline(proc, self.connect_timeout_s + 30)
            if first == "READY":
                self.proc = proc
                self.ready.set()
                self._pump(proc)
                return
            _stop(proc)
            self.failed.append(f"{py}: {first[6:] if first.startswith('ERROR ') else first or _tail(err)}")
        self.ready.set()

    @staticmethod
    def _readline(proc: subprocess.Popen, timeout: float) -> str:
        box: List[str] = []

        def read() -> None:
            assert proc.stdout is not None
            box.append(proc.stdout.readline().decode("utf-8", "replace").strip())

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        return box[0] if box else "no answer"

    def _pump(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line == "DONE" and self.on_done is not None:
                self.on_done()
            self.lines.put(line)
        self.lines.put(None)

    @property
    def error(self) -> Optional[str]:
        if self.proc is not None:
            return None
        return "no interpreter could run the gather helper (" + "; ".join(self.failed) + ")"

    def send(self, report: str, wait_s: float) -> None:
        """Hand over this rank's report (empty: gave up) and, for rank 0, how long to wait for the rest."""
        proc = self.proc
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(f"{wait_s:.3f}\n".encode())
            proc.stdin.write(report.encode("utf-8"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def next_line(self, timeout: float) -> Optional[str]:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return ""

    def interrupt(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except OSError:
                pass

    def close(self) -> None:
        if self.proc is not None:
            _stop(self.proc, grace=5.0)


def _tail(fh: Any) -> str:
    try:
        fh.seek(0)
        lines = [ln for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else "exited without a word"
    except OSError:
        return "exited without a word"


#: How long a killed helper is given to go: one stuck in a hung driver ignores SIGKILL for a while,
#: and the doctor must not hang with it.
REAP_GRACE_S = 5.0


def _stop(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """Let a helper finish within `grace`, then kill it: it must never outlive the doctor, and the
    doctor never waits for it without a bound."""
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=REAP_GRACE_S)
        except subprocess.TimeoutExpired:
            sys.stderr.write(f"inductor-doctor: the gather helper (pid {proc.pid}) could not be killed; "
                             "left behind\n")


class RankTerminated(KeyboardInterrupt):
    pass


def _rank_name(rank: int, hello: Optional[Dict[str, Any]], ctx: RankEnv) -> Tuple[str, Optional[str]]:
    if hello:
        host = str(hello.get("hostname") or "?")
        return f"rank {rank} ({host}, local rank {hello.get('local_rank', '?')})", host
    if ctx.local_world_size and ctx.world_size % ctx.local_world_size == 0:
        return (
            f"rank {rank} (node {rank // ctx.local_world_size}, local rank {rank % ctx.local_world_size}"
            ", never joined)",
            None,
        )
    return f"rank {rank} (never joined)", None


def finish_other(helper: Helper, report_json: str, gave_up: threading.Event,
                  interrupted: Optional[int]) -> int:
    """A rank > 0: hand the report over and leave quietly; rank 0 speaks for the job."""
    if gave_up.is_set():
        sys.stderr.write("inductor-doctor: rank 0 stopped waiting for this rank; giving up\n")
        return int(ExitCode.OK)
    helper.ready.wait(HELPER_START_S + 5)
    if helper.error:
        sys.stderr.write(f"inductor-doctor: could not send this rank's report: {helper.error}\n")
        return int(ExitCode.OK)
    helper.send("" if interrupted else report_json, 0.0)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = helper.next_line(1.0)
        if line is None or line in ("SENT", "DONE"):
            break
        if line.startswith("ERROR"):
            sys.stderr.write(f"inductor-doctor: {line[6:]}\n")
            break
    return int(interrupted or ExitCode.OK)


def _gather(helper: Helper, report_json: str, left: float,
            interrupted: Optional[int]) -> Tuple[Dict[str, Any], List[str], Optional[int]]:
    """Hand this rank's report to the helper and wait (bounded) for everyone's: (result, notes,
    interrupted). Interrupted, it collects what is already there and waits for nothing more."""
    notes: List[str] = []
    helper.ready.wait(left + 5)
    result: Dict[str, Any] = {}
    if helper.error or helper.proc is None:
        notes.append(f"the other ranks could not be gathered: {helper.error or 'the helper did not start'}")
        return result, notes, interrupted
    helper.send(report_json, 0.0 if interrupted else max(left, 2.0))
    give_up_at = time.monotonic() + left + 30
    try:
        while time.monotonic() < give_up_at:
            line = helper.next_line(1.0)
            if line is None:
                break
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
                break
            if line.startswith("ERROR"):
                notes.append(line[6:])
                break
    except KeyboardInterrupt as exc:
        helper.interrupt()  # the helper answers at once with what it has
        interrupted = int(ExitCode.TERMINATED if isinstance(exc, RankTerminated) else ExitCode.INTERRUPTED)
        line = helper.next_line(5.0)
        if line and line.startswith("RESULT "):
            result = json.loads(line[7:])
    return result, notes, interrupted


def _why_missing(raw: Optional[str], rank: int, result: Mapping[str, Any], timeout_s: float) -> str:
    hellos = result.get("hellos", {})
    if raw == DIED:
        return "its doctor died before its check finished (killed, or crashed)"
    if raw == GAVE_UP:
        return "gave up before its check finished (interrupted)"
    if not result:
        return "not gathered"
    if str(rank) in hellos:
        return f"joined, but sent no report within {timeout_s:g}s (hung or died)"
    return f"never joined within {timeout_s:g}s (not started, or died at once)"


def finish_rank0(
    helper: Helper,
    ctx: RankEnv,
    report_json: str,
    start: float,
    timeout_s: float,
    interrupted: Optional[int],
) -> MergeDocument:
    """Rank 0: its own report and every other rank's (or why there is none) in one fleet view."""
    left = max(0.0, timeout_s - (time.monotonic() - start))
    result, notes, interrupted = _gather(helper, report_json, left, interrupted)
    reports: List[Dict[str, Any]] = []
    missing: List[Missing] = []
    hellos = result.get("hellos", {})
    received = result.get("reports", {})
    if report_json:
        reports.append(json.loads(report_json))
    else:
        name, host = _rank_name(0, hellos.get("0"), ctx)
        missing.append(Missing(0, name, "this rank was interrupted before its check finished", host))
    for r in range(1, ctx.world_size):
        raw = received.get(str(r))
        name, host = _rank_name(r, hellos.get(str(r)), ctx)
        if raw and raw not in (DIED, GAVE_UP):
            try:
                reports.append(validate_check_report(json.loads(raw), name))
                continue
            except (ValueError, UsageError) as exc:
                missing.append(Missing(r, name, f"sent an unreadable report ({exc})", host))
                continue
        missing.append(Missing(r, name, _why_missing(raw, r, result, timeout_s), host))
    meta = {"distributed": True, "world_size": ctx.world_size, "gather_timeout_s": timeout_s,
            "duration_s": round(time.monotonic() - start, 3), "notes": notes}
    if interrupted:
        meta["interrupted"] = True
        meta["exit_code"] = interrupted
    return build_document(reports, [None] * len(reports), missing, meta)
