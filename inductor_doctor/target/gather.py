"""Gathers every torchrun rank's report on rank 0 through torch.distributed's TCPStore.

Run as a script, never imported by the doctor: the doctor's own process stays torch-free. Standard
library (plus torch where it must), Python 3.8 syntax, because inductor-doctor itself is usually not
installed where this runs.

It speaks to torchrun's store with a client of its own, over a socket, in the store's wire format
(torch/csrc/distributed/c10d/TCPStore.cpp and TCPStoreBackend.hpp: a VALIDATE with the magic number,
a PING echoed, keys under "/", SET, CHECK, WAIT and GET, little-endian lengths; read from the bytes
torch 2.9 and 2.13 send): importing torch only to reach the store took seconds per rank, on the
critical path of every `check --distributed`. Where that client cannot talk to the store (a torch
whose store speaks otherwise) or a store must be served (rank 0 without torchrun's agent store), it
falls back to `torch.distributed.TCPStore`, under an interpreter that has torch.

Why a store and not `init_process_group` + `gather_object`: a process group needs every rank to
join, so one dead or hung rank would make everyone wait and then fail together. With the store,
each rank writes its report under its own key and rank 0 waits for each key with a deadline, so
the missing ranks can be named and the others still reported.

Protocol (one line each on stdout):
  argv[1]   JSON: rank, world_size, host, port, agent_store, namespace, connect_timeout_s, hello
  IMPORTED  a client is at hand (its own, or torch.distributed): this interpreter will do
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
import random
import signal
import socket
import struct
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


class StoreError(Exception):
    """The store answered otherwise than this client expects, or went away."""


class NativeStore:
    """A client of torch's TCPStore that needs no torch: set, check and get, as torch sends them."""

    VALIDATE, SET, GET, CHECK, WAIT, PING = 0, 1, 3, 5, 6, 13
    MAGIC = 0x3C85F7CE
    READY, STOP_WAITING = 0, 0

    def __init__(self, host, port, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:  # the agent's store is up before the workers start; retry briefly all the same
            try:
                self.sock = socket.create_connection((host, port), timeout=min(10.0, timeout_s))
                break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise StoreError(f"cannot connect: {exc}") from None
                time.sleep(0.2)
        self.sock.settimeout(30.0)
        self.lock = threading.Lock()
        self.sock.sendall(struct.pack("<BI", self.VALIDATE, self.MAGIC))
        nonce = random.randrange(1, 1 << 31)
        self.sock.sendall(struct.pack("<BI", self.PING, nonce))
        if struct.unpack("<I", self._recv(4))[0] != nonce:
            raise StoreError("the store answered the ping with another number")

    def _recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise StoreError("the store closed the connection")
            out += chunk
        return out

    @staticmethod
    def _bytes(data):
        return struct.pack("<Q", len(data)) + data

    def _key(self, key):
        return self._bytes(("/" + key).encode("utf-8"))

    def set(self, key, value):
        if isinstance(value, str):
            value = value.encode("utf-8")
        with self.lock:
            self.sock.sendall(struct.pack("<B", self.SET) + self._key(key) + self._bytes(value))

    def check(self, keys):
        with self.lock:
            query = struct.pack("<BQ", self.CHECK, len(keys)) + b"".join(self._key(k) for k in keys)
            self.sock.sendall(query)
            answer = self._recv(1)[0]
        if answer not in (0, 1):
            raise StoreError(f"unexpected answer {answer} to a check")
        return answer == self.READY

    def get(self, key):
        with self.lock:
            self.sock.sendall(struct.pack("<BQ", self.WAIT, 1) + self._key(key))
            if self._recv(1)[0] != self.STOP_WAITING:
                raise StoreError("unexpected answer to a wait")
            self.sock.sendall(struct.pack("<B", self.GET) + self._key(key))
            size = struct.unpack("<Q", self._recv(8))[0]
            return self._recv(size)


def native(cfg):
    """The store through this script's own client, or None (then torch's): rank 0 without the
    agent's store serves the store itself, which only torch can."""
    if os.environ.get("INDUCTOR_DOCTOR_GATHER_CLIENT") == "torch":
        return None
    if cfg["rank"] == 0 and not cfg["agent_store"]:
        return None
    try:
        return NativeStore(cfg["host"], int(cfg["port"]), min(float(cfg["connect_timeout_s"]), 60.0))
    except (OSError, StoreError, struct.error):
        return None


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
    """Reach the store (this script's own client, else torch.distributed's) and say hello on it:
    (store, exit code if it failed)."""
    store = native(cfg)
    if store is None:
        try:
            import torch.distributed  # noqa: F401
        except BaseException as exc:  # noqa: BLE001 - any import failure means: not this interpreter
            out(f"ERROR torch.distributed is not importable here: {type(exc).__name__}: {exc}")
            return None, 3
    out("IMPORTED")
    try:
        store = store or connect(cfg)
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
