"""Gathers every torchrun rank's report on rank 0 through torch.distributed's TCPStore.

Run as a script by an interpreter that has torch (usually the one being diagnosed), never imported
by the doctor: the doctor's own process stays torch-free. Standard library plus torch only, Python
3.8 syntax, because inductor-doctor itself is usually not installed where this runs.

Why a store and not `init_process_group` + `gather_object`: a process group needs every rank to
join, so one dead or hung rank would make everyone wait and then fail together. With the store,
each rank writes its report under its own key and rank 0 waits for each key with a deadline, so
the missing ranks can be named and the others still reported.

Protocol (one line each on stdout):
  argv[1]   JSON: rank, world_size, host, port, agent_store, namespace, connect_timeout_s, hello
  IMPORTED  torch.distributed imported: this interpreter will do (connecting may take a while)
  READY     connected; this rank's hello is published (hostname, local rank, pid)
  stdin     seconds to wait (rank 0), newline, the rank's `check` report as JSON, then EOF; no report
            means "gave up", and no stdin at all from a doctor that has died means "died"
  SENT      (ranks > 0) the report is in the store
  DONE      (ranks > 0) rank 0 stopped waiting, or the store is gone: stop working
  RESULT {...}   (rank 0) reports, hellos and missing ranks, after the deadline or all arrived
  ERROR msg      could not do its job (no torch, store unreachable); exit status non-zero
"""

import json
import os
import signal
import sys
import threading
import time

POLL_S = 0.2
#: What a rank's report key holds when there is no report: its doctor died, or it gave up.
DIED = b"!died"
GAVE_UP = b"!gave-up"


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def connect(cfg):
    from datetime import timedelta

    import torch.distributed as dist

    is_master = cfg["rank"] == 0 and not cfg["agent_store"]
    timeout = timedelta(seconds=float(cfg["connect_timeout_s"]))
    kwargs = {"world_size": None, "is_master": is_master, "timeout": timeout, "wait_for_workers": False}
    if is_master:
        kwargs["multi_tenant"] = True
    return dist.TCPStore(cfg["host"], int(cfg["port"]), **kwargs)


class StdinReader(threading.Thread):
    """Reads the report without blocking the loop that watches the store and the parent."""

    def __init__(self):
        super().__init__(daemon=True)
        self.first_line = None
        self.data = None
        self.done = threading.Event()

    def run(self):
        stream = sys.stdin.buffer
        try:
            self.first_line = stream.readline()
            self.data = stream.read()
        except Exception:
            self.data = b""
        self.done.set()


def handed_over(reader):
    """What this rank publishes: its report, or why there is none."""
    first = (reader.first_line or b"").decode("utf-8", "replace").strip()
    report = reader.data or b""
    if not first:
        # The doctor always writes the first line; none means it died before handing over its
        # report (its end of the pipe closed with it). Say so at once, so that rank 0 need not
        # wait for the deadline to name this rank.
        return first, DIED
    return first, report or GAVE_UP


def collect(store, ns, world, wait_s, stop, parent):
    """Rank 0: every rank's report that arrives before the deadline; None if the doctor left."""
    deadline = time.monotonic() + wait_s
    keys = [f"{ns}/report/{r}" for r in range(world)]
    present = set()
    while True:
        for r in range(world):
            if r not in present and store.check([keys[r]]):
                present.add(r)
        if len(present) == world or stop.is_set() or time.monotonic() >= deadline:
            break
        if os.getppid() != parent:
            return None
        time.sleep(POLL_S)
    reports, hellos = {}, {}
    for r in range(world):
        if r in present:
            reports[str(r)] = store.get(keys[r]).decode("utf-8", "replace")
        hello_key = f"{ns}/hello/{r}"
        if store.check([hello_key]):
            try:
                hellos[str(r)] = json.loads(store.get(hello_key).decode("utf-8", "replace"))
            except ValueError:
                pass
    missing = [r for r in range(world) if r not in present]
    return {"reports": reports, "hellos": hellos, "missing": missing, "stopped": stop.is_set()}


def join(cfg, rank, ns):
    """Import torch.distributed and say hello on the store: (store, exit code if it failed)."""
    try:
        import torch.distributed  # noqa: F401
    except BaseException as exc:  # noqa: BLE001 - any import failure means: not this interpreter
        out(f"ERROR torch.distributed is not importable here: {type(exc).__name__}: {exc}")
        return None, 3
    out("IMPORTED")
    try:
        store = connect(cfg)
        store.set(f"{ns}/hello/{rank}", json.dumps(cfg.get("hello") or {}))
    except BaseException as exc:  # noqa: BLE001
        first = (str(exc).splitlines() or [""])[0]
        where = f"{cfg['host']}:{cfg['port']}"
        out(f"ERROR cannot use the rendezvous store at {where}: {type(exc).__name__}: {first}")
        return None, 4
    out("READY")
    return store, 0


def main():
    cfg = json.loads(sys.argv[1])
    rank, world = int(cfg["rank"]), int(cfg["world_size"])
    ns = cfg["namespace"]
    parent = os.getppid()
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    store, failed = join(cfg, rank, ns)
    if store is None:
        return failed

    reader = StdinReader()
    reader.start()
    while not reader.done.wait(POLL_S):
        if rank != 0:
            try:
                gone = store.check([f"{ns}/done"])
            except BaseException:  # noqa: BLE001 - the store (rank 0's) is gone
                gone = True
            if gone or stop.is_set():
                out("DONE")
                return 0
    first, report = handed_over(reader)
    try:
        store.set(f"{ns}/report/{rank}", report)
    except BaseException as exc:  # noqa: BLE001
        out(f"ERROR could not publish this rank's report: {type(exc).__name__}: {exc}")
        return 4
    if rank != 0:
        out("SENT")
        return 0
    try:
        wait_s = max(0.0, float(first))
    except ValueError:
        wait_s = 0.0
    result = collect(store, ns, world, wait_s, stop, parent)
    if result is None:
        return 5
    out("RESULT " + json.dumps(result))
    try:
        store.set(f"{ns}/done", "1")
    except BaseException:  # noqa: BLE001
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
