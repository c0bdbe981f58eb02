"""What enters this host's compile-cache keys besides the program, read from the installed releases.

Inductor's FX-graph key (`FxGraphHashDetails`, `torch/_inductor/codecache.py`) holds, beside the
graph: `torch_key()` (the torch version and every module file of the torch package), the system
(`CacheBase.get_system()`: `triton_key()`, the current GPU's name, `torch.version.cuda` or `.hip`),
the Inductor config (`config.save_config_portable()`, less the release's ignore lists), the
`torch.compiler.config.cache_key_tag`, and, from 2.12, the CPU thread count C++ kernels specialise
on. AOTAutograd's key (`autograd_cache.py`) adds the functorch config; the autotune cache's adds
Triton's backend hash; Triton's own key (`triton/compiler/compiler.py:get_cache_key`) is
`triton_key()`, the backend's hash (the ptxas version and the GPU architecture on NVIDIA) and the
cache-invalidating variables set (the C++ list behind `get_cache_invalidating_env_vars()`). C++
kernels are keyed by their compile command line: the compiler and its flags.

Each input is recorded with the file and line of the installed release that reads it (an input the
release does not read is not recorded). The expensive parts are not computed as torch does:
`torch_key()` reads ~2,000 files and `triton_key()` hashes a 400 MB library, so the doctor hashes
what the wheels' RECORD files say those files are (the sha256 pip checked at install); a file
changed after install is not seen. Everything read is kept on disk under the files' (path, size,
mtime), so a repeated check parses nothing. The live probe adds what only a live process knows
(`merge_live`): the variables Triton's own function puts in its key, the thread count, and config
entries a start-up file changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from inductor_doctor.core.facts import (
    CACHE_NAMES,
    CacheKeyInfo,
    CompilerInfo,
    CudaInfo,
    Facts,
    KeyInput,
    PythonInfo,
    TorchInfo,
    TritonInfo,
)
from inductor_doctor.probe import _config_reads, _diskcache
from inductor_doctor.probe.step import Step

FX, AOT, AUTOTUNE, TRITON, CPP, ARTIFACT = "fx-graph", "aot-autograd", "autotune", "triton", "cpp", "artifact"
THREADS_LABEL = "CPU threads C++ kernels specialise on (torch.get_num_threads())"

#: Where each input is read, as (file in the torch package, pattern): the first that matches is the
#: source; an input none matches is not in this release's keys.
TORCH_ANCHORS: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "torch": (("_inductor/codecache.py", r"self\.torch_version = torch_key\(\)"),),
    "triton": (("_inductor/codecache.py", r"triton_version\s*=\s*triton_key\(\)"),),
    "gpu": (("_inductor/codecache.py", r"\[\"name\"\] = device_properties\.name"),),
    "cuda": (("_inductor/codecache.py", r"\[\"cuda\"\] = torch\.version\.cuda"),),
    "hip": (("_inductor/codecache.py", r"\[\"hip\"\] = torch\.version\.hip"),),
    "threads": (("_inductor/codecache.py", r"self\.cpp_runtime_thread_count = "),),
    "inductor-config": (("_inductor/codecache.py",
                         r"self\.inductor_config = config\.save_config_portable\("),),
    "privates": (("_inductor/codecache.py", r"save_config_portable\(\s*ignore_private_configs=False"),),
    "comms-config": (("_inductor/codecache.py", r"config_comms\.save_config_portable\("),),
    "functorch-config": (("_functorch/_aot_autograd/autograd_cache.py",
                          r"autograd_config = config\.save_config\("),),
    "cache-key-tag": (("_inductor/codecache.py", r"cconfig\.cache_key_tag"),),
    "cxx": (("_inductor/codecache.py", r"def get_hashable_command_line"),),
    "backend-hash": (("_inductor/runtime/autotune_cache.py", r"\"backend_hash\""),),
}
#: The same for the installed Triton (paths in the triton package).
TRITON_ANCHORS: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "triton-key": (("runtime/cache.py", r"def triton_key\("), ("compiler/compiler.py", r"def triton_key\(")),
    "ptxas": (("backends/nvidia/compiler.py", r"version = get_ptxas_version\("),),
    "gpu-arch": (("backends/nvidia/compiler.py", r"return f'\{version\}-\{self\.target\.arch\}'"),
                 ("backends/nvidia/compiler.py", r"self\.target\.arch")),
    "triton-env": (("compiler/compiler.py", r"env_vars = get_cache_invalidating_env_vars\(\)"),),
}
#: The config modules whose entries a key holds: (file, short name, the caches, only these entries).
CONFIG_MODULES: Tuple[Tuple[str, str, str, Tuple[str, ...], Tuple[str, ...]], ...] = (
    ("_inductor/config.py", "inductor", "inductor-config", (FX, AOT), ()),
    ("_inductor/config_comms.py", "inductor comms", "comms-config", (FX, AOT), ()),
    ("_functorch/config.py", "functorch", "functorch-config", (AOT,), ()),
    ("compiler/config.py", "compiler", "cache-key-tag", (FX, AOT, AUTOTUNE), ("cache_key_tag",)),
)
#: Config entries that switch a cache off, and the value that does: no key, no hit.
CACHES_OFF = {"force_disable_caches": (True, "every compile cache is off"),
              "fx_graph_cache": (False, "the local FX graph cache is off"),
              "fx_graph_remote_cache": (False, "the remote FX graph cache is off"),
              "enable_autograd_cache": (False, "the AOTAutograd cache is off"),
              "autotune_local_cache": (False, "the local autotune cache is off")}


def anchors(root: str, table: Mapping[str, Tuple[Tuple[str, str], ...]]) -> Dict[str, str]:
    """id -> "file:line" of each anchor found under `root` (a package directory)."""
    out: Dict[str, str] = {}
    files = sorted({rel for pairs in table.values() for rel, _ in pairs})
    lines = {rel: _lines_of(os.path.join(root, rel), table) for rel in files}
    package = os.path.basename(root.rstrip(os.sep))
    for key, pairs in table.items():
        for rel, _ in pairs:
            line = (lines.get(rel) or {}).get(key)
            if line:
                out[key] = f"{package}/{rel}:{line}"
                break
    return out


def _lines_of(path: str, table: Mapping[str, Tuple[Tuple[str, str], ...]]) -> Optional[Dict[str, int]]:
    """Each anchor's first line in one file, kept on disk under the file's (path, size, mtime)."""
    rel_tail = path.replace(os.sep, "/")
    wanted = {k: pat for k, pairs in table.items() for rel, pat in pairs if rel_tail.endswith("/" + rel)}

    def compute(p: str) -> Optional[Dict[str, int]]:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        found: Dict[str, int] = {}
        for key, pattern in wanted.items():
            m = re.search(pattern, text)
            if m:
                found[key] = text.count("\n", 0, m.start()) + 1
        return found

    kind = "key-anchors-" + hashlib.sha256(repr(sorted(wanted.items())).encode()).hexdigest()[:12]
    return _diskcache.of_file(kind, path, compute)


# --- what torch_key() and triton_key() read, from the wheels' RECORD -------------------------------


def dist_info(package_dir: str, names: Sequence[str]) -> Optional[str]:
    """The RECORD of the distribution (one of `names`, normalised) that installed `package_dir`."""
    site = os.path.dirname(package_dir.rstrip(os.sep))
    wanted = {re.sub(r"[-_.]+", "_", n).lower() for n in names}
    try:
        entries = os.listdir(site)
    except OSError:
        return None
    for entry in sorted(entries):
        if not entry.endswith(".dist-info"):
            continue
        name = re.sub(r"[-_.]+", "_", entry[: -len(".dist-info")].rsplit("-", 1)[0]).lower()
        record = os.path.join(site, entry, "RECORD")
        if name in wanted and os.path.isfile(record):
            return record
    return None


def _record_rows(record: str) -> List[Tuple[str, str]]:
    rows: List[Tuple[str, str]] = []
    with open(record, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").rsplit(",", 2)
            if len(parts) == 3 and parts[1]:
                rows.append((parts[0], parts[1]))
    return rows


_EXT = re.compile(r"\.(py|so|pyd)$")


def _modules(rows: Sequence[Tuple[str, str]], roots: Sequence[str]) -> List[Tuple[str, str]]:
    """The rows `pkgutil` walks from `roots`: module files (.py, extension modules) of packages
    reached through packages (directories with an `__init__.py`)."""
    packages = {os.path.dirname(p) for p, _ in rows if p.endswith("/__init__.py")}
    out = []
    for path, digest in rows:
        if not _EXT.search(path):
            continue
        folder = os.path.dirname(path)
        root = next((r for r in roots if folder == r or folder.startswith(r + "/")), None)
        if root is None:
            continue
        # every folder from the root down to the file's must be a package (the root is walked as a path)
        chain, here = [], folder
        while here != root:
            chain.append(here)
            here = os.path.dirname(here)
        if all(c in packages for c in chain):
            out.append((path, digest))
    return sorted(out)


def files_digest(record: str, roots: Sequence[str], extra: Sequence[str] = ()) -> Optional[Dict[str, Any]]:
    """{"digest", "files"}: the sha256 of the RECORD lines of the files a key function reads (the
    module files under `roots`, and `extra`), kept on disk under the RECORD's (path, size, mtime)."""

    def compute(path: str) -> Optional[Dict[str, Any]]:
        try:
            rows = _record_rows(path)
        except OSError:
            return None
        chosen = _modules(rows, roots) + sorted(r for r in rows if r[0] in extra)
        if not chosen:
            return None
        h = hashlib.sha256("\n".join(f"{p},{d}" for p, d in chosen).encode())
        return {"digest": h.hexdigest()[:16], "files": len(chosen)}

    kind = "key-files-" + hashlib.sha256(repr((list(roots), list(extra))).encode()).hexdigest()[:12]
    return _diskcache.of_file(kind, record, compute)


TORCH_EXTRA = ("torch/_inductor/codegen/aoti_runtime/interface.cpp", "torch/_inductor/script.ld")
TRITON_ROOTS = ("triton/compiler", "triton/backends", "triton/language")


# --- the inputs ------------------------------------------------------------------------------------


def gather(python: PythonInfo, torch: Optional[TorchInfo], triton: Optional[TritonInfo], cuda: CudaInfo,
           cxx: CompilerInfo, env: Mapping[str, str]) -> Optional[CacheKeyInfo]:
    """This host's key inputs; None without torch (there is no Inductor cache to key)."""
    if torch is None or not torch.path or not os.path.isdir(torch.path):
        return None
    start = time.monotonic()
    info = CacheKeyInfo()
    where = anchors(torch.path, TORCH_ANCHORS)
    tri_where = anchors(triton.path, TRITON_ANCHORS) if triton and triton.path else {}
    _torch_inputs(info, torch, where)
    # CacheBase.get_system() puts triton_key() in the FX graph and AOTAutograd keys only where torch
    # reaches a GPU (a CUDA or HIP build, a GPU it sees); elsewhere its hash is of nothing.
    gpu_keyed = bool((torch.cuda or torch.hip) and cuda.gpus)
    _triton_inputs(info, triton, where, tri_where, gpu_keyed)
    _device_inputs(info, torch, triton, cuda, env, where, tri_where)
    _config_inputs(info, torch.path, env, where, python.platform or sys.platform)
    if "threads" in where:  # the live probe knows the count: torch.get_num_threads()
        info.inputs.append(KeyInput("threads", THREADS_LABEL, env.get("OMP_NUM_THREADS"), [FX], "cpu",
                                    where["threads"], known=False))
    if cxx.path and "cxx" in where:
        info.inputs.append(KeyInput("cxx", "C++ compiler", f"{cxx.path} {cxx.version or ''}".strip(), [CPP],
                                    "compiler", where["cxx"]))
    info.duration_s = time.monotonic() - start
    return info


def _torch_inputs(info: CacheKeyInfo, torch: TorchInfo, where: Dict[str, str]) -> None:
    if "torch" not in where:
        info.notes.append("this torch's codecache.py has no torch_key() in its key: the inputs are unknown")
        return
    record = dist_info(torch.path or "", ("torch",))
    files = files_digest(record, ("torch",), TORCH_EXTRA) if record else None
    value = torch.version or "unknown"
    if files:
        value += f", files {files['digest']}"
    else:
        info.notes.append("torch's files are not listed with their digests (no RECORD): torch_key() "
                          "is compared by the version alone")
    detail = f"git {torch.git_version[:12]}" if torch.git_version else None
    info.inputs.append(KeyInput("torch", "torch (torch_key(): its version and module files)", value,
                                [FX, AOT, AUTOTUNE, ARTIFACT], "torch", where["torch"], detail=detail))


def _triton_inputs(info: CacheKeyInfo, triton: Optional[TritonInfo], where: Dict[str, str],
                   tri_where: Dict[str, str], gpu_keyed: bool) -> None:
    if not gpu_keyed:  # no GPU kernel is compiled, and no graph key holds triton_key(): nothing to miss
        info.notes.append("Triton is in no key here: torch reaches no GPU, so its graph keys hold no "
                          "triton_key() and no Triton kernel is compiled")
        return
    caches = [TRITON] + ([FX, AOT] if "triton" in where else [])
    caches += [AUTOTUNE] if "backend-hash" in where else []
    if triton is None or not triton.path:
        info.inputs.append(KeyInput("triton", "Triton (triton_key())", "none", caches, "triton",
                                    where.get("triton", "")))
        return
    record = dist_info(triton.path, [triton.distribution or "triton"])
    frontend = tri_where.get("triton-key", "").split(":")[0]
    extra = (frontend,) + tuple(f"triton/_C/{n}" for n in _libtriton(triton.path))
    files = files_digest(record, TRITON_ROOTS, extra) if record else None
    value = f"{triton.distribution or 'triton'} {triton.version or 'unknown'}"
    if files:
        value += f", files {files['digest']}"
    info.inputs.append(KeyInput("triton", "Triton (triton_key(): its version, compiler and libtriton)", value,
                                caches, "triton", tri_where.get("triton-key") or where.get("triton", "")))


def _libtriton(path: str) -> List[str]:
    try:
        return sorted(n for n in os.listdir(os.path.join(path, "_C")) if n.startswith("libtriton."))
    except OSError:
        return []


def _device_inputs(info: CacheKeyInfo, torch: TorchInfo, triton: Optional[TritonInfo], cuda: CudaInfo,
                   env: Mapping[str, str], where: Dict[str, str], tri_where: Dict[str, str]) -> None:
    names = sorted({g.name for g in cuda.gpus if g.name})
    if "gpu" in where:
        info.inputs.append(KeyInput("gpu", "GPU (its name, in CacheBase.get_system())",
                                    ", ".join(names) or "none", [FX, AOT], "gpu", where["gpu"]))
    archs = sorted({"sm_" + g.sm.replace(".", "") for g in cuda.gpus if g.sm})
    if archs and "gpu-arch" in tri_where:
        info.inputs.append(KeyInput("gpu-arch", "GPU architecture (Triton's backend hash)", ", ".join(archs),
                                    [TRITON, AUTOTUNE], "gpu", tri_where["gpu-arch"]))
    if "cuda" in where and (torch.cuda or not torch.hip):
        info.inputs.append(KeyInput("cuda", "torch's CUDA (torch.version.cuda)", torch.cuda or "none",
                                    [FX, AOT], "cuda", where["cuda"]))
    if "hip" in where and torch.hip:
        info.inputs.append(KeyInput("hip", "torch's HIP (torch.version.hip)", torch.hip, [FX, AOT], "cuda",
                                    where["hip"]))
    if "ptxas" in tri_where and (cuda.gpus or any(k.startswith("TRITON_PTXAS") for k in env)):
        chosen = _ptxas(cuda)
        if chosen is not None:
            info.inputs.append(KeyInput("ptxas", "the ptxas Triton runs (its version, Triton's backend hash)",
                                        chosen, [TRITON, AUTOTUNE], "cuda", tri_where["ptxas"]))


def _ptxas(cuda: CudaInfo) -> Optional[str]:
    """The release of the ptxas Triton runs: TRITON_PTXAS_PATH's, else its bundled one."""
    binaries = sorted(cuda.ptxas_binaries, key=lambda p: (not p.source.startswith("TRITON_PTXAS_PATH"),
                                                          p.source != "bundled ptxas"))
    for p in binaries:
        if p.source.startswith(("TRITON_PTXAS_PATH", "bundled ptxas")) and not p.source.endswith("blackwell"):
            return f"{p.release or 'unknown'} ({p.source})"
    return None


class KeyRead(NamedTuple):
    """One variable a config module reads into an entry: the module, the caches its config keys, the read,
    and whether the key holds that entry (the release's ignore lists)."""

    rel: str
    short: str
    caches: Tuple[str, ...]
    read: _config_reads.EnvRead
    in_key: bool


def key_reads(torch_dir: str, where: Dict[str, str]) -> Dict[str, List[KeyRead]]:
    """Variable name -> what each config module of the key does with it (the best-followed read per entry)."""
    privates = "privates" in where
    out: Dict[str, List[KeyRead]] = {}
    for rel, short, anchor, caches, only in CONFIG_MODULES:
        if anchor not in where:
            continue
        path = os.path.join(torch_dir, rel)
        save_ignore, prefixes = _config_reads.ignore_lists(path)
        best: Dict[Tuple[str, str], _config_reads.EnvRead] = {}
        for read in _config_reads.reads(path):
            if only and read.entry not in only:
                continue
            held = best.get((read.name, read.entry))
            if held is None or (held.ops is None and read.ops is not None):
                best[(read.name, read.entry)] = read
        for (name, entry), read in best.items():
            ignored = entry in save_ignore or any(entry.startswith(p) for p in prefixes)
            private = entry.split(".")[-1].startswith("_")
            in_key = not (ignored or (private and not privates and short != "compiler"))
            out.setdefault(name, []).append(KeyRead(rel, short, caches, read, in_key))
    return out


def key_effect(reads: List[KeyRead], value: Optional[str], platform: str) -> Optional[str]:
    """What a value of one variable gives the key (`inductor config max_autotune = True`), the variable
    as set where the release's code is not followed, None where it keys nothing."""
    parts = []
    for kr in reads:
        if not kr.in_key:
            continue
        understood, now = _config_reads.effect(kr.read, value, platform)
        name = f"{kr.short} config {kr.read.entry}"
        parts.append(f"{name} = {_config_reads.shown(now)}" if understood else f"{name} (set to {value!r})")
    return "; ".join(parts) or None


def _config_inputs(info: CacheKeyInfo, torch_dir: str, env: Mapping[str, str], where: Dict[str, str],
                   platform: str) -> None:
    """Each variable set here that a config module reads into an entry the key holds."""
    for name, reads in key_reads(torch_dir, where).items():
        if name not in env:
            continue
        value = env[name]
        for kr in reads:
            off = CACHES_OFF.get(kr.read.entry)
            understood, now = _config_reads.effect(kr.read, value, platform)
            if off is not None and understood and now == off[0]:
                info.caches_off.append(f"{name}={value}: {off[1]} (torch/{kr.rel}:{kr.read.line})")
        keyed = [kr for kr in reads if kr.in_key]
        if not keyed:
            continue
        caches = sorted({c for kr in keyed for c in kr.caches}, key=list(CACHE_NAMES).index)
        effect = key_effect(keyed, value, platform)
        default = key_effect(keyed, None, platform)
        all_known = all(_config_reads.effect(kr.read, None, platform)[0] for kr in keyed)
        info.inputs.append(KeyInput(f"env:{name}", name, value, caches, "settings",
                                    f"torch/{keyed[0].rel}:{keyed[0].read.line}", effect=effect,
                                    default=default if all_known else None))


def effect_here(facts: Facts, name: str, value: Optional[str]) -> Optional[str]:
    """For `check --artifact`: what NAME=value (None: unset) gives this host's keys, None where this
    torch keys nothing by that variable (or torch is not here)."""
    torch = facts.torch
    if torch is None or not torch.path or not os.path.isdir(torch.path):
        return None
    reads = key_reads(torch.path, anchors(torch.path, TORCH_ANCHORS)).get(name)
    return key_effect(reads, value, facts.python.platform or sys.platform) if reads else None


# --- the live part ---------------------------------------------------------------------------------


def merge_live(facts: Facts, live: Mapping[str, Any]) -> None:
    """What only a live process knows (target/live.py `cache_key`): the variables the installed
    Triton's own `get_cache_invalidating_env_vars()` puts in its key, torch's CPU thread count, and
    config entries changed at start-up (a sitecustomize) that no variable explains."""
    answer = live.get("cache_key")
    info = facts.cache_key
    if not isinstance(answer, dict) or info is None:
        return
    info.live_read = True
    triton = next((i for i in info.inputs if i.id == "triton"), None)
    tri_env = answer.get("triton_env")
    if isinstance(tri_env, dict):
        for name, value in sorted(tri_env.items()):
            info.inputs.append(KeyInput(f"triton-env:{name}", name, str(value), [TRITON], "settings",
                                        "triton/_C/libtriton get_cache_invalidating_env_vars()"))
    elif answer.get("triton_env_error") and triton is not None and triton.value != "none":
        info.notes.append("Triton's cache-invalidating variables could not be read: "
                          + str(answer["triton_env_error"]))
    threads = answer.get("threads")
    for item in info.inputs:
        if item.id == "threads" and isinstance(threads, int):
            item.value, item.known = str(threads), True
    explained = {i.effect.split(" = ")[0] for i in info.inputs if i.effect}
    for module, entries in sorted((answer.get("config") or {}).items()):
        caches = [FX, AOT] if module.startswith("inductor") else [AOT]
        for entry, value in sorted(entries.items()):
            name = f"{module} config {entry}"
            if name in explained:
                continue
            info.inputs.append(KeyInput(f"config:{module}.{entry}", name, str(value), caches, "settings",
                                        "set at start-up (read in a fresh interpreter)"))


STEP = Step("cache_key", ("python", "torch", "triton", "cuda", "cxx", "environ"), gather, what="cache key")
