"""remote-cache-unusable against a real Redis (tests/redis_server.py): each way a remote compile cache
cannot work, made for real and named, with nothing written to the server or the user's caches.

What torch itself does in each case (a silent miss, "Unable to create cache", "fx graph unable to
write to cache") is shown by real compiles in test_cache_keys_compiles.py (`-m heavy`); here the
doctor's side: the server's answers, the facts, the verdict, the CLI.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Dict, Iterator

import pytest
from conftest import run_cli
from redis_server import RedisServer, redis_client_python

from inductor_doctor.core.model import Status

PASSWORD = "s3cret-for-tests"


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[Dict[str, RedisServer]]:
    """A writable server, one that wants a password, a read-only replica of the first, and the port
    of one that was started and stopped (nothing listens there)."""
    root = tmp_path_factory.mktemp("redis")
    made: Dict[str, RedisServer] = {}
    try:
        made["open"] = RedisServer(root)
        made["password"] = RedisServer(root, password=PASSWORD)
        made["replica"] = RedisServer(root, "--replicaof", "127.0.0.1", str(made["open"].port))
        made["stopped"] = RedisServer(root)
        made["stopped"].stop()
        yield made
    finally:
        for server in made.values():
            server.stop()


def facts_for(env: Dict[str, str], python: str = sys.executable):
    from inductor_doctor import probe

    base = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_REDIS", "TRITON_REDIS"))}
    return probe.gather(python=python, environ={**base, **env})


def verdict(env: Dict[str, str], python: str = sys.executable):
    from inductor_doctor.kb import remote_cache_unusable

    facts = facts_for(env, python)
    (out,) = remote_cache_unusable.rule(facts)
    return facts, out


ON = {"TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "1"}


def test_a_working_server_is_ok_and_nothing_is_written(servers):
    python = redis_client_python()
    server = servers["open"]
    before = server.keys()
    facts, out = verdict({**ON, "TORCHINDUCTOR_REDIS_PORT": str(server.port)}, python)
    assert out.status is Status.OK, out.reason
    (info,) = facts.remote_caches
    assert info.caches == ["fx-graph", "aot-autograd"] and info.client
    assert (info.reachable, info.auth, info.writable) == (True, "none", True)
    assert "answers PING and accepts a write" in out.reason
    assert server.keys() == before, "the doctor's write changes nothing"


def test_no_client_library_is_named(servers):
    """This interpreter has no `redis`: torch would log "Unable to create cache" and go without."""
    pytest.importorskip("torch")
    try:
        import redis  # noqa: F401
        pytest.skip("the test interpreter has the redis client")
    except ImportError:
        pass
    facts, out = verdict({**ON, "TORCHINDUCTOR_REDIS_PORT": str(servers["open"].port)})
    assert out.status is Status.AFFECTED
    assert "the `redis` client is not installed" in out.reason and "Unable to create cache" in out.reason


@pytest.mark.parametrize("case, says", [
    ("stopped", "the server does not answer (ConnectionRefusedError"),
    ("password", "the server wants a password and none is configured (\"NOAUTH"),
    ("wrong password", "refuses the configured user or password (\"WRONGPASS"),
    ("replica", "the server refuses writes (\"READONLY You can't write against a read only replica"),
])
def test_each_way_the_server_fails_torch_is_named(servers, case, says):
    python = redis_client_python()
    if case == "wrong password":
        env = {"TORCHINDUCTOR_REDIS_URL": f"redis://:not-{PASSWORD}@127.0.0.1:{servers['password'].port}"}
    else:
        env = {"TORCHINDUCTOR_REDIS_PORT": str(servers[case].port)}
    facts, out = verdict({**ON, **env}, python)
    assert out.status is Status.AFFECTED, out.reason
    assert says in out.reason, out.reason
    assert PASSWORD not in json.dumps(facts.to_dict()), "no password is ever recorded"


def test_the_password_in_the_url_is_used_and_never_recorded(servers):
    python = redis_client_python()
    server = servers["password"]
    facts, out = verdict({**ON, "TORCHINDUCTOR_REDIS_URL": server.url}, python)
    assert out.status is Status.OK, out.reason
    assert "the password accepted" in out.reason
    (info,) = facts.remote_caches
    assert info.address == f"redis://127.0.0.1:{server.port}" and info.password
    assert PASSWORD not in json.dumps(facts.to_dict())


def test_check_says_it_as_a_warning(servers):
    """Through the CLI: a read-only replica is affected, a warning (exit 0 unless --fail-on-warnings)."""
    python = redis_client_python()
    env = {**ON, "TORCHINDUCTOR_REDIS_PORT": str(servers["replica"].port)}
    args = ["check", "--python", python, "--only", "remote-cache-unusable"]
    proc = run_cli([*args, "--format", "json"], env=env)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["results"]
    assert row["status"] == "affected" and row["severity"] == "warning"
    assert "READONLY" in row["reason"]
    assert run_cli([*args, "--fail-on-warnings"], env=env).returncode == 1


def test_nothing_configured_cannot_arise():
    facts, out = verdict({})
    assert out.status is Status.NOT_APPLICABLE and facts.remote_caches == []
