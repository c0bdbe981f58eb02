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


#: What only a mistake in the doctor's own code raises, whatever the machine it runs on: a name that is
#: not defined (UnboundLocalError too), a module of its own that does not import. Code that turns a
#: sick environment's surprises into findings lets these through, so that they end the command as
#: the doctor's failure (exit 3, `cli.main`), never as a finding about the user's machine.
OWN_BUGS = (NameError, ImportError, SyntaxError)


def own_bug(exc: BaseException) -> bool:
    """Whether `exc`, met while reading the machine (a probe, an artifact's reader), is the doctor's
    own failure rather than the machine's. A built-in rule reads only the doctor's typed facts, so
    anything it raises is the doctor's (`check/engine.py`); a plugin's is the plugin's finding."""
    return isinstance(exc, OWN_BUGS)


class UsageError(Exception):
    """A mistake in what the user asked for: reported in one line, exit code 2."""
