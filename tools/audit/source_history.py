"""What each torch and Triton release's own sources define, release by release: the history the triage
of removed or not-yet-added names needs.

* torch's config knobs: the names `torch/_inductor/config.py`, `torch/_dynamo/config.py` and
  `torch/_functorch/config.py` define (top level, and the attributes of their nested classes, which
  `torch.utils._config_module` turns into `config.<class>.<attr>`), their aliases (`Config(alias=...)`)
  and the `TORCH*` environment variables those files read; the file that raises `... does not exist`
  for a name a config lacks.
* torch's CompilerBisector: whether `torch/_inductor/compiler_bisector.py` exists, the directory under
  the Inductor cache it keeps its state in and the status file.
* torch's cudaMallocAsync allocator: whether libc10_cuda.so carries "cudaMallocAsync does not yet
  support checkPoolLiveAllocations" (the refusal CUDA graph trees meet).
* Triton's public names: what `triton`, `triton.language`, `triton.runtime`, `triton.compiler` and a
  few of their modules define, for "cannot import name 'X' from 'triton...'".

Each is read from one Linux x86_64 wheel per release (the one `refresh.pick_wheel` picks) with the
same range requests and cache as the rest of the audit, and written as runs of releases, oldest first:
`[[first, last], ...]` for each name. `python tools/release_audit.py sources` rewrites
`inductor_doctor/core/_data/source_history.json`.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Dict, List, Optional, Set

from packaging.version import Version

from audit import refresh, remote
from inductor_doctor.probe._pysource import config_names, module_names, ptx_maps

#: Bump when an extractor changes what it records.
VERSION = 8
CONFIG_FILES = {
    "torch._inductor.config": "torch/_inductor/config.py",
    "torch._dynamo.config": "torch/_dynamo/config.py",
    "torch._functorch.config": "torch/_functorch/config.py",
}
#: Where "<module>.<name> does not exist" is raised (torch.utils._config_module from 2.1; before, Dynamo's).
MESSAGE_FILES = ("torch/utils/_config_module.py", "torch/_dynamo/config_utils.py")
BISECTOR = "torch/_inductor/compiler_bisector.py"
C10_CUDA = "torch/lib/libc10_cuda.so"
C10 = "torch/lib/libc10.so"
#: The refusal, as c10/cuda/CUDAMallocAsyncAllocator.cpp builds it: the allocator's name, then this.
POOL_CHECK = b" does not yet support checkPoolLiveAllocations"
ALLOC_CONF = (b"PYTORCH_CUDA_ALLOC_CONF", b"PYTORCH_ALLOC_CONF")
CUDAGRAPH_TREES = "torch/_inductor/cudagraph_trees.py"
#: The CUDA releases whose ptxas each Triton release is asked about (ptx_get_version).
CUDA_RELEASES = ("11.8", "12.0", "12.4", "12.6", "12.8", "12.9", "13.0", "13.1", "13.2")
#: Knobs whose default some rule needs, read as literals from the config file.
DEFAULTS = {"torch._inductor.config": ("triton.slow_path_cudagraph_asserts", "triton.cudagraph_trees")}
#: Triton modules whose names third-party code imports, and the files that define them (a package's
#: names are its __init__'s; a module that is not there is a fact too).
TRITON_MODULES = {
    "triton": "triton/__init__.py",
    "triton.language": "triton/language/__init__.py",
    "triton.language.core": "triton/language/core.py",
    "triton.language.math": "triton/language/math.py",
    "triton.language.extra.cuda": "triton/language/extra/cuda/__init__.py",
    "triton.runtime": "triton/runtime/__init__.py",
    "triton.runtime.jit": "triton/runtime/jit.py",
    "triton.runtime.autotuner": "triton/runtime/autotuner.py",
    "triton.runtime.driver": "triton/runtime/driver.py",
    "triton.compiler": "triton/compiler/__init__.py",
    "triton.compiler.compiler": "triton/compiler/compiler.py",
    "triton.backends.compiler": "triton/backends/compiler.py",
    "triton.testing": "triton/testing.py",
    "triton.ops": "triton/ops/__init__.py",
    "triton.tools.tensor_descriptor": "triton/tools/tensor_descriptor.py",
}

Read = Callable[[str], Optional[str]]
_ENV = re.compile(r"[\"'](TORCH[A-Z0-9_]*)[\"']")
_STATUS = re.compile(r"[\"'](\w+_status\.txt)[\"']")
_SUBDIR = re.compile(r"^SUBDIR_NAME\s*=\s*[\"'](\w+)[\"']", re.M)


class Unreadable(Exception):
    """A source the audit reads has a shape the extractor does not know."""


def log(msg: str) -> None:
    refresh.log(msg)


# --- per release --------------------------------------------------------------------------------------

def torch_release(read: Read, names: List[str], member: Callable[[str], Optional[bytes]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"config": {}, "aliases": {}, "env": [], "message_file": None, "defaults": {}}
    env: Set[str] = set()
    for module, path in CONFIG_FILES.items():
        text = read(path)
        if text is None:
            continue
        wanted: Dict[str, Any] = {k: None for k in DEFAULTS.get(module, ())}
        try:
            knobs, aliases = config_names(text, wanted)
        except ValueError as exc:
            raise Unreadable(f"{path}: {exc}") from None
        out["defaults"].update({f"{module}.{k}": v for k, v in wanted.items() if k in knobs})
        out["config"][module] = sorted(knobs)
        out["aliases"].update({f"{module}.{k}": v for k, v in aliases.items()})
        env.update(_ENV.findall(text))
    out["env"] = sorted(env)
    for path in MESSAGE_FILES:
        text = read(path) or ""
        if re.search(r"does not exist", text):
            out["message_file"] = path
            break
    bisector = read(BISECTOR)
    if bisector is not None:
        sub = _SUBDIR.search(bisector)
        status = _STATUS.search(bisector)
        if not status:
            raise Unreadable(f"{BISECTOR} names no *_status.txt file")
        out["bisector"] = {"subdir": sub.group(1) if sub else None, "status_file": status.group(1),
                           "delete": "delete_bisect_status" in bisector,
                           # torch.compile itself takes its backend from the bisector's state
                           "compile_reads": "CompilerBisector.get_backend()" in (
                               read("torch/__init__.py") or "")}
    libs = b""
    if C10_CUDA in names:
        data = member(C10_CUDA) or b""
        out["malloc_async_pool_check"] = b"cudaMallocAsync" in data and POOL_CHECK in data
        libs += data
    if C10 in names:
        libs += member(C10) or b""
    out["alloc_conf_env"] = [v.decode() for v in ALLOC_CONF if v + b"\0" in libs]
    meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
    out["cuda_pins"] = sorted(
        line.split(":", 1)[1].split(";")[0].strip().replace(" ", "")
        for line in (read(meta) or "").splitlines() if meta
        if line.startswith("Requires-Dist:") and "nvidia-cublas" in line)
    trees = read(CUDAGRAPH_TREES) or ""
    out["cudagraph_trees_check_pool"] = "_cuda_checkPoolLiveAllocations" in trees
    return out


def triton_release(read: Read, names: List[str]) -> Dict[str, Any]:
    """The names each followed module defines, and (under "") every module the wheel has."""
    out: Dict[str, Any] = {"": sorted(python_modules(names, "triton"))}
    compiler = read("triton/backends/nvidia/compiler.py") or read("triton/compiler/compiler.py") or ""
    maps = {c: ptx_maps(compiler, c) for c in CUDA_RELEASES}
    out["ptx_cuda"] = None if None in maps.values() else [c for c, ok in maps.items() if ok]
    for module, path in TRITON_MODULES.items():
        text = read(path)
        if text is not None:
            try:
                out[module] = sorted(module_names(text))
            except ValueError as exc:
                raise Unreadable(f"{path}: {exc}") from None
    return out


def python_modules(names: List[str], root: str) -> Set[str]:
    """`triton.language.extra.cuda` for `triton/language/extra/cuda/__init__.py`, and so on."""
    out = set()
    for name in names:
        if name.startswith(root + "/") and name.endswith(".py"):
            dotted = name[:-3].replace("/", ".")
            out.add(dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted)
    return out


# --- runs of releases ---------------------------------------------------------------------------------

def runs(present: List[bool], versions: List[str]) -> List[List[str]]:
    """[[first, last], ...] of the consecutive releases where `present` holds."""
    out: List[List[str]] = []
    for flag, version in zip(present, versions):
        if flag and out and out[-1][1] == _previous(versions, version):
            out[-1][1] = version
        elif flag:
            out.append([version, version])
    return out


def _previous(versions: List[str], version: str) -> Optional[str]:
    i = versions.index(version)
    return versions[i - 1] if i else None


def history(per_release: Dict[str, Set[str]], versions: List[str]) -> Dict[str, List[List[str]]]:
    every: Set[str] = set().union(*per_release.values()) if per_release else set()
    return {name: runs([name in per_release.get(v, set()) for v in versions], versions)
            for name in sorted(every)}


def _cached_member(wheel: remote.Wheel) -> Callable[[str], Optional[bytes]]:
    def member(name: str) -> Optional[bytes]:
        path = wheel.member(name)
        return path.read_bytes() if path else None
    return member


def build(offline: bool = False) -> Dict[str, Any]:
    torch_index = remote.index("torch", refresh=not offline)
    triton_index = remote.index("triton", refresh=not offline)
    torch_versions = [v for v in refresh.final_versions(torch_index)
                      if Version(v) >= refresh.FIRST["torch"]]
    triton_versions = [v for v in refresh.final_versions(triton_index)
                       if Version(v) >= refresh.FIRST["triton"]]
    torch_facts: Dict[str, Dict[str, Any]] = {}
    for v in torch_versions:
        wheel = remote.Wheel(refresh.pick_wheel(torch_index, v))
        log(f"torch {v}: sources")
        try:
            torch_facts[v] = refresh._cached(
                f"sources-s{VERSION}", wheel.sha256,
                lambda w=wheel: torch_release(w.text, w.names(), _cached_member(w)))
        except Unreadable as exc:
            raise refresh.RefreshError(f"torch {v}: {exc}; update tools/audit/source_history.py") from None
    triton_facts: Dict[str, Dict[str, Any]] = {}
    for v in triton_versions:
        wheel = remote.Wheel(refresh.pick_wheel(triton_index, v))
        log(f"triton {v}: sources")
        try:
            triton_facts[v] = refresh._cached(f"triton-names-s{VERSION}", wheel.sha256,
                                              lambda w=wheel: triton_release(w.text, w.names()))
        except Unreadable as exc:
            raise refresh.RefreshError(f"triton {v}: {exc}; update tools/audit/source_history.py") from None
    return assemble(torch_versions, torch_facts, triton_versions, triton_facts)


def assemble(torch_versions: List[str], torch_facts: Dict[str, Dict[str, Any]], triton_versions: List[str],
             triton_facts: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    config: Dict[str, Any] = {}
    for module in CONFIG_FILES:
        per = {v: set(torch_facts[v]["config"].get(module, [])) for v in torch_versions}
        config[module] = history(per, torch_versions)
    aliases: Dict[str, Dict[str, Any]] = {}
    for v in torch_versions:
        for name, target in torch_facts[v]["aliases"].items():
            entry = aliases.setdefault(name, {"of": target, "releases": []})
            entry["releases"].append(v)
    alias_runs = {name: {"of": e["of"], "releases": runs([v in e["releases"] for v in torch_versions],
                                                         torch_versions)}
                  for name, e in sorted(aliases.items())}
    env = history({v: set(torch_facts[v]["env"]) for v in torch_versions}, torch_versions)
    bisector = {v: torch_facts[v]["bisector"] for v in torch_versions if "bisector" in torch_facts[v]}
    pool = {v: {"refuses": torch_facts[v].get("malloc_async_pool_check"),
                "cudagraph_trees_check": torch_facts[v].get("cudagraph_trees_check_pool"),
                "alloc_conf_env": torch_facts[v].get("alloc_conf_env"),
                "slow_path_cudagraph_asserts": torch_facts[v]["defaults"].get(
                    "torch._inductor.config.triton.slow_path_cudagraph_asserts")} for v in torch_versions}
    message = {v: torch_facts[v]["message_file"] for v in torch_versions}
    triton: Dict[str, Any] = {}
    modules = {m for f in triton_facts.values() for m in f if m and m != "ptx_cuda"}
    every = history({v: set(triton_facts[v][""]) for v in triton_versions}, triton_versions)
    for module in sorted(modules):
        per = {v: set(triton_facts[v].get(module, [])) for v in triton_versions}
        present = runs([module in triton_facts[v] for v in triton_versions], triton_versions)
        triton[module] = {"module": present, "names": history(per, triton_versions)}
    return {
        "schema": 1,
        "as_of": time.strftime("%Y-%m-%d", time.gmtime()),
        "source": "https://pypi.org/simple/ (PEP 691 JSON); one Linux x86_64 wheel per release "
                  "(tools/audit/source_history.py)",
        "torch_releases": torch_versions,
        "triton_releases": triton_versions,
        "torch_config": config,
        "torch_config_aliases": alias_runs,
        "torch_config_env": env,
        "torch_config_message_file": message,
        "torch_bisector": bisector,
        "torch_malloc_async_pool_check": pool,
        "torch_cublas_pins": {v: torch_facts[v].get("cuda_pins") for v in torch_versions},
        "triton_names": triton,
        "triton_modules": every,
        "triton_ptx_cuda": {v: triton_facts[v].get("ptx_cuda") for v in triton_versions},
    }
