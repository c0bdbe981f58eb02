"""What the command line and every command agree on: exit codes, the --fail-on threshold, and the
usage error (one line, exit 2). Tiny on purpose: `--help`, `list` and `explain` import it and little
else."""

from __future__ import annotations

import enum


class FailOn(str, enum.Enum):
    """The `--fail-on` threshold: the least worrying status that still fails the run."""

    AFFECTED = "affected"
    LIKELY = "likely"
    INCONCLUSIVE = "inconclusive"
    NEVER = "never"


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    DOCTOR_FAILED = 3
    INTERRUPTED = 130
    TERMINATED = 143


class UsageError(Exception):
    """A mistake in what the user asked for: reported in one line, exit code 2."""
