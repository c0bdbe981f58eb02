"""The `cc` step: the C compiler Triton would pick to build its launcher, and what it can compile."""

from __future__ import annotations

from inductor_doctor.core.facts import CompilerInfo
from inductor_doctor.probe.compiler import triton_cc_info
from inductor_doctor.probe.step import Step

STEP = Step("cc", ("target", "environ", "step"),
            lambda t, env, step: triton_cc_info(t.get("include_dir"), env, step),
            lambda m, known: CompilerInfo(error=m), "C compiler")
