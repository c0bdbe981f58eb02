"""libtpu (the TPU PJRT plugin) does not pair with torch_xla.

torch_xla checks the PJRT C API version and struct sizes of the plugin it loads; a libtpu built
against another API version fails at the first device. torch_xla's METADATA pins the libtpu it was
built with (its `tpu` extra); the probe (probe/pjrt.py) reads that pin and the libtpu installed. A
libtpu outside the pin is the pairing pytorch/xla#6949 and Kaggle/docker-python#1499 report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import Basis, RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import matches, not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    xla, p = facts.xla, facts.pjrt
    if xla is None or not xla.version:
        return not_installed("torch_xla")
    if p is None:
        return one(Status.INCONCLUSIVE, "torch_xla's PJRT plugin was not read")
    label = f"torch_xla {xla.version}"
    plugin = p.distribution or "libtpu"
    if p.library_path:
        pin = f" it pins ({p.pinned})" if p.pinned else ""
        return one(Status.LIKELY if p.pinned else Status.INCONCLUSIVE,
                   f"TPU_LIBRARY_PATH={p.library_path} makes {label} load that libtpu, not the {plugin} wheel"
                   f"{pin}: its PJRT API version is not known before it loads", Basis.STATIC)
    if not p.distribution:
        return one(Status.NOT_APPLICABLE, f"no libtpu is installed beside {label} (no TPU plugin: CPU or GPU "
                   "PJRT devices only)")
    if p.pinned is None:
        return one(Status.INCONCLUSIVE, f"{label} names no libtpu release in its metadata; {plugin} "
                   f"{p.version} is installed")
    if matches(p.version, p.pinned) is False:
        return one(Status.LIKELY, f"{label} pins {plugin}{p.pinned} (its tpu extra), and {plugin} "
                   f"{p.version} is installed (another package's requirement?): a PJRT plugin built against "
                   "another API version fails at the first TPU device ('Mismatched PJRT plugin PJRT API "
                   "version', 'Unexpected PJRT_Plugin_Attributes_Args size')", Basis.VERSION)
    return one(Status.OK, f"{plugin} {p.version} is the release {label} pins ({p.pinned})", Basis.VERSION)
