"""The `python` step: the target interpreter itself (version, platform, its libstdc++), from its
self-description (`packages.python_info`)."""

from __future__ import annotations

from inductor_doctor.core.facts import PythonInfo
from inductor_doctor.probe.packages import python_info
from inductor_doctor.probe.step import Step

STEP = Step("python", ("python", "target"), python_info,
            lambda m, known: PythonInfo(executable=known["python"], version="unknown", error=m), "python")
