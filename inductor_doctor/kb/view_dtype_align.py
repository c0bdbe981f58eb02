"""Inductor's alignment assertion fires on `x[2:].view(dtype=...)` of a CUDA graph input.

pytorch/pytorch#150804 (2.8.0 nightlies from 2025-04-08) made Inductor assert that fallback
outputs are 16-byte aligned; `is_unaligned` ignored the offset of a `ReinterpretView`, so a sliced
bf16 input bit-cast to fp32 (GGUF dequantisation in ComfyUI, city96/ComfyUI-GGUF#257) failed at
run time. pytorch/pytorch#151859 (nightlies from 2025-04-23, so 2.8.0) takes the offset into
account. The rule reads `torch/_inductor/ir.py` as text: no asserts at all (torch <= 2.7) or an
offset-aware `is_unaligned` is conclusive; the version table is the fallback.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional

from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._builtin import issue_data
from inductor_doctor.kb._catalog import torch_source
from inductor_doctor.kb._rules import nightly_window, not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts

IR_FILE = "_inductor/ir.py"
#: The nightlies that generate the faulty asserts: the data file's `affected` range, which says why.
FIRST_NIGHTLY, FIXED_NIGHTLY = nightly_window(issue_data(__name__)["affected"]["torch"])
WORKAROUND_ENV = "TORCHINDUCTOR_ALIGNMENT_ASSERTS"

_IS_UNALIGNED = re.compile(r"^def is_unaligned\(.*?(?=^\S)", re.MULTILINE | re.DOTALL)


def from_source(text: str) -> Optional[RuleOutcome]:
    """What `ir.py` says: no asserts, the fixed `is_unaligned`, the pre-fix one, or nothing clear."""
    where = f"torch/{IR_FILE}"
    if "assert_alignment" not in text:
        return RuleOutcome(Status.OK, f"this torch generates no alignment asserts (no `assert_alignment` in "
                           f"{where}; they arrived in 2.8.0 nightlies)", Basis.STATIC)
    m = _IS_UNALIGNED.search(text)
    if m is None:
        return None
    body = m.group(0)
    if "ReinterpretView" in body and "offset" in body:
        return RuleOutcome(Status.OK, f"{where}: is_unaligned() counts a ReinterpretView's offset "
                           "(the fix of pytorch#151859)", Basis.STATIC)
    return RuleOutcome(Status.LIKELY, f"{where} asserts fallback outputs aligned, but is_unaligned() ignores "
                       "a ReinterpretView's offset (before pytorch#151859)", Basis.STATIC)


def from_version(version: str) -> RuleOutcome:
    try:
        v = Version(version)
    except InvalidVersion:
        return RuleOutcome(Status.INCONCLUSIVE, f"cannot parse the torch version {version!r}", Basis.VERSION)
    date = v.dev if v.dev is not None and v.dev > 20000000 else None
    if v.release[:2] == (2, 8) and date is not None:
        if FIRST_NIGHTLY <= date < FIXED_NIGHTLY:
            return RuleOutcome(Status.LIKELY, f"torch {version} is a nightly between pytorch#150804 "
                               "(2025-04-08) and its fix pytorch#151859 (2025-04-23)", Basis.VERSION)
        return RuleOutcome(Status.OK, f"torch {version} is a nightly outside 2025-04-08..22", Basis.VERSION)
    if v.release[:2] == (2, 8) and v.is_prerelease:
        return RuleOutcome(Status.INCONCLUSIVE, f"torch {version}: a 2.8 pre-release of unknown date",
                           Basis.VERSION)
    if Version(v.base_version) < Version("2.8"):
        return RuleOutcome(Status.OK, f"torch {version} predates Inductor's alignment asserts (2.8)",
                           Basis.VERSION)
    return RuleOutcome(Status.OK, f"torch {version} includes the fix (2.8.0 and later)", Basis.VERSION)


def rule(facts: Facts) -> List[RuleOutcome]:
    torch = facts.torch
    if torch is None or not torch.version:
        return not_installed("torch")
    text = torch_source(facts, *IR_FILE.split("/"))
    outcome = (from_source(text) if text is not None else None) or from_version(torch.version)
    if outcome.status is Status.LIKELY and facts.env.get(WORKAROUND_ENV) == "0":
        outcome = RuleOutcome(outcome.status, f"{outcome.reason}; {WORKAROUND_ENV}=0 is set here, which "
                              "avoids the assertion", outcome.basis)
    return [outcome]
