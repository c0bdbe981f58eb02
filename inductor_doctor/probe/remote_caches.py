"""The remote compile caches configured here, and whether their server answers (remote-cache-unusable).

torch (`torch/_inductor/remote_cache.py`, every release since 2.5) keeps its FX-graph, AOTAutograd
and autotune entries in Redis when `TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1`,
`TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE=1` or `TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE=1` (or
`..._BUNDLED_AUTOTUNE_...`) is set, at `TORCHINDUCTOR_REDIS_URL`, else `TORCHINDUCTOR_REDIS_HOST`
and `_PORT` (localhost:6379). Every way it can fail is silent: without the `redis` client,
`create_cache` logs "Unable to create cache" and compiles without the remote cache; a refused
connection or a refused password (redis-py's `AuthenticationError` is a `ConnectionError`) turns the
remote cache off for the process without a word. Triton's (`triton/runtime/cache.py`) is on when
`TRITON_CACHE_MANAGER` names its `RemoteCacheManager` and `TRITON_REMOTE_CACHE_BACKEND` a backend;
its Redis backend imports `redis` when a kernel compiles and connects to `TRITON_REDIS_HOST`/`_PORT`.

The settings are read with the release's own semantics (probe/_config_reads.py on the installed
config files). The server is asked over its own protocol (RESP), from this process, with a short
timeout: `AUTH` where a password is configured, `PING`, and `DEL` of a key that cannot exist, a
write command that changes nothing, which a read-only replica (`READONLY`), an ACL (`NOPERM`) or a
server that cannot save (`MISCONF`) refuses. Nothing is written. No password is ever recorded.
"""

from __future__ import annotations

import os
import socket
import ssl
import time
import uuid
from typing import Dict, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit

from inductor_doctor.core.facts import RemoteCacheInfo, TorchInfo, TritonInfo
from inductor_doctor.probe import _config_reads
from inductor_doctor.probe.step import Step

TIMEOUT_S = 1.0
#: The config entries that turn torch's remote caches on: (file, entry) -> the cache.
TORCH_SWITCHES: Tuple[Tuple[str, str, str], ...] = (
    ("_inductor/config.py", "fx_graph_remote_cache", "fx-graph"),
    ("_functorch/config.py", "enable_remote_autograd_cache", "aot-autograd"),
    ("_inductor/config.py", "autotune_remote_cache", "autotune"),
    ("_inductor/config.py", "bundled_autotune_remote_cache", "autotune"),
)
TRITON_REDIS_BACKEND = "RedisRemoteCacheBackend"


def _torch_switches(torch_dir: str, env: Mapping[str, str]) -> List[Tuple[str, str]]:
    """(cache, setting) of every torch remote cache the environment turns on, as the release reads it:
    the effect where the doctor follows the code, else the value "1" (every release's `== "1"`)."""
    out: List[Tuple[str, str]] = []
    for rel, entry, cache in TORCH_SWITCHES:
        for read in _config_reads.reads(os.path.join(torch_dir, rel)):
            if read.entry != entry or read.name not in env:
                continue
            understood, on = _config_reads.effect(read, env[read.name])
            if (on is True) if understood else env[read.name] == "1":
                setting = f"{read.name}={env[read.name]}"
                if (cache, setting) not in out:
                    out.append((cache, setting))
    return out


def _reads_url(torch_dir: str) -> bool:
    """Whether this torch reads TORCHINDUCTOR_REDIS_URL (2.7 and later); before, only HOST and PORT."""
    try:
        with open(os.path.join(torch_dir, "_inductor", "remote_cache.py"), encoding="utf-8",
                  errors="replace") as f:
            return "TORCHINDUCTOR_REDIS_URL" in f.read()
    except OSError:
        return False


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return parts._replace(netloc=host).geturl()


def gather(env: Mapping[str, str], packages: Mapping[str, str], torch: Optional[TorchInfo],
           triton: Optional[TritonInfo]) -> List[RemoteCacheInfo]:
    """Every remote cache configured here, grouped by server, each asked once."""
    found: Dict[Tuple[str, str], RemoteCacheInfo] = {}
    client = packages.get("redis")
    if torch is not None and torch.path and os.path.isdir(torch.path):
        switches = _torch_switches(torch.path, env)
        if switches:
            url = env.get("TORCHINDUCTOR_REDIS_URL") if _reads_url(torch.path) else None
            if url:
                address, via = url, "TORCHINDUCTOR_REDIS_URL"
            else:
                host = env.get("TORCHINDUCTOR_REDIS_HOST", "localhost")
                port = env.get("TORCHINDUCTOR_REDIS_PORT", "6379")
                address = f"redis://{host}:{port}"
                via = ("TORCHINDUCTOR_REDIS_HOST/PORT" if "TORCHINDUCTOR_REDIS_HOST" in env
                       or "TORCHINDUCTOR_REDIS_PORT" in env else "default (localhost:6379)")
            info = found.setdefault(("redis", address),
                                    RemoteCacheInfo(backend="redis", via=via, client=client))
            for cache, setting in switches:
                if cache not in info.caches:
                    info.caches.append(cache)
                info.settings.append(setting)
            info.address = address
    manager = env.get("TRITON_CACHE_MANAGER", "")
    backend = env.get("TRITON_REMOTE_CACHE_BACKEND", "")
    if triton is not None and ("RemoteCacheManager" in manager or backend):
        names = ("TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND")
        settings = [f"{n}={env[n]}" for n in names if env.get(n)]
        if backend.endswith(TRITON_REDIS_BACKEND):
            host = env.get("TRITON_REDIS_HOST", "localhost")
            port = env.get("TRITON_REDIS_PORT", "6379")
            address = f"redis://{host}:{port}"
            via = "TRITON_REDIS_HOST/PORT" if ("TRITON_REDIS_HOST" in env or "TRITON_REDIS_PORT" in env) \
                else "default (localhost:6379)"
            info = found.setdefault(("redis", address),
                                    RemoteCacheInfo(backend="redis", via=via, client=client, address=address))
        else:
            info = found.setdefault(("triton", backend), RemoteCacheInfo(backend=backend or "none"))
            if "RemoteCacheManager" in manager and not backend:
                info.error = ("TRITON_CACHE_MANAGER names RemoteCacheManager but TRITON_REMOTE_CACHE_BACKEND "
                              "is not set: Triton raises when it compiles a kernel")
        if "triton" not in info.caches:
            info.caches.append("triton")
        info.settings += settings
    out = list(found.values())
    for info in out:
        if info.backend == "redis" and info.address:
            ask(info)
    return out


def ask(info: RemoteCacheInfo, timeout_s: float = TIMEOUT_S) -> None:
    """Fill in what the Redis server at `info.address` answers; the address is then recorded without
    its password."""
    start = time.monotonic()
    raw = info.address or ""
    parts = urlsplit(raw if "://" in raw else "redis://" + raw)
    info.address = _redact(raw)
    password = unquote(parts.password) if parts.password is not None else None
    user = unquote(parts.username) if parts.username else None
    info.password = bool(password)
    try:
        sock = _connect(parts, timeout_s)
    except OSError as exc:
        info.reachable = False
        info.error = f"{type(exc).__name__}: {exc.strerror or exc}"
        info.duration_s = time.monotonic() - start
        return
    info.reachable = True
    try:
        with sock:
            if password:
                reply = _command(sock, "AUTH", *([user] if user else []), password)
                if reply.startswith("-"):
                    info.auth, info.answer = "rejected", reply[1:]
                    return
                info.auth = "ok"
            reply = _command(sock, "PING")
            if reply.startswith("-NOAUTH"):
                info.auth, info.answer = "required", reply[1:]
                return
            if reply.startswith("-"):
                info.answer = reply[1:]
                return
            info.auth = info.auth or "none"
            reply = _command(sock, "DEL", f"inductor-doctor:probe:{uuid.uuid4().hex}")
            info.writable = not reply.startswith("-")
            if not info.writable:
                info.answer = reply[1:]
            _command(sock, "QUIT")
    except OSError as exc:
        info.error = f"{type(exc).__name__}: {exc.strerror or exc}"
    except ValueError as exc:
        info.error = f"not a Redis server: {exc}"
    finally:
        info.duration_s = time.monotonic() - start


def _connect(parts, timeout_s: float) -> socket.socket:  # type: ignore[no-untyped-def]
    if parts.scheme == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout_s)
        sock.connect(parts.path)
        return sock
    sock = socket.create_connection((parts.hostname or "localhost", parts.port or 6379), timeout=timeout_s)
    sock.settimeout(timeout_s)
    if parts.scheme == "rediss":
        return ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname)
    return sock


def _command(sock: socket.socket, *args: str) -> str:
    """One RESP command and the first line of its reply (`+PONG`, `-NOAUTH ...`, `:0`)."""
    data = f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args)
    sock.sendall(data)
    line = b""
    while not line.endswith(b"\r\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ValueError("the connection closed without an answer")
        line += chunk
        if len(line) > 4096:
            raise ValueError("an answer longer than a Redis status line")
    text = line[:-2].decode("utf-8", "replace")
    if not text or text[0] not in "+-:$*_#,(!=%~>":
        raise ValueError(f"it answered {text[:60]!r}")
    return text


STEP = Step("remote_caches", ("environ", "packages", "torch", "triton"), gather, lambda m, known: [],
            "remote caches")
