"""torch's own `collect_env`, run by the diagnosed interpreter, as its maintainers print it.

Every bug template asks for it; running the real module (in a subprocess, with a timeout) gives
every field it has in this torch release, exactly as upstream prints them. Where it cannot run (no
torch, a torch that does not import), the same fields come from the probe instead, marked so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from inductor_doctor.probe import _proc

TIMEOUT_S = 120.0
#: A field line of collect_env's output: `PyTorch version: 2.5.1`. List blocks (`[pip3] ...`,
#: CPU details) are kept in the text but are not fields.
FIELD = re.compile(r"^([A-Z][A-Za-z0-9 ./()_-]{1,60}?):[ \t]*(.*)$")


@dataclass
class CollectEnv:
    text: str  # as printed
    fields: Dict[str, str] = field(default_factory=dict)
    source: str = "torch.utils.collect_env"  # or "inductor-doctor probe" when torch could not say
    error: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        return {"source": self.source, "fields": dict(self.fields), "text": self.text, "error": self.error}


def parse_fields(text: str) -> Dict[str, str]:
    """`Key: value` lines, in order; a key seen twice keeps its first value."""
    fields: Dict[str, str] = {}
    for line in text.splitlines():
        m = FIELD.match(line.rstrip())
        if m and not line.startswith((" ", "\t", "[")):
            fields.setdefault(m.group(1).strip(), m.group(2).strip())
    return fields


def run_collect_env(python: str, timeout_s: float = TIMEOUT_S) -> CollectEnv:
    res = _proc.run([python, "-m", "torch.utils.collect_env"], timeout_s=timeout_s)
    if res.ok and "PyTorch version" in res.stdout:
        text = res.stdout.replace("Collecting environment information...\n", "", 1).strip("\n")
        return CollectEnv(text, parse_fields(text))
    return CollectEnv("", {}, error=res.why())


def from_facts(environment: Dict[str, Any], error: Optional[str]) -> CollectEnv:
    """collect_env's main fields, from what the probe found, when torch could not say itself."""
    py = environment.get("python") or {}
    torch = environment.get("torch") or {}
    cuda = environment.get("cuda") or {}
    cxx = environment.get("cxx") or {}
    gpus = cuda.get("gpus") or []
    rows: List[tuple] = [
        ("PyTorch version", torch.get("version") or "N/A (not installed)"),
        ("CUDA used to build PyTorch", torch.get("cuda") or "N/A"),
        ("ROCM used to build PyTorch", torch.get("hip") or "N/A"),
        ("GCC version", cxx.get("version_line") or "Could not collect"),
        ("Libc version", f"glibc-{py.get('glibc')}" if py.get("glibc") else "N/A"),
        ("Python version", py.get("version") or "N/A"),
        ("Python platform", f"{py.get('platform')}-{py.get('machine')}"),
        ("Is CUDA available", "N/A (not asked: torch did not run)"),
        ("CUDA runtime version", cuda.get("runtime_version") or "N/A"),
        ("GPU models and configuration", "; ".join(str(g.get("name")) for g in gpus) or "N/A"),
        ("Nvidia driver version", cuda.get("driver_version") or "N/A"),
    ]
    text = "\n".join(f"{k}: {v}" for k, v in rows)
    return CollectEnv(text, dict(rows), source="inductor-doctor probe", error=error)
