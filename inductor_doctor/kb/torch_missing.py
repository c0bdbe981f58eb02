"""No torch to check: not installed for this interpreter, or installed but `import torch` fails.

Everything else the doctor says depends on a torch being there, so this is said first. Without one
every other row is `not-applicable` — which, shown alone, reads like health. A doctor pointed at the
wrong interpreter (a system Python beside the venv that runs the code, `pip` and `python` from two
environments) must say "nothing to check here", and a gate must be able to fail on it: the finding
is `inconclusive` (`--fail-on inconclusive`). A torch whose import fails is a finding of its own
(`affected`, with the error the live probe saw).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from inductor_doctor.core.model import (
    DeviceKind,
    KnownIssue,
    RuleOutcome,
    Severity,
    Signature,
    Status,
    Workaround,
)
from inductor_doctor.kb._catalog import one

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    where = facts.python.executable
    torch = facts.torch
    if torch is None or not torch.version:
        return one(Status.INCONCLUSIVE, f"torch is not installed for {where}: nothing of the compile stack "
                   "to check here — diagnose the interpreter that runs your code with `--python`, or "
                   "predict an install with `plan`")
    if torch.import_ok is False:
        why = (torch.import_error or "unknown error").strip().splitlines()[0][:300]
        return one(Status.AFFECTED, f"torch {torch.version} is installed for {where}, but `import torch` "
                   f"fails: {why}")
    tried = "imports" if torch.import_ok else "is installed (its import is tried without --static)"
    return one(Status.OK, f"torch {torch.version} {tried} ({torch.path})")


ISSUE = KnownIssue(
    id="torch-missing",
    title="No torch to check: not installed for this interpreter, or `import torch` fails",
    severity=Severity.ERROR,
    devices=(DeviceKind.TOOLCHAIN,),
    upstream=("pytorch/pytorch#15999", "pytorch/pytorch#42526"),
    aliases=("no-torch", "torch-not-installed", "torch-import-fails"),
    summary=(
        "The doctor inspects the torch of one interpreter: the one it runs under, or `--python`. "
        "When that interpreter has no torch (the doctor was installed into a system Python, `pip` and "
        "`python` belong to different environments, a container entry point uses another venv), there is "
        "nothing of the compile stack to check, and every other row is not-applicable. When torch is "
        "installed but `import torch` fails (a missing CUDA library, an ABI skew), nothing compiles."
    ),
    signatures=(
        # A package build in pip's or uv's isolated environment says the same while torch is
        # installed beside it (facebookresearch/pytorch3d#2014, pytorch_fpsample#7).
        Signature(r"No module named 'torch'(?!\.)", note="torch is not installed for that interpreter",
                  against=r"Getting requirements to build wheel|get_requires_for_build_wheel|pip-build-env"
                          r"|build-system\.requires|--no-build-isolation",
                  against_says="the import failed in a package build's isolated environment, which does not "
                               "see the torch installed: build that package with --no-build-isolation"),
        Signature(r"ModuleNotFoundError: No module named 'torch\._C'", strength="partial",
                  note="torch imported from its source tree, or a broken install"),
    ),
    workarounds=(
        Workaround("Diagnose the interpreter that runs your code (a venv directory works too)",
                   "inductor-doctor check --python /path/to/venv/bin/python", "flag"),
        Workaround("Or predict what an install would hit, before installing",
                   "inductor-doctor plan -r requirements.txt", "flag"),
        Workaround("Or install torch for this interpreter (see pytorch.org for the CUDA variant)",
                   "python -m pip install torch", "install"),
    ),
    rule=rule,
    headline=True,
)
