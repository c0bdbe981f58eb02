"""`check --distributed`: one torchrun rank's part of the check; rank 0 prints the fleet view.

Each rank checks its share of the node's devices (`fleet/shard.py`) with the ordinary check
(`check/flow.py`), in this torch-free process; the gather helper (`fleet/helper.py`) joins
torchrun's store beside it, hands the report over and, on rank 0, brings the others' back. Rank 0
returns the merged document; the other ranks return only an exit code and say nothing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

from inductor_doctor.check.flow import CheckRequest, Terminated, run_check
from inductor_doctor.core.model import ExitCode
from inductor_doctor.fleet.document import MergeDocument
from inductor_doctor.fleet.helper import (
    Helper,
    RankEnv,
    RankTerminated,
    finish_other,
    finish_rank0,
    gather_timeout,
    helper_interpreters,
)
from inductor_doctor.fleet.shard import device_filter
from inductor_doctor.probe.target import resolve_python


@dataclass
class RankOutcome:
    """What one rank ends with: rank 0 the fleet view to print, the others only an exit code."""

    document: Optional[MergeDocument]
    exit_code: int = 0


def run_rank(request: CheckRequest) -> RankOutcome:
    """`check --distributed` on one torchrun rank: check this rank's devices, gather at rank 0."""
    ctx = RankEnv.from_environ()
    timeout_s = gather_timeout()
    start = time.monotonic()
    request.devices = device_filter((ctx.local_rank, ctx.local_world_size))
    request.extra_meta = {
        **request.extra_meta,
        "distributed": {"rank": ctx.rank, "world_size": ctx.world_size, "local_rank": ctx.local_rank,
                        "local_world_size": ctx.local_world_size, "group_rank": ctx.group_rank,
                        "launcher_local_rank": ctx.launcher_local_rank},
    }
    target = resolve_python(request.python)
    hello = {"hostname": socket.gethostname(), "local_rank": ctx.local_rank, "group_rank": ctx.group_rank,
             "pid": os.getpid()}
    helper = Helper(ctx, hello, connect_timeout_s=timeout_s)
    gave_up = threading.Event()

    def rank0_stopped_waiting() -> None:
        gave_up.set()
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # the check's own SIGTERM path kills its canaries
        except OSError:
            pass

    if ctx.rank != 0:
        helper.on_done = rank0_stopped_waiting

    def on_term(signum: int, frame: Any) -> None:
        raise RankTerminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    helper.start(helper_interpreters(target))
    report_json = ""
    interrupted: Optional[int] = None
    try:
        try:
            report = run_check(request)
            if report.meta.get("interrupted"):
                interrupted = int(report.meta.get("exit_code", ExitCode.INTERRUPTED))
            report_json = json.dumps(report.to_dict())
        except KeyboardInterrupt as exc:  # SIGINT/SIGTERM outside the canary pool: no report at all
            terminated = isinstance(exc, (RankTerminated, Terminated))
            interrupted = int(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
        if ctx.rank != 0:
            try:
                return RankOutcome(None, finish_other(helper, report_json, gave_up, interrupted))
            except KeyboardInterrupt:  # rank 0 gave up on us just as we finished, or a real signal
                return RankOutcome(None, int(ExitCode.OK if gave_up.is_set() else ExitCode.TERMINATED))
        try:
            return RankOutcome(finish_rank0(helper, ctx, report_json, start, timeout_s, interrupted))
        except KeyboardInterrupt:
            return RankOutcome(None, int(ExitCode.TERMINATED))
    finally:
        signal.signal(signal.SIGTERM, previous)
        helper.close()
