"""The environment that makes the CLI load the `fault-*` issues as a real entry-point plugin."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

HERE = Path(__file__).resolve().parent
DIST = "inductor_doctor_fault_plugin-0.0.dist-info"


def install(root: Path) -> Path:
    """Write the plugin's distribution metadata under `root`; returns the directory for PYTHONPATH."""
    site = root / "fault-plugin-site"
    info = site / DIST
    info.mkdir(parents=True, exist_ok=True)
    meta = "Metadata-Version: 2.1\nName: inductor-doctor-fault-plugin\nVersion: 0.0\n"
    (info / "METADATA").write_text(meta)
    (info / "entry_points.txt").write_text("[inductor_doctor.issues]\nfaults = fault_issues:issues\n")
    return site


def plugin_env(root: Path) -> Dict[str, str]:
    """PYTHONPATH with the plugin's metadata and its module, ahead of whatever was there."""
    site = install(root)
    parts = [str(site), str(HERE)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    return {"PYTHONPATH": os.pathsep.join(parts)}
