"""Which ptxas Triton runs for a GPU, and whether that ptxas knows the GPU.

Triton picks its assembler per architecture, and the rule changed four times (read from every
wheel by `tools/release_audit.py`; the snapshot is `_data/releases.json`):

- 2.0-3.2: `TRITON_PTXAS_PATH`, else the bundled `ptxas`, for every GPU;
- 3.3: for sm_100 and newer a second bundled `ptxas-blackwell`, overridden by
  `TRITON_PTXAS-BLACKWELL_PATH` (built as `TRITON_{binary.upper()}_PATH`: a hyphen, which no
  shell can `export`);
- 3.4-3.5: no `ptxas-blackwell`; one CUDA 12.8 `ptxas` for every GPU;
- 3.6-3.8: `ptxas-blackwell` again for sm_100 and newer, set with `TRITON_PTXAS_BLACKWELL_PATH`;
- 3.9: `ptxas-blackwell` (CUDA 13) for sm_90 and newer (triton-lang/triton#11854).

`TRITON_PTXAS_PATH` does not reach the architectures that go to `ptxas-blackwell`. An override
that is not a file is skipped and the bundled binary used, as Triton does. The switch is read
from the installed `backends/nvidia/compiler.py`, else taken from the snapshot for that release.
Whether the chosen binary knows the GPU is asked of the binary itself (`probe.ptxas`), else of
the snapshot's run of the same bundled binary or of the same CUDA release.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Tuple

from inductor_doctor.kb._catalog import triton_source

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, PtxasInfo

_SWITCH = (
    re.compile(r"[\"']ptxas[-_]blackwell[\"']\s+if\s+arch\s*>=\s*(\d+)"),  # 3.3
    re.compile(r"ptxas_blackwell\s+if\s+arch\s*>=\s*(\d+)"),  # 3.6-3.8
    re.compile(r"if\s+arch\s*<\s*(\d+)\s*:\s*return\s+knobs\.nvidia\.ptxas\b"),  # 3.9
)
_HYPHEN_ENV = re.compile(r"f[\"']TRITON_\{binary\.upper\(\)\}_PATH[\"']")
_SUFFIX = re.compile(r"suffix = ['\"]a ?['\"] if capability (>=|==) 90")
PLAIN_ENV = "TRITON_PTXAS_PATH"


@dataclass(frozen=True)
class Scheme:
    """How one Triton release picks its ptxas: from which architecture `ptxas-blackwell` is used
    (None: never), the variable that overrides it, and when `--gpu-name` gets an `a` suffix."""

    blackwell_from: Optional[int]
    blackwell_env: Optional[str]
    suffix: Optional[str]  # ">=90" | "==90" | None
    source: str  # where this was read: "compiler.py" or "release snapshot (triton 3.9.0)"
    release: Optional[str] = None  # the snapshot release it came from

    def gpu_name(self, arch: int) -> str:
        """The `--gpu-name` Triton passes for `arch` (`sm_90a` from 3.0, `sm_120a` from 3.3)."""
        a = (self.suffix == ">=90" and arch >= 90) or (self.suffix == "==90" and arch == 90)
        return f"sm_{arch}{'a' if a else ''}"


@dataclass(frozen=True)
class Ptxas:
    path: Optional[str]
    release: Optional[str]  # "12.4"
    source: str  # "TRITON_PTXAS_PATH", "bundled ptxas", "bundled ptxas-blackwell", ...
    gpu_name: Optional[str] = None  # what Triton passes for the GPU asked about
    ignored: Optional[str] = None  # an override that is set but does not reach this GPU
    bundled: bool = False
    scheme: Optional[Scheme] = None


def _asked(facts: Facts, path: Optional[str]) -> Optional[PtxasInfo]:
    """What the probe learnt of this ptxas by asking it, if it did."""
    return next((p for p in facts.cuda.ptxas_binaries if p.path == path), None) if path else None


def release_of(facts: Facts, path: Optional[str]) -> Optional[str]:
    """The CUDA release this ptxas reports, as the probe read it."""
    asked = _asked(facts, path)
    return asked.release if asked is not None else None


def scheme(facts: Facts) -> Optional[Scheme]:
    """This Triton's selection rule, from its sources, else from the snapshot; None if unknown."""
    src = triton_source(facts, "backends", "nvidia", "compiler.py")
    if src is not None:
        return _from_source(src, triton_source(facts, "knobs.py") or "")
    from inductor_doctor.core.releases import triton_release

    found = triton_release(facts.triton.version if facts.triton else None)
    if found is None:
        if facts.triton is not None and os.path.isdir(os.path.join(facts.triton.path or "", "third_party")):
            return Scheme(None, None, None, "triton 2.x layout")
        return None
    release, entry = found
    bw = entry.get("ptxas_blackwell")
    return Scheme(bw["from_arch"] if bw else None, bw["env"] if bw else None, entry.get("arch_suffix"),
                  f"release snapshot (triton {release})", release)


def _from_source(src: str, knobs: str) -> Scheme:
    switch = next((int(m.group(1)) for p in _SWITCH if (m := p.search(src))), None)
    env = None
    if switch is not None:
        hyphen = _HYPHEN_ENV.search(src) is not None and "ptxas_blackwell" not in knobs
        env = "TRITON_PTXAS-BLACKWELL_PATH" if hyphen else "TRITON_PTXAS_BLACKWELL_PATH"
    m = _SUFFIX.search(src)
    return Scheme(switch, env, f"{m.group(1)}90" if m else None, "compiler.py")


def _bundled(facts: Facts, name: str) -> str:
    t = facts.triton
    base = t.path if t is not None and t.path else ""
    if name == "ptxas" and t is not None and t.bundled_ptxas:
        return t.bundled_ptxas
    legacy = os.path.join(base, "third_party", "cuda", "bin", name)
    return legacy if os.path.isfile(legacy) else os.path.join(base, "backends", "nvidia", "bin", name)


def ptxas_for(facts: Facts, arch: Optional[int] = None) -> Ptxas:
    """The ptxas Triton runs for a GPU of architecture `arch` (e.g. 120); None: the default one."""
    t = facts.triton
    if t is None or not t.path:
        return Ptxas(None, None, "triton not installed")
    rule = scheme(facts)
    if rule is None:
        return Ptxas(None, None, f"cannot tell which ptxas Triton {t.version or '?'} runs (its "
                     "backends/nvidia/compiler.py is unreadable and the release is not in the snapshot)")
    gpu_name = rule.gpu_name(arch) if arch is not None else None
    if arch is not None and rule.blackwell_from is not None and arch >= rule.blackwell_from:
        ignored = None
        if facts.env.get(PLAIN_ENV) and rule.blackwell_env:
            ignored = (f"{PLAIN_ENV} is set but Triton {t.version or ''} does not read it for sm_"
                       f"{rule.blackwell_from} and newer; it reads {rule.blackwell_env}").replace("  ", " ")
        env = facts.env.get(rule.blackwell_env or "")
        if env and os.path.isfile(env):
            return Ptxas(env, release_of(facts, env), rule.blackwell_env or "", gpu_name, None, False, rule)
        if env:
            ignored = f"{rule.blackwell_env}={env} is not a file, so Triton uses its bundled one"
        path = _bundled(facts, "ptxas-blackwell")
        return Ptxas(path, release_of(facts, path) or _snapshot_release(rule, "ptxas_blackwell"),
                     "bundled ptxas-blackwell", gpu_name, ignored, True, rule)
    env = facts.env.get(PLAIN_ENV)
    if env and os.path.isfile(env):
        release = release_of(facts, env) or _known(facts, env)
        return Ptxas(env, release, PLAIN_ENV, gpu_name, None, False, rule)
    ignored = f"{PLAIN_ENV}={env} is not a file, so Triton uses its bundled one" if env else None
    path = _bundled(facts, "ptxas")
    release = _known(facts, path) or release_of(facts, path) or _snapshot_release(rule, "ptxas")
    return Ptxas(path, release, "bundled ptxas", gpu_name, ignored, True, rule)


def missing(ptxas: Ptxas) -> bool:
    """The ptxas Triton would run is not there: nothing the release snapshot says of that release
    can stand for it (a stale Triton on PYTHONPATH has none; a broken install lost it). A file that
    is there but cannot be run here (another architecture's build) is still judged by its release."""
    return ptxas.path is not None and not os.path.isfile(ptxas.path)


Snapshot = Dict[str, Any]


def planned_ptxas(versions: Iterable[str], arch: Optional[int],
                  unknown: List[str]) -> Iterator[Tuple[str, Snapshot, str, Optional[Snapshot]]]:
    """For `plan`, each planned Triton release in order: (the version, its snapshot entry, "ptxas" or
    "ptxas_blackwell": the bundled binary it runs for `arch`, what the release audit read of that
    binary or None). A release the snapshot does not hold goes to `unknown` instead."""
    from inductor_doctor.core.releases import ptxas_binary, triton_release

    for version in versions:
        found = triton_release(version)
        if found is None:
            unknown.append(version)
            continue
        entry = found[1]
        bw = entry.get("ptxas_blackwell")
        key = "ptxas_blackwell" if bw and arch is not None and arch >= bw["from_arch"] else "ptxas"
        yield version, entry, key, ptxas_binary(entry[key]["sha256"])


def _snapshot_release(rule: Scheme, key: str) -> Optional[str]:
    """The CUDA release of a bundled ptxas as the snapshot ran it (when the file is unreadable)."""
    from inductor_doctor.core.releases import ptxas_binary, triton_release

    found = triton_release(rule.release)
    binary = (found[1].get(key) or {}) if found else {}
    facts = ptxas_binary(binary.get("sha256"))
    return facts["release"] if facts else None


def _known(facts: Facts, path: str) -> Optional[str]:
    """The release the probe already read for this path, if it did."""
    if facts.cuda.ptxas_path == path and facts.cuda.ptxas_version:
        return facts.cuda.ptxas_version
    t = facts.triton
    if t is not None and t.bundled_ptxas == path and t.bundled_ptxas_version:
        return t.bundled_ptxas_version
    return None


def knows_arch(facts: Facts, ptxas: Ptxas, arch: int) -> Tuple[Optional[bool], str]:
    """(does it accept the GPU, how that was found): as the probe ran it here; else by the
    snapshot's run of the same bundled binary, or of bundled binaries of the same CUDA release;
    else (None, "")."""
    gpu_name = ptxas.gpu_name or f"sm_{arch}"
    asked = _asked(facts, ptxas.path)
    answer = asked.accepts.get(gpu_name) if asked is not None else None
    if answer is not None:
        return answer, f"`ptxas --gpu-name {gpu_name}` {'assembles' if answer else 'refuses it'}"
    from inductor_doctor.core.releases import ptxas_binary, ptxas_release_accepts, triton_release

    if ptxas.bundled and ptxas.scheme is not None and ptxas.scheme.release:
        found = triton_release(ptxas.scheme.release)
        key = "ptxas_blackwell" if ptxas.source.endswith("blackwell") else "ptxas"
        binary = ptxas_binary(((found[1].get(key) or {}) if found else {}).get("sha256"))
        if binary is not None and binary["release"] == ptxas.release and gpu_name in binary["archs"]:
            verdict = binary["archs"][gpu_name]
            return verdict, (f"the {ptxas.source} of Triton {ptxas.scheme.release}, run by the release "
                             f"audit, {'accepts' if verdict else 'refuses'} {gpu_name}")
    answer = ptxas_release_accepts(ptxas.release, gpu_name)
    if answer is not None:
        return answer, (f"the CUDA {ptxas.release} ptxas Triton bundles, run by the release audit, "
                        f"{'accepts' if answer else 'refuses'} {gpu_name}")
    return None, ""
