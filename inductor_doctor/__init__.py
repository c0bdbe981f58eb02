"""inductor-doctor: a doctor for the PyTorch compile stack (torch.compile, Inductor, Triton, XLA).

Importing this package must stay cheap and must never import torch, triton or torch_xla: the doctor
has to keep working precisely when those are broken.
"""

from inductor_doctor.core.version import __version__

__all__ = ["__version__", "preflight", "Verdict"]


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """`inductor_doctor.preflight` and its `Verdict`, loaded on first use: `import inductor_doctor`
    stays free of the check machinery (inductor_doctor/commands/preflight.py)."""
    if name in ("preflight", "Verdict"):
        from inductor_doctor.commands import preflight

        return getattr(preflight, name)
    raise AttributeError(f"module 'inductor_doctor' has no attribute {name!r}")
