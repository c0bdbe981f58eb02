"""A GPU with fewer SMs than Inductor's `is_big_gpu` threshold: max-autotune GEMMs silently off.

With `mode="max-autotune"`, Inductor benchmarks Triton GEMM templates against cuBLAS, but only on a
"big" GPU: `torch/_inductor/utils.py::is_big_gpu` requires 68 SMs (an RTX 3080; 80 before torch
2.4) and otherwise logs "Not enough SMs to use max_autotune_gemm mode" once and keeps the plain
library calls. Nothing fails, so users on 48-SM or 66-SM cards find out by reading the source. The
threshold is read from torch's file and the SM count comes from the live probe.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import is_gpu_torch, one, outcome, torch_label, torch_source
from inductor_doctor.kb._gpus import no_visible_gpu
from inductor_doctor.kb._rules import not_installed, parse_version

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

_MIN_SMS = re.compile(r"min_sms\s*=\s*(?:\d+\s+if\s+[^\n]*?\s+else\s+)?(\d+)")
_OLD_CHECK = re.compile(r"multi_processor_count\s*<\s*(\d+)")


def threshold(facts: Facts) -> Optional[int]:
    """The CUDA SM count below which this torch disables max-autotune GEMM templates."""
    text = torch_source(facts, "_inductor", "utils.py") or ""
    fn = text[text.find("def is_big_gpu"):] if "def is_big_gpu" in text else ""
    m = _MIN_SMS.search(fn[:3000]) or _OLD_CHECK.search(fn[:3000])
    if m:
        return int(m.group(1))
    v = parse_version(facts.torch.version if facts.torch else None)
    if v is None:
        return None
    return 68 if v.release[:2] >= (2, 4) else 80  # pytorch#123121 lowered it from 80 in 2.4


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    if not facts.gpus:
        return no_visible_gpu(facts)
    if not is_gpu_torch(facts):
        return one(Status.NOT_APPLICABLE, f"{torch_label(facts)} does not compile for the GPU")
    if facts.torch.hip:
        return one(Status.NOT_APPLICABLE, "ROCm: is_big_gpu decides by architecture, not SM count")
    need = threshold(facts)
    out = []
    for gpu in facts.gpus:
        if gpu.big_gpu is False or (gpu.big_gpu is None and gpu.sm_count is not None and need is not None
                                    and gpu.sm_count < need):
            sms = f"{gpu.sm_count} SMs" if gpu.sm_count is not None else "too few SMs"
            out.append(outcome(Status.AFFECTED, f"{gpu.name} has {sms} (< {need or '?'}): Inductor's "
                               "is_big_gpu is False, so max-autotune skips its Triton GEMM templates",
                               device=gpu.device, sm_count=gpu.sm_count, threshold=need))
        elif gpu.big_gpu is True or (gpu.sm_count is not None and need is not None):
            sms = str(gpu.sm_count) if gpu.sm_count is not None else "enough"
            out.append(outcome(Status.OK, f"{gpu.name} has {sms} SMs (>= {need or '?'}): max-autotune "
                               "GEMM templates are on",
                               device=gpu.device))
        else:
            out.append(outcome(Status.INCONCLUSIVE, f"{gpu.name}: SM count unknown (the live probe "
                               "reports it)", Basis.STATIC, device=gpu.device))
    return out
