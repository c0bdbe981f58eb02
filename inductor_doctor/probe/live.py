"""What only a live torch knows, asked in one short subprocess of the target interpreter.

The script prints a first JSON line *before* `import torch` and a second one at the end. A torch
whose import raises is reported (`import_ok: false` and the error); one whose import kills the
process (a segfault in a CUDA library, an abort) is recognised by the missing second line and the
signal. Either way it is a finding about the environment, never a failure of the doctor.

The shared libraries are read from `/proc/self/maps` after cuDNN was asked for its version: that
is what the process loaded, which is not necessarily what `ldconfig` or `pip list` suggest
(pytorch/pytorch#78489).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import signal
import tempfile
import threading
from typing import Any, Dict, Mapping, Optional

from inductor_doctor.core.declare import volatile_names
from inductor_doctor.core.envvars import bypass_table
from inductor_doctor.core.facts import Facts, GPUInfo, TorchInfo, TritonInfo
from inductor_doctor.probe import cache_key as key_inputs
from inductor_doctor.probe import compile_settings, loader
from inductor_doctor.probe._elf import ELF_ERRORS
from inductor_doctor.probe._proc import run
from inductor_doctor.target import marker, script

#: Printed by `target/live.py` before each of its answers.
MARKER = marker("live.py")


def query(python: str, timeout_s: float = 60.0, cancel: Optional[threading.Event] = None,
          environ: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The live probe's answer; always a dict, with `probe_error` when it did not finish. It runs
    under `environ` (this process's environment by default)."""
    env = dict(os.environ if environ is None else environ)
    # Keep the probe cheap and quiet: no compile workers, no Triton autotuning, no CUDA warm-up.
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    env.setdefault("PYTHONWARNINGS", "ignore")
    env["INDUCTOR_DOCTOR_BYPASS"] = bypass_table()  # compile-bypassed: what to read back
    with tempfile.TemporaryDirectory(prefix="indoc-live-") as tmp:
        # Inductor's and Triton's caches in the throwaway directory too: on a GPU host the probe's
        # import of torch._inductor.utils made the user's /tmp/torchinductor_<user>, which changed
        # the cache facts every canary is keyed by, so the second check after a first re-ran them all.
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        res = run([python, str(script("live.py"))], timeout_s=timeout_s, env=env, cwd=tmp, cancel=cancel)
    records = []
    for line in res.stdout.splitlines():
        if line.startswith(MARKER):
            try:
                records.append(json.loads(line[len(MARKER) :]))
            except ValueError:
                continue
    last: Dict[str, Any] = records[-1] if records else {}
    if last.get("stage") == "done":
        return last
    stage = last.get("stage", "start")
    if res.error:
        last["probe_error"] = res.error
    elif res.timed_out:
        last["probe_error"] = f"live probe timed out after {timeout_s:g}s at `{stage}`"
    elif res.returncode is not None and res.returncode < 0:
        try:
            name = signal.Signals(-res.returncode).name
        except ValueError:
            name = f"signal {-res.returncode}"
        last["probe_error"] = f"the process died with {name} at `{stage}`"
    else:
        tail = (res.stderr.strip().splitlines() or [""])[-1][:300]
        last["probe_error"] = f"exited with code {res.returncode} at `{stage}`" + (
            f": {tail}" if tail else ""
        )
    if not records:
        last["probe_error"] += " (before it could start: is this a working Python?)"
    elif stage == "import torch":
        last["import_ok"] = False
        last["import_error"] = f"import torch: {last['probe_error']}"
    return last


def complete(answer: Dict[str, Any]) -> bool:
    """An answer worth keeping: the script ran to its end (a failed import is an answer too)."""
    return answer.get("stage") == "done" and "probe_error" not in answer


def cache_key(facts: Facts, python: str) -> Optional[list]:
    """What the live answer depends on: the interpreter, the script, and the static facts (torch,
    Triton, the driver and GPUs, the relevant environment, the CUDA libraries a load would map)."""
    from inductor_doctor.probe import _diskcache

    interpreter = _diskcache.file_key(python)
    here = _diskcache.file_key(str(script("live.py")))
    if interpreter is None or here is None:
        return None
    d = facts.to_dict()
    static = {k: d.get(k) for k in ("torch", "triton", "xla", "cuda", "packages", "env", "toolkit",
                                     "compile_settings")}
    blob = json.dumps(_without_volatile(static), sort_keys=True, default=str)
    return [interpreter, here, hashlib.sha256(blob.encode()).hexdigest()]


#: What the facts declare out of any key (notes, durations, free memory).
_VOLATILE = volatile_names(Facts)


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def merged(facts: Facts, live: Dict[str, Any]) -> Facts:
    """A new snapshot: `facts` with the live answer folded in (`merge`); `facts` is left as it was."""
    whole = copy.deepcopy(facts)
    merge(whole, live)
    return whole


def merge(facts: Facts, live: Dict[str, Any]) -> None:
    """Fold the live answer into `facts`: live values win, the raw answer stays in facts.live."""
    facts.live = live
    if facts.torch is None and "import_ok" in live:
        if not live.get("import_ok"):
            return  # no torch found statically and none importable: nothing to add
        facts.torch = TorchInfo(notes=["found only by the live probe"])
    torch = facts.torch
    if torch is not None:
        if "import_ok" in live:
            torch.import_ok = bool(live["import_ok"])
            torch.import_error = live.get("import_error")
        elif live.get("probe_error"):
            torch.notes.append(f"live probe: {live['probe_error']}")
        if live.get("import_ok"):
            torch.version = live.get("torch_version") or torch.version
            torch.path = live.get("torch_file") or torch.path
            if "cxx11_abi" in live:
                if torch.cxx11_abi is not None and torch.cxx11_abi != live["cxx11_abi"]:
                    torch.notes.append("the live C++11 ABI flag differs from the one read from libc10.so")
                torch.cxx11_abi = live["cxx11_abi"]
            if "cuda_version" in live:
                torch.cuda = live["cuda_version"]
            if isinstance(live.get("import_rss_mib"), int):
                torch.import_rss_mib = live["import_rss_mib"]
    for key, value in sorted((live.get("errors") or {}).items()):
        note = f"live probe, {key}: {value}"
        if key.startswith("cud") or key in ("devices", "big_gpu"):
            facts.cuda.notes.append(note)
        elif torch is not None:
            torch.notes.append(note)
    _merge_cuda(facts, live)
    _merge_triton(facts, live)
    _merge_loaded(facts, live)
    compile_settings.merge_live(facts, live)
    key_inputs.merge_live(facts, live)
    from inductor_doctor.probe import gpu_catalog  # GPU/CUDA catalog

    gpu_catalog.merge_live(facts, live)


def _merge_cuda(facts: Facts, live: Dict[str, Any]) -> None:
    cuda = facts.cuda
    if live.get("cudnn_version"):
        cuda.cudnn_version = _cudnn(live["cudnn_version"])
    if live.get("cudart_version"):
        cuda.runtime_version = live["cudart_version"]
    elif live.get("cuda_version") and not cuda.runtime_version:
        cuda.runtime_version = live["cuda_version"]
    by_index = {g.index: g for g in cuda.gpus}
    big = live.get("big_gpu") or []
    for i, d in enumerate(live.get("devices") or []):
        gpu = by_index.get(d["index"])
        if gpu is None:
            gpu = GPUInfo(index=d["index"], name=d["name"])
            cuda.gpus.append(gpu)
        gpu.name = d.get("name") or gpu.name
        gpu.sm = d.get("sm") or gpu.sm
        gpu.memory_mib = gpu.memory_mib or d.get("memory_mib")
        gpu.sm_count = d.get("sm_count")
        if i < len(big):
            gpu.big_gpu = big[i]
    cuda.gpus.sort(key=lambda g: g.index)


def _cudnn(value: Any) -> str:
    """cuDNN reports 90100 for 9.1.0 (and 8902 for 8.9.2)."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value)
    if v >= 10000:
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"


def _merge_triton(facts: Facts, live: Dict[str, Any]) -> None:
    t = live.get("triton")
    if not isinstance(t, dict):
        return
    if facts.triton is None:
        if not t.get("import_ok"):
            return
        facts.triton = TritonInfo(notes=["found only by the live probe"])
    facts.triton.import_ok = bool(t.get("import_ok"))
    facts.triton.import_error = t.get("import_error")
    if t.get("import_ok"):
        facts.triton.version = t.get("version") or facts.triton.version
        facts.triton.path = t.get("path") or facts.triton.path


def _merge_loaded(facts: Facts, live: Dict[str, Any]) -> None:
    static = facts.python.libstdcxx_path
    for path in live.get("loaded") or []:
        if not os.path.basename(path).startswith("libstdc++.so"):
            continue
        if static and os.path.realpath(static) == os.path.realpath(path):
            continue
        facts.python.notes.append(f"the live process loaded {path} (the static search guessed {static})")
        facts.python.libstdcxx_path = path
        try:
            glibcxx, cxxabi = loader.libstdcxx_versions(path)
        except ELF_ERRORS:
            continue
        facts.python.libstdcxx_glibcxx_max, facts.python.libstdcxx_cxxabi_max = glibcxx, cxxabi
