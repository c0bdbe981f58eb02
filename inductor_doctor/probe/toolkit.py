"""The `toolkit` step: the CUDA toolkit (nvcc, CUDA_HOME) as the GPU catalog found it."""

from __future__ import annotations

from inductor_doctor.probe.step import Step

STEP = Step("toolkit", ("gpu_catalog",), lambda static: static.toolkit)
