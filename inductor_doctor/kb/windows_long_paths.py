"""Windows' MAX_PATH under the Inductor/Triton cache: a kernel's files that cannot be written or
reopened (`FileNotFoundError` on a `.ttir`, `.source` or `__grp__*.json` 250+ characters long).

Inductor points Triton at `<Inductor cache>\\triton\\<device>`; Triton writes each kernel into
`<52-character hash>\\tmp.pid_<pid>_<uuid4>\\` under it and names the files after the kernel, whose
name Inductor makes from every fused op (`triton_per_fused__fused_rms_norm__fused_rms_norm_backward_
add_embedding_dense_backward_native_dropout_native_dropout_backward_1`, 126 characters,
pytorch#187283). With the registry's LongPathsEnabled off (Windows' default) a path past 259
characters cannot be opened. The rule measures the Inductor cache the target would use and says how
long a kernel name still fits: the cache's length is the fact, the names are the workload's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._windows import path_named, windows_facts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

#: The longest path a program that is not long-path aware opens: MAX_PATH (260) less the NUL.
LONGEST = 259
HASH = 52  # Triton's cache key, base32 of a sha256


def overhead(temp_dir: int) -> int:
    """What `\\triton\\<device>\\<hash>\\<temp dir>\\__grp__<name>.json`, the deepest file Triton writes
    per kernel, adds to the cache's path besides the kernel's name."""
    return len("\\triton\\0\\") + HASH + 1 + temp_dir + len("\\__grp__") + len(".json")


#: Kernel names seen in the threads: a short fused kernel, and a fused backward one (pytorch#187283).
SHORT_NAME = 40
LONG_NAME = 126


def rule(facts: Facts) -> List[RuleOutcome]:
    win = windows_facts(facts, "MAX_PATH is Windows' limit")
    if isinstance(win, list):
        return win
    if win.long_paths_enabled:
        return one(Status.OK, "LongPathsEnabled is 1: Python and Triton open paths past 260 characters")
    if win.triton_long_paths:
        return one(Status.OK, "the installed Triton writes its cache through \\\\?\\ paths "
                   "(runtime/cache.py normalize_path), which MAX_PATH does not limit")
    cache = path_named(facts, "inductor cache")
    if cache is None:
        return one(Status.INCONCLUSIVE, "the Inductor cache directory was not probed")
    switch = ("LongPathsEnabled is 0" if win.long_paths_enabled is False
              else "LongPathsEnabled could not be read (Windows' default is 0)")
    deepest = cache.length + overhead(win.triton_temp_dir or 51)
    fits = LONGEST - deepest
    said = (f"{switch}, and the Inductor cache {cache.path} is {cache.length} characters: a kernel's files "
            f"reach {deepest} + its name's length, so names longer than {max(fits, 0)} characters pass "
            f"MAX_PATH (260)")
    if fits < SHORT_NAME:
        return one(Status.AFFECTED, f"{said}: even a short fused kernel's does", fits=fits)
    if fits < LONG_NAME:
        return one(Status.LIKELY, f"{said}; Inductor names fused backward kernels after every op "
                   f"({LONG_NAME} characters in pytorch#187283)", fits=fits)
    return one(Status.OK, f"{switch}, but the Inductor cache {cache.path} leaves {fits} characters for a "
               f"kernel's name, longer than the {LONG_NAME} of pytorch#187283", fits=fits)
