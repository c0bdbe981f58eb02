"""The `env` step: the environment variables that change what the compile stack does (`core/envvars`)."""

from __future__ import annotations

from inductor_doctor.core.envvars import relevant_env
from inductor_doctor.probe.step import Step

STEP = Step("env", ("environ",), relevant_env)
