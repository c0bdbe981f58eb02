"""Will host B hit what host A compiled? Real compiles against a real Redis remote cache, and the doctor's
prediction for each pair (fleet/cache_keys.py over two `check` reports) held against what happened.

Host A compiles a function with the FX-graph and AOTAutograd remote caches on (a fresh local cache:
only Redis can give a later host a hit). Every other host compiles the same function, with one input of
the cache key changed or not, in a process and a local cache of its own: a variable the release reads
into its config (set to what changes the key, and to what does not), the cache-key tag, the CPU thread
count, the C++ compiler's name, a config entry a sitecustomize changes, another torch, Triton beside
the same torch. For each, the doctor's reports of A and of that host are merged: no difference must
mean a hit, and a difference a miss, naming the input. Then the remote cache itself: no client, a
stopped server, a wrong password, a read-only replica, each a miss (or a refused write) that
remote-cache-unusable names; and a cache turned off, which the comparison says. Nothing is written to
the user's caches (every process has its own under the run's temporary directory) and the doctor
writes nothing to the server.

`-m heavy`: about a minute per compile here. The venvs are tests/envs/build_caches.sh's; the redis
client one is made on first use (test_remote_cache.py), the others skip until built (fail under CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from conftest import REPO, run_cli, venv_python
from redis_server import RedisServer, command, redis_client_python

from inductor_doctor.fleet.document import build_document

pytestmark = pytest.mark.heavy
PROGRAM = REPO / "tests" / "data" / "caches" / "compile_once.py"
PASSWORD = "pw-for-the-compile-tests"


@dataclass
class Host:
    name: str
    env: Dict[str, Optional[str]] = field(default_factory=dict)
    python: str = ""  # "" the redis-client venv; "here" this interpreter (no redis client)
    variant: str = "1"
    #: The input the doctor must name when the run misses ("" none: a hit is expected to be predicted).
    names: str = ""
    #: The compile itself may fail (a cache that refuses a write torch does not catch).
    may_fail: bool = False


#: One input changed per host (or set to what changes nothing), against host A.
KEY_HOSTS = [
    Host("same"),
    Host("max-autotune-0", {"TORCHINDUCTOR_MAX_AUTOTUNE": "0"}),  # the default: no difference
    Host("max-autotune-1", {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}, names="env:TORCHINDUCTOR_MAX_AUTOTUNE"),
    Host("cache-key-tag", {"TORCH_COMPILE_CACHE_KEY_TAG": "blue"}, names="env:TORCH_COMPILE_CACHE_KEY_TAG"),
    Host("threads", {"OMP_NUM_THREADS": "1"}, names="threads"),
    Host("cxx-name", {"CXX": "g++-12"}, names="env:CXX"),  # the same compiler by another name: another key
    Host("startup-config", {"PYTHONPATH": "<sitecustomize>"}, names="config:inductor.epilogue_fusion"),
    Host("torch-2.9.0", python="caches-torch-2.9.0", names="torch"),
    # Another Triton beside a CPU torch: CacheBase.get_system() holds triton_key() only where torch
    # reaches a GPU, and no Triton kernel is compiled here, so the graph hits and nothing is predicted.
    Host("with-triton", python="caches-redis-triton"),
]


def _python(host: Host) -> str:
    if host.python == "here":
        return sys.executable
    return redis_client_python() if not host.python else venv_python(host.python)


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    root = tmp_path_factory.mktemp("redis")
    servers = {"open": RedisServer(root), "password": RedisServer(root, password=PASSWORD)}
    servers["replica"] = RedisServer(root, "--replicaof", "127.0.0.1", str(servers["open"].port))
    servers["stopped"] = RedisServer(root)
    servers["stopped"].stop()
    yield servers
    for s in servers.values():
        s.stop()


class Fleet:
    """Runs hosts: each a compile (its counters and output) and a `check` report in the same environment."""

    def __init__(self, root: Path, redis: Dict[str, RedisServer]) -> None:
        self.root = root
        self.redis = redis
        site = root / "startup"
        site.mkdir()
        (site / "sitecustomize.py").write_text("import torch._inductor.config as c\n"
                                               "c.epilogue_fusion = False\n")
        self.startup = str(site)
        self.runs: Dict[str, Dict[str, Any]] = {}

    def env_of(self, host: Host) -> Dict[str, Optional[str]]:
        base: Dict[str, Optional[str]] = {
            "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "1",
            "TORCHINDUCTOR_REDIS_PORT": str(self.redis["open"].port), "TORCHINDUCTOR_REDIS_URL": None,
            "TORCHINDUCTOR_CACHE_DIR": str(self.root / host.name / "inductor"),
            "TRITON_CACHE_DIR": str(self.root / host.name / "triton"),
        }
        env = {**base, **host.env}
        if env.get("PYTHONPATH") == "<sitecustomize>":
            env["PYTHONPATH"] = self.startup
        return env

    def run(self, host: Host) -> Dict[str, Any]:
        if host.name in self.runs:
            return self.runs[host.name]
        python = _python(host)
        env = self.env_of(host)
        full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
        proc = subprocess.run([python, str(PROGRAM), host.variant], capture_output=True, text=True,
                              timeout=1800, env=full)
        counters: Dict[str, int] = {}
        ran = False  # the program's last line: its counters, none at all where every cache is off
        for line in proc.stdout.splitlines():
            if line.startswith("COUNTERS "):
                counters, ran = json.loads(line[len("COUNTERS "):]), True
        assert ran or host.may_fail, f"{host.name}: the program did not run: {proc.stderr[-3000:]}"
        out = self.root / host.name / "check.json"
        check = run_cli(["check", "--python", python, "--only", "remote-cache-unusable", "--format", "json",
                         "--output", str(out)], env=env, timeout=1800)
        assert out.exists(), f"{host.name}: no report: {check.stderr[-2000:]}"
        report = json.loads(out.read_text())
        report["environment"]["host"]["hostname"] = f"node-{host.name}"
        result = {"counters": counters, "log": proc.stderr, "report": report,
                  "hit": counters.get("fxgraph_cache_hit", 0) > 0}
        self.runs[host.name] = result
        return result


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, redis) -> Fleet:
    f = Fleet(tmp_path_factory.mktemp("hosts"), redis)
    first = f.run(Host("a"))
    assert first["counters"].get("fxgraph_cache_miss") == 1 and not first["hit"], first["counters"]
    assert redis["open"].keys() > 0, "host A wrote its graph to Redis"
    with ThreadPoolExecutor(max_workers=2) as ex:  # two cores: two hosts at a time
        for host in KEY_HOSTS:
            ex.submit(_quietly, f, host)
    return f


def _quietly(f: Fleet, host: Host) -> None:
    try:
        f.run(host)
    except BaseException:  # noqa: BLE001 - the test of that host runs it again and shows the failure
        pass


def compare(fleet: Fleet, name: str) -> Dict[str, Any]:
    a = fleet.runs["a"]["report"]
    b = fleet.runs[name]["report"]
    return build_document([a, b]).to_dict()["cache_keys"]


@pytest.mark.parametrize("host", KEY_HOSTS, ids=lambda h: h.name)
def test_the_predicted_hit_or_miss_is_what_happens(fleet, host):
    run = fleet.run(host)
    keys = compare(fleet, host.name)
    named = [d["id"] for d in keys["differences"]]
    predicted_hit = not named and not keys["caches_off"]
    assert predicted_hit == run["hit"], (host.name, run["counters"], keys)
    if host.names:
        assert not run["hit"], f"{host.name}: expected the change to make a miss: {run['counters']}"
        assert host.names in named, (host.name, keys)
    else:
        assert run["hit"], (host.name, run["counters"], keys)


def test_the_two_hosts_line_names_the_variable(fleet):
    """As `merge` prints it, for the variable that changes Inductor's config."""
    fleet.run(KEY_HOSTS[2])
    files = []
    for name in ("a", "max-autotune-1"):
        path = fleet.root / f"{name}.json"
        path.write_text(json.dumps(fleet.runs[name]["report"]))
        files.append(str(path))
    proc = run_cli(["merge", *files], env={"COLUMNS": "200"})
    assert ("Compile caches: node-max-autotune-1 will miss what node-a compiled: TORCHINDUCTOR_MAX_AUTOTUNE "
            "differs (1 vs unset; FX graph, AOTAutograd keys)") in proc.stdout, proc.stdout


def _unusable(run: Dict[str, Any]) -> Dict[str, Any]:
    (row,) = [r for r in run["report"]["results"] if r["id"] == "remote-cache-unusable"]
    return row


@pytest.mark.parametrize("case, host_env, python, says", [
    ("no-client", {}, "here", "the `redis` client is not installed"),
    ("stopped", {"TORCHINDUCTOR_REDIS_PORT": "<stopped>"}, "", "the server does not answer"),
    ("wrong-password", {"TORCHINDUCTOR_REDIS_URL": "<wrong>"}, "", "refuses the configured user or password"),
])
def test_a_remote_cache_that_cannot_work_misses_and_is_named(fleet, redis, case, host_env, python, says):
    env = dict(host_env)
    if env.get("TORCHINDUCTOR_REDIS_PORT") == "<stopped>":
        env["TORCHINDUCTOR_REDIS_PORT"] = str(redis["stopped"].port)
    if env.get("TORCHINDUCTOR_REDIS_URL") == "<wrong>":
        env["TORCHINDUCTOR_REDIS_URL"] = f"redis://:not-{PASSWORD}@127.0.0.1:{redis['password'].port}"
    run = fleet.run(Host(case, env, python=python))
    assert not run["hit"], run["counters"]
    assert compare(fleet, case)["differences"] == [], "the keys agree: the remote cache is what failed"
    row = _unusable(run)
    assert row["status"] == "affected" and says in row["reason"], row
    if case == "no-client":
        assert "redis not available but required for remote cache" in run["log"]
    else:
        assert "Traceback" not in run["log"], "torch says nothing about it"
    assert PASSWORD not in json.dumps(run["report"])


def test_a_read_only_replica_serves_hits_and_refuses_writes(fleet, redis):
    port = str(redis["replica"].port)
    hit = fleet.run(Host("replica-hit", {"TORCHINDUCTOR_REDIS_PORT": port}))
    assert hit["hit"], hit["counters"]
    write = fleet.run(Host("replica-write", {"TORCHINDUCTOR_REDIS_PORT": port}, variant="2", may_fail=True))
    # The write is refused: torch 2.13 counts it as a write error, or (a remote cache whose put it does
    # not guard) the compile fails with the server's own error.
    assert (write["counters"].get("fxgraph_cache_write_error") == 1
            or "ReadOnlyError" in write["log"]), (write["counters"], write["log"][-2000:])
    assert "ReadOnlyError" in write["log"] or "unable to write to cache" in write["log"]
    row = _unusable(write)
    assert row["status"] == "affected" and "refuses writes" in row["reason"], row


def test_a_cache_turned_off_never_hits_and_the_comparison_says_so(fleet):
    # Both FX graph caches: with the local one off, torch still serves a hit from the remote one.
    run = fleet.run(Host("cache-off", {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
                                       "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0"}))
    assert not run["hit"], run["counters"]
    keys = compare(fleet, "cache-off")
    assert [c["source"] for c in keys["caches_off"]] == ["node-cache-off"], keys
    said = " ".join(keys["caches_off"][0]["settings"])
    assert "the local FX graph cache is off" in said and "the remote FX graph cache is off" in said, said


def test_the_doctor_wrote_nothing_to_the_server(fleet, redis):
    for name in ("open", "replica"):
        assert command(redis[name].port, "KEYS", "inductor-doctor*") == "*0"
    assert redis["password"].run("KEYS", "inductor-doctor*") == "*0"
