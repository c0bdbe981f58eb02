"""A library sets a torch compile config this torch does not have: "... does not exist".

`torch.utils._config_module` (torch/_dynamo/config_utils.py in 2.0 and 2.1) raises
`AttributeError: torch._inductor.config.fx_graph_cache does not exist` for a name its config module
does not define, on setting as on reading. Scripts and libraries written for one torch set knobs
another does not have: added later (fx_graph_cache in 2.2, recompile_limit in 2.7, where 2.7 keeps
cache_size_limit as its alias) or removed (Dynamo's log_level after 2.0).

Which releases define each knob is read from every release's config files by `tools/release_audit.py
sources` (core/source_history.py): in a log, `annotate` names the knob's releases and the log's own
torch. On the machine, the rule checks what the environment can set the same way: a
`TORCHINDUCTOR_*`/`TORCHDYNAMO_*` variable the installed torch's sources never read does nothing.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence

from inductor_doctor.core import source_history as history
from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one, torch_label
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: The variables torch's compile configs read, by prefix.
PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_")
#: Where torch reads them: the compile stack's own packages.
READ_IN = ("_inductor", "_dynamo", "_functorch", "compiler", "_logging",
           os.path.join("utils", "_config_module.py"))


def rule(facts: Facts) -> List[RuleOutcome]:
    t = facts.torch
    if t is None or not t.version or not t.path:
        return not_installed("torch")
    wanted = sorted(n for n in facts.env if n.startswith(PREFIXES))
    if not wanted:
        return one(Status.NOT_APPLICABLE, "no TORCHINDUCTOR_*/TORCHDYNAMO_* variable is set here; a "
                   "library's own `torch._inductor.config.X = ...` fails at its import, and "
                   "`explain --log` names the releases that have X")
    unread = [n for n in wanted if not _reads(t.path, n)]
    if not unread:
        return one(Status.OK, f"{torch_label(facts)} reads every TORCHINDUCTOR_*/TORCHDYNAMO_* variable set "
                   f"here ({', '.join(wanted)})")
    said = []
    for name in unread:
        runs = history.env_var(name)
        where = (f"; {history.said(runs, history.torch_releases(), 'torch')} read it in its config files"
                 if runs else "")
        said.append(f"{name}{where}")
    return one(Status.LIKELY, f"{torch_label(facts)} never reads {'; '.join(said)}: set here, it has no "
               "effect", Basis.STATIC, unread=unread)


def _reads(torch_dir: str, name: str) -> bool:
    """Whether any source of torch's compile stack names the variable (kept per torch build)."""
    from inductor_doctor.core.files import file_key
    from inductor_doctor.probe import _diskcache

    key = ["torch-reads-env/1", file_key(os.path.join(torch_dir, "version.py")), name]
    kept = _diskcache.get("torch-env", key)
    if kept is not None and isinstance(kept.get("value"), bool):
        return bool(kept["value"])
    found = _search(torch_dir, name)
    _diskcache.put("torch-env", key, {"value": found})
    return found


def _search(torch_dir: str, name: str) -> bool:
    needle = name.encode()
    for part in READ_IN:
        top = os.path.join(torch_dir, part)
        files = [top] if top.endswith(".py") else [
            os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if f.endswith(".py")]
        for path in files:
            try:
                with open(path, "rb") as f:
                    if needle in f.read():
                        return True
            except OSError:
                continue
    return False


# --- in a log ---------------------------------------------------------------------------------------

_MISSING = re.compile(r"(torch\._(?:inductor|dynamo|functorch)\.config)\.([\w.]+) does not exist"
                      r"|module '(torch\._(?:inductor|dynamo|functorch)\.config)' has no attribute '(\w+)'")
_NO_CONFIG = re.compile(r"module 'torch\._inductor' has no attribute 'config'")


def annotate(lines: Sequence[str], versions: Mapping[str, Sequence[str]]) -> Optional[str]:
    """Which torch releases define the knob the log names, beside the log's own torch."""
    text = "\n".join(lines)
    m = _MISSING.search(text)
    if m is None:
        if _NO_CONFIG.search(text):
            return ("torch._inductor.config is a submodule that only an import loads: the library uses it "
                    "after `import torch` alone (`import torch._inductor.config` first)")
        return None
    module, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return knob_sentence(module, name, [history.release_of(v) for v in versions.get("torch") or []])


def knob_sentence(module: str, name: str, stated: Sequence[Optional[str]] = ()) -> Optional[str]:
    """`torch._dynamo.config.recompile_limit is defined by torch 2.7.0 to 2.15.0 (cache_size_limit is
    its alias there); the log's torch is 2.5.1: ...`."""
    runs = history.knob(module, name)
    if runs is None:
        return None
    releases = history.torch_releases()
    full = f"{module}.{name}"
    if not runs:
        sentence = (f"{full} is defined by no torch release from {releases[0]} to {releases[-1]} (read from "
                    "each release's config file): a misspelt or private name, or one only a nightly has")
    else:
        sentence = f"{full} is defined by {history.said(runs, releases, 'torch')}"
    aliased = history.alias(module, name)
    if aliased is not None:
        target, alias_runs = aliased
        sentence += f"; an alias of {target} in torch {history.first(alias_runs)} on"
    olds = history.aliases_of(full)
    if olds:
        old, old_runs = olds[0]
        old_name = old.rsplit(".", 1)[-1]
        old_knob = history.knob(module, old_name) or []
        sentence += (f"; before torch {history.first(old_runs)} its name was {old_name} (defined from torch "
                     f"{history.first(old_knob)})") if old_knob else ""
    torch = next((v for v in stated if v), None)
    if torch:
        has = history.covers(runs, torch, releases[-1])
        if has is False:
            sentence += f"; the log's torch is {torch}, which does not have it"
        elif has is True:
            sentence += f"; the log's torch {torch} has it (another torch may be the one that ran)"
        else:
            sentence += f"; the log's torch {torch} is newer than the releases read"
    return sentence
