"""The plugin API: what a project that ships its own known issues imports (docs/plugins.md).

The vocabulary lives in `inductor_doctor.core.model`; this module is its stable public name, so a
plugin written against `inductor_doctor.model` keeps working however the package is arranged inside.
"""

from inductor_doctor.core.model import (
    Basis,
    Canary,
    DeviceKind,
    Finding,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)

__all__ = ["Basis", "Canary", "DeviceKind", "Finding", "KnownIssue", "RuleOutcome", "Severity", "Signature",
           "Status", "Workaround"]
