"""The environment variables that change what the compile stack does: one list, for every part.

The probe records them in `Facts.env` (so reports show them), the canary cache keys its verdicts by
them, and the probe's compiler answers are keyed by the subset a compiler reads. Nothing else is
ever collected, so no report can leak a token: a name that looks like a secret is dropped even
when a prefix would admit it.
"""

from __future__ import annotations

import re
from typing import Dict, Mapping, NamedTuple, Optional, Tuple

#: Compilers, their search paths and flags; loaders; Python and its environment managers; caches.
NAMES = (
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CPATH", "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH", "LD_LIBRARY_PATH",
    "LD_PRELOAD", "PATH", "TMPDIR", "PYTHONPATH", "CONDA_PREFIX", "VIRTUAL_ENV", "OMP_NUM_THREADS",
    "KMP_AFFINITY", "MAX_JOBS", "ATEN_CPU_CAPABILITY", "LOCAL_RANK", "PJRT_DEVICE", "TPU_NUM_DEVICES",
    "GPU_NUM_DEVICES", "FLASHINFER_CUDA_ARCH_LIST",
)  # fmt: skip
#: Families read by torch, Inductor, Triton, XLA, CUDA, ROCm and their libraries.
PREFIXES = ("TORCH", "TRITON_", "XLA_", "PJRT_", "CUDA_", "NVIDIA_", "NCCL_", "CUDNN_", "PYTORCH_",
            "LIBTPU", "TPU_", "HIP_", "ROCM_", "HSA_")
#: Set by the launcher for every run (a new id each job): never a property of the environment.
VOLATILE_PREFIXES = ("TORCHELASTIC_",)
#: The subset that changes what a compiler finds (its include and library search paths).
COMPILER = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX",
            "COMPILER_PATH")
#: The doctor's own INDUCTOR_DOCTOR_<NAME> variables besides its options' (the command line derives
#: those from the options themselves): every name the doctor, its tests and tools read or set. A name
#: in neither list draws one warning line, so that a misspelt gate (`..._FAIL_ONN`) is not silently
#: ignored; tests/house/test_envvars.py fails on a name used anywhere in the tree and missing here.
DOCTOR_PREFIX = "INDUCTOR_DOCTOR_"
DOCTOR_OWN = {
    "CACHE_DIR": "where the doctor keeps its records (default ~/.cache/inductor-doctor)",
    "NO_CACHE": "set: never reuse a remembered answer (as --no-cache, for every command)",
    "DEBUG": "set: an internal error raises with its traceback instead of one line",
    "GATHER_TIMEOUT": "check --distributed: seconds each rank has to report (default 600)",
    "GATHER_CLIENT": "check --distributed: torch makes the gather use torch.distributed's store client",
    "COMPILE_THREADS": "Inductor's compile threads in every canary",
    "TEST_ENVS": "the tests' heavy venvs (tests/envs/build*.sh)",
    "AUDIT_CACHE": "tools/release_audit.py's downloads",
    "DEV2026_STRICT": "set: tests/commands/test_triage_dev2026.py fails on a miss instead of recording it",
    "DEBIAN_MIRROR": "the Debian mirror tests/envs/build_container.sh makes the base image from",
    # The fleet engines' adapters (contrib/, docs/fleet.md): read by their scripts, not by the doctor.
    "NODE_DEFAULTS": "contrib/: the file of settings the adapters read first (/etc/default/inductor-doctor)",
    "NODE_COMMAND": "contrib/: the doctor's command (default inductor-doctor)",
    "NODE_ARGS": "contrib/: check's options for the node verdict (default --static)",
    "NODE_DIR": "contrib/: where the node verdict is kept (verdict.json, verdict.txt)",
    "NODE_TIMEOUT": "contrib/: seconds before the node's check is stopped (default 50)",
    "NODE_VERDICT": "contrib/slurm: the node-verdict script to run",
    "NODE_DRAIN_UNKNOWN": "contrib/slurm: 1 drains a node whose check gave no verdict",
    "NODE_MAX_AGE": "contrib/node-problem-detector: seconds a kept verdict stands (default 1800)",
    # Set by the doctor for the processes it starts; never the user's.
    "CANARY": "a canary's scratch directory (marks its processes)",
    "STAGE_FILE": "where a canary's harness writes how far it got",
    "MACHINE_DIR": "where canaries share what they learnt about this CPU",
    "CXX_ID": "the compiler the probe found, for the canaries' records",
    "BYPASS": "the settings a canary's harness sets aside, and the live probe reads back (compile-bypassed)",
    "EARLY_ISA": "1: the harness learns the CPU's vector ISAs beside the canary",
    "CPU_COMPILE_THREADS": "the compile threads a CPU canary may use",
    "HOOK": "0: the exception hook (inductor_doctor.hook, its .pth) does nothing",
    "WHY_BACKEND": "the torch.compile backend a `why` step-down run forces (target/why_site.py)",
    "WHY_MARK": "where a `why` run counts its torch.compile calls (target/why_site.py)",
    "WHY_BISECT_LOG": "where a `why` run records the compiler bisector's applications (target/why_site.py)",
    "WHY_OUTPUT": "`why --compare`: where the program saves its result with torch.save (docs/at-failure.md)",
    "ARTIFACT_PATH": "the artifact the artifact_load canary loads (check --artifact)",
    "ARTIFACT_KIND": "what that artifact is: pt2, cache-blob or cache-dir",
    "XTARGET": "the GPU the cross-target canary compiles for, as Triton names it (check --gpu)",
    "XTARGET_KERNELS": "the cross-target canary's kernels to compile",
    "XTARGET_SMEM": "that GPU's shared memory per block, which the canary holds its kernels to",
}
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH", re.IGNORECASE)


def relevant(name: str) -> bool:
    if _SECRET.search(name) or name.startswith(VOLATILE_PREFIXES):
        return False
    return name in NAMES or name.startswith(PREFIXES)


#: A password in a URL (`redis://:PASSWORD@host`, `https://user:PASSWORD@host`).
_URL_PASSWORD = re.compile(r"(\w[\w+.-]*://[^/\s:@]*:)[^/\s@]*(@)")


def without_password(value: str) -> str:
    """`value` with the password of any URL in it replaced by `***` (TORCHINDUCTOR_REDIS_URL)."""
    return _URL_PASSWORD.sub(r"\1***\2", value)


def relevant_env(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The relevant variables of `environ` (default: this process's), sorted by name; a password in a
    URL is never kept."""
    import os

    environ = os.environ if environ is None else environ
    return dict(sorted((k, without_password(v)) for k, v in environ.items() if relevant(k)))


def compiler_env(environ: Optional[Mapping[str, str]] = None) -> list:
    """[(name, value)] of the variables a compiler reads, as a cache key part."""
    import os

    environ = os.environ if environ is None else environ
    return [(k, environ[k]) for k in COMPILER if k in environ]


# --- settings that make a torch.compile hollow ------------------------------------------------------


class Bypass(NamedTuple):
    """A setting that makes `torch.compile` a no-op, fall back to eager when it fails, or run another
    backend than the one asked for: the finding compile-bypassed, and what the canary harness sets
    aside so that a canary tests the stack rather than the setting."""

    name: str  # the environment variable
    effect: str  # "no-op" | "eager-fallback" | "backend"
    #: The torch files (relative to the torch package) that read it: what a value means is read
    #: from the installed release's own code (probe/compile_settings.py), never remembered.
    reads: Tuple[str, ...]
    config: Optional[str] = None  # the torch config attribute it sets, where it sets one
    off: object = False  # that attribute's value when the setting is not in effect


#: Read from torch 2.5.1, 2.6.0, 2.9.0 and 2.13.0 (`_dynamo/config.py`, `_dynamo/eval_frame.py`,
#: `_inductor/compiler_bisector.py`, `_inductor/async_compile.py`): the variables each release reads
#: that turn compile off, swallow its errors, or swap its backend.
BYPASSES: Tuple[Bypass, ...] = (
    Bypass("TORCH_COMPILE_DISABLE", "no-op", ("_dynamo/config.py",), "torch._dynamo.config.disable", False),
    Bypass("TORCHDYNAMO_DISABLE", "no-op", ("_dynamo/eval_frame.py",)),
    Bypass("TORCHDYNAMO_SUPPRESS_ERRORS", "eager-fallback", ("_dynamo/config.py",),
           "torch._dynamo.config.suppress_errors", False),
    Bypass("TORCH_COMPILE_OVERRIDE_BACKENDS", "backend", ("_dynamo/config.py",),
           "torch._dynamo.config.debug_backend_override", ""),
    Bypass("TORCH_BISECT_BACKEND", "backend", ("_inductor/compiler_bisector.py",)),
    Bypass("TRITON_INTERPRET", "backend",
           ("_inductor/async_compile.py", "_inductor/runtime/triton_heuristics.py")),
)
#: What each effect does to a program, as a finding says it.
BYPASS_EFFECTS = {
    "no-op": "torch.compile returns the function unchanged: nothing is compiled",
    "eager-fallback": "a compile that fails falls back to eager silently instead of raising",
    "backend": "another backend than the one torch.compile was given compiles (or interprets) the graph",
}


def bypass_table() -> str:
    """The table as the target's scripts read it ($INDUCTOR_DOCTOR_BYPASS): the variables to remove
    and the config attributes with the value that undoes them."""
    import json

    return json.dumps({"env": [b.name for b in BYPASSES],
                       "config": {b.config: b.off for b in BYPASSES if b.config}}, sort_keys=True)
