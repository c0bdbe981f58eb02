"""Where the doctor runs: host name, OS, and the torchrun coordinates a fleet view needs."""

from __future__ import annotations

import os
import platform
import socket
from typing import Any, Dict, Optional


def host_info() -> Dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "os": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "rank": _int_env("RANK"),
        "local_rank": _int_env("LOCAL_RANK"),
        "world_size": _int_env("WORLD_SIZE"),
    }


def _int_env(name: str) -> Optional[int]:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None
