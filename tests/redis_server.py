"""A real Redis for the tests: Debian's `redis-server`, started on a free local port in a directory of
its own and stopped after (tests/setup.sh installs it; .ci/run runs setup.sh).

Where there is no `redis-server` the tests that need one skip, and fail under CI=true, where setup.sh
provides it. Each server persists nothing (`--save ""`, no append-only file) and listens on 127.0.0.1
only; a replica of another is read-only, as Redis replicas are by default.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

import pytest
from conftest import ENVS, purelib_of, still_see_this_python, venv_seeing_this_python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary() -> str:
    """The `redis-server` to run, or a skip (a failure under CI, where setup.sh installs it)."""
    found = shutil.which("redis-server")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("redis-server is not installed: tests/setup.sh installs it (apt-get install "
                    "redis-server)")
    pytest.skip("redis-server is not installed (tests/setup.sh installs it)")
    raise AssertionError  # pragma: no cover


def command(port: int, *args: str, timeout: float = 2.0) -> str:
    """One command's first reply line, spoken over the socket (the doctor's probe does the same)."""
    from inductor_doctor.probe.remote_caches import _command

    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        return _command(s, *args)


class RedisServer:
    """One running redis-server; `stop()` ends it (the fixture does at teardown)."""

    def __init__(self, folder: Path, *args: str, password: Optional[str] = None) -> None:
        self.port = free_port()
        self.password = password
        self.dir = folder / f"redis-{self.port}"
        self.dir.mkdir(parents=True)
        argv: List[str] = [binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", str(self.dir), "--daemonize", "no",
                           "--logfile", str(self.dir / "log")]
        if password:
            argv += ["--requirepass", password]
        self.proc: Optional[subprocess.Popen] = subprocess.Popen(argv + list(args), stdout=subprocess.DEVNULL,
                                                                 stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                reply = command(self.port, "PING")
                if reply in ("+PONG",) or reply.startswith("-NOAUTH"):
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                logfile = self.dir / "log"
                log = logfile.read_text(errors="replace")[-2000:] if logfile.exists() else ""
                self.stop()
                pytest.fail(f"redis-server did not start on port {self.port}: {log}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def run(self, *args: str) -> str:
        """One command's first reply line, after AUTH where the server wants a password."""
        from inductor_doctor.probe.remote_caches import _command

        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            if self.password:
                _command(s, "AUTH", self.password)
            return _command(s, *args)

    def keys(self) -> int:
        """How many keys it holds (DBSIZE)."""
        return int(self.run("DBSIZE")[1:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def redis_client_python() -> str:
    """An interpreter that sees this one's packages (torch, the doctor) and has the `redis` client:
    the client installed from the registry once into the test cache (tests/envs/build_caches.sh
    makes the same)."""
    venv = ENVS / "caches-redis-client"
    if (venv / ".ready").exists():
        still_see_this_python(venv)
        return str(venv / "bin" / "python")
    python = venv_seeing_this_python(venv)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "--target", str(purelib_of(python)), "redis"], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        msg = f"cannot install the redis client: {proc.stderr.strip()[-300:]}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    (venv / ".ready").touch()
    return python
