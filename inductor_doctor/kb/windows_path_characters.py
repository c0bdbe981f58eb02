"""A space in a path Inductor puts on `cl`'s command line unquoted: the argument splits in two.

Inductor on Windows writes its `cl` command as one string and splits it with `shlex.split`
(`torch/_inductor/cpp_builder.py`, `_run_compile_cmd`). The include directories are quoted since
torch 2.7 (`/I "{inc_dir}"`, pytorch#149388; `/I {inc_dir}` before), the library directories always
(`/LIBPATH:"..."`); the sources and the `/Fe` output are not (`" ".join(sources)`,
`f"{output_flags}{relative_target_file}"`, through 2.14). So a space in the Inductor cache (under
`%TEMP%`, which holds the user's name: `C:\\Users\\Emad Younan\\...`, pytorch#167062) splits the .cpp
and the .pyd paths, and before 2.7 a space in Python's or torch's path (`C:\\Program Files\\Python310\\
Include`, pytorch#149310, pytorch#149713) splits `/I`: cl warns "D9024 : unrecognized source file type"
and the compile fails. Which of those this torch quotes is read from its cpp_builder.py
(`InductorClCommand`); the paths from the probe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._windows import path_named, windows_facts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    win = windows_facts(facts, "only Windows' cl takes its arguments as one string Inductor splits")
    if isinstance(win, list):
        return win
    cl = win.inductor_cl
    if cl is None:
        return one(Status.INCONCLUSIVE, "torch's _inductor/cpp_builder.py could not be read: how it quotes "
                   "cl's arguments is unknown")
    torch = facts.torch.version if facts.torch else "?"
    split: List[str] = []
    cache = path_named(facts, "inductor cache")
    if cache is not None and cache.spaces and (cl.quotes_sources is False or cl.quotes_output is False):
        split.append(f"the Inductor cache {cache.path!r} (the .cpp sources and /Fe output, unquoted)")
    for name in ("python include", "torch"):
        p = path_named(facts, name)
        if p is not None and p.spaces and cl.quotes_include_dirs is False:
            split.append(f"{name} {p.path!r} (/I {{dir}}, unquoted before torch 2.7)")
    if split:
        return one(Status.AFFECTED, f"torch {torch} puts these paths on cl's command line unquoted and each "
                   f"has a space, so shlex.split cuts it in two (cl: 'D9024 : unrecognized source file "
                   f"type'): {'; '.join(split)}", basis_source=cl.source)
    odd = [p for p in (facts.platform.paths if facts.platform else []) if p.non_ascii]
    note = (f"; non-ASCII characters in {', '.join(p.name for p in odd)}: cl takes them, how its messages "
            "are read is compiler-output-encoding's") if odd else ""
    return one(Status.OK, f"no space in a path torch {torch} leaves unquoted on cl's command line "
               f"(read from {cl.source}){note}")
