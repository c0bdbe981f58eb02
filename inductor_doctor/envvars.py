"""The environment variables that change what the compile stack does: one list, for every part.

The probe records them in `Facts.env` (so reports show them), the canary cache keys its verdicts by
them, and the probe's compiler answers are keyed by the subset a compiler reads. Nothing else is
ever collected, so no report can leak a token: a name that looks like a secret is dropped even
when a prefix would admit it.
"""

from __future__ import annotations

import re
from typing import Dict, Mapping, Optional

#: Compilers, their search paths and flags; loaders; Python and its environment managers; caches.
NAMES = (
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CPATH", "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH", "LD_LIBRARY_PATH",
    "LD_PRELOAD", "PATH", "TMPDIR", "PYTHONPATH", "CONDA_PREFIX", "VIRTUAL_ENV", "OMP_NUM_THREADS",
    "KMP_AFFINITY", "MAX_JOBS", "ATEN_CPU_CAPABILITY", "LOCAL_RANK", "PJRT_DEVICE", "TPU_NUM_DEVICES",
    "GPU_NUM_DEVICES",
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
#: ignored; tests/test_envvars.py fails on a name used anywhere in the tree and missing here.
DOCTOR_PREFIX = "INDUCTOR_DOCTOR_"
DOCTOR_OWN = {
    "CACHE_DIR": "where the doctor keeps its records (default ~/.cache/inductor-doctor)",
    "NO_CACHE": "set: never reuse a remembered answer (as --no-cache, for every command)",
    "DEBUG": "set: an internal error raises with its traceback instead of one line",
    "GATHER_TIMEOUT": "check --distributed: seconds each rank has to report (default 600)",
    "COMPILE_THREADS": "Inductor's compile threads in every canary",
    "TEST_ENVS": "the tests' heavy venvs (tests/envs/build*.sh)",
    "AUDIT_CACHE": "tools/release_audit.py's downloads",
    # Set by the doctor for the processes it starts; never the user's.
    "CANARY": "a canary's scratch directory (marks its processes)",
    "STAGE_FILE": "where a canary's harness writes how far it got",
    "MACHINE_DIR": "where canaries share what they learnt about this CPU",
    "CXX_ID": "the compiler the probe found, for the canaries' records",
    "EARLY_ISA": "1: the harness learns the CPU's vector ISAs beside the canary",
    "CPU_COMPILE_THREADS": "the compile threads a CPU canary may use",
    "HOOK": "0: the exception hook (inductor_doctor.hook, its .pth) does nothing",
    "WHY_BACKEND": "the torch.compile backend a `why` step-down run forces (target/why_site.py)",
    "WHY_MARK": "where a `why` run counts its torch.compile calls (target/why_site.py)",
    "ARTIFACT_PATH": "the artifact the artifact_load canary loads (check --artifact)",
    "ARTIFACT_KIND": "what that artifact is: pt2, cache-blob or cache-dir",
}
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH", re.IGNORECASE)


def relevant(name: str) -> bool:
    if _SECRET.search(name) or name.startswith(VOLATILE_PREFIXES):
        return False
    return name in NAMES or name.startswith(PREFIXES)


def relevant_env(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The relevant variables of `environ` (default: this process's), sorted by name."""
    import os

    environ = os.environ if environ is None else environ
    return dict(sorted((k, v) for k, v in environ.items() if relevant(k)))


def compiler_env(environ: Optional[Mapping[str, str]] = None) -> list:
    """[(name, value)] of the variables a compiler reads, as a cache key part."""
    import os

    environ = os.environ if environ is None else environ
    return [(k, environ[k]) for k in COMPILER if k in environ]
