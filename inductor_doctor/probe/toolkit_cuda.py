"""The `toolkit_cuda` step: the driver's answers with the CUDA toolkit's (its ptxas candidates among
them, Triton's bundled one too)."""

from __future__ import annotations

from inductor_doctor.probe.cuda import toolkit_info
from inductor_doctor.probe.step import Step

STEP = Step("toolkit_cuda", ("driver", "environ", "target", "triton_installed"),
            lambda info, env, t, tr: toolkit_info(info, env, str(t.get("machine") or ""),
                                                  tr.bundled_ptxas if tr else None),
            lambda m, known: known["driver"], "CUDA toolkit")
