"""A remote compile cache is configured and cannot work: no client, no server, a refusal, read-only.

Reproduced with torch 2.13.0+cpu, redis-py 8.1.0 and Debian's redis-server 7.0.15
(tests/known_issues/test_cache_keys_compiles.py, `-m heavy`): without the client, torch logs "Unable to
create cache" with "RuntimeError: redis not available but required for remote cache" and compiles
without the cache; a stopped server, a wrong
password and a password not given all end in a miss and nothing else (redis-py's `AuthenticationError`
is a `ConnectionError`, which `RedisRemoteCacheBackend` catches and then stops asking); a read-only
replica serves what its primary holds and every write logs "fx graph unable to write to cache" with
`ReadOnlyError`. The facts are the server's own answers (probe/remote_caches.py): it never writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.facts import CACHE_NAMES
from inductor_doctor.core.model import RuleOutcome, Status, Workaround
from inductor_doctor.kb._builtin import known_issue
from inductor_doctor.kb._catalog import one, outcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, RemoteCacheInfo


def _what(info: RemoteCacheInfo) -> str:
    caches = ", ".join(CACHE_NAMES.get(c, c) for c in info.caches)
    settings = ", ".join(info.settings)
    where = f" at {info.address}" if info.address else ""
    return f"the {caches} remote cache ({settings}){where}"


#: What torch does, for each way the server can fail it (read from torch/_inductor/remote_cache.py).
NO_CLIENT_TORCH = ("torch logs \"Unable to create cache\" (\"... a remote cache\" through 2.12) with "
                   "\"RuntimeError: redis not available but required for remote cache\" (torch 2.8 and "
                   "later; silent before) and compiles without it")
NO_CLIENT_TRITON = "Triton's RedisRemoteCacheBackend raises ModuleNotFoundError when it compiles a kernel"
SILENT = "torch catches redis-py's ConnectionError (AuthenticationError is one) and stops using the remote " \
    "cache for the process, without a word"


def problems(info: RemoteCacheInfo) -> List[str]:
    """Every reason this remote cache cannot work, in the order a fix would meet them."""
    out: List[str] = []
    torch_side = any(c != "triton" for c in info.caches)
    if info.backend == "redis" and info.client is None:
        out.append("the `redis` client is not installed for this Python: "
                   + (NO_CLIENT_TORCH if torch_side else NO_CLIENT_TRITON))
    if info.backend != "redis":
        if info.error:
            out.append(info.error)
        return out
    if info.reachable is False:
        out.append(f"the server does not answer ({info.error}): {SILENT}")
    elif info.auth == "required":
        out.append(f"the server wants a password and none is configured (\"{info.answer}\"): {SILENT}")
    elif info.auth == "rejected":
        out.append(f"the server refuses the configured user or password (\"{info.answer}\"): {SILENT}")
    elif info.writable is False:
        out.append(f"the server refuses writes (\"{info.answer}\"): hits are served, and every compile logs "
                   "\"fx graph unable to write to cache\" and shares nothing")
    return out


def judge(info: RemoteCacheInfo) -> RuleOutcome:
    what = _what(info)
    found = problems(info)
    if found:
        return outcome(Status.AFFECTED, f"{what}: " + "; and ".join(found))
    if info.backend != "redis":
        return outcome(Status.INCONCLUSIVE, f"{what}: a backend the doctor cannot ask ({info.backend})")
    if info.error:
        return outcome(Status.INCONCLUSIVE, f"{what}: {info.error}")
    if info.reachable and info.writable:
        auth = ", the password accepted" if info.auth == "ok" else ""
        return outcome(Status.OK, f"{what}: the server answers PING and accepts a write{auth}; "
                       f"redis client {info.client} installed")
    return outcome(Status.INCONCLUSIVE, f"{what}: {info.answer or 'the server gave no usable answer'}")


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return one(Status.NOT_APPLICABLE, "torch is not installed (torch-missing says so)")
    if not facts.remote_caches:
        return one(Status.NOT_APPLICABLE, "no remote compile cache is configured "
                   "(TORCHINDUCTOR_*_REMOTE_CACHE, TRITON_REMOTE_CACHE_BACKEND are not set)")
    outs = [judge(info) for info in facts.remote_caches]
    worst = next((o for o in outs if o.status == Status.AFFECTED), None) or \
        next((o for o in outs if o.status == Status.INCONCLUSIVE), None) or outs[0]
    if len(outs) == 1:
        return outs
    return [outcome(worst.status, "; ".join(o.reason for o in outs))]


def advise(facts: Facts) -> List[Workaround]:
    """The workaround for what is wrong here first: the client, the server, or the replica."""
    infos = facts.remote_caches
    drop: List[str] = []
    if all(i.client for i in infos if i.backend == "redis"):
        drop.append("pip install redis")
    if not any(i.reachable is False or i.auth in ("required", "rejected") for i in infos):
        drop.append("TORCHINDUCTOR_REDIS_URL")
    if not any(i.writable is False for i in infos):
        drop.append("read-only replica")
    return list(Workaround.pick(ISSUE.workarounds, drop=drop))


ISSUE = known_issue(__name__)
