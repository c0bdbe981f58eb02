"""The TPU PJRT plugin (libtpu) beside torch_xla, and the release torch_xla pins.

torch_xla loads libtpu through the PJRT C API and refuses a plugin built against another API
version ("Mismatched PJRT plugin PJRT API version (0.47) and framework PJRT API version 0.40"; from
later releases "Unexpected PJRT_Plugin_Attributes_Args size: ... The plugin is likely built with a
later version than the framework"). torch_xla pins the libtpu it was built with in its `tpu` extra;
another package (jax[tpu], a nightly) can install another. Read from the package metadata: no import.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Any, Dict, Optional

from inductor_doctor.core.facts import PjrtPluginInfo, XlaInfo
from inductor_doctor.probe import Step

PLUGINS = ("libtpu", "libtpu-nightly")
_PIN = re.compile(r"^Requires-Dist:\s*(libtpu(?:-nightly)?)\s*\(?([<>=!~][^;)]*)\)?\s*;"
                  r".*extra\s*==\s*['\"]tpu['\"]", re.I)


def torch_xla_pin(xla: XlaInfo) -> Optional[str]:
    """torch_xla's requirement on libtpu under its `tpu` extra, from its METADATA."""
    if not xla.path or not xla.version:
        return None
    site = os.path.dirname(xla.path)
    release = xla.version.split("+")[0]
    for meta in glob.glob(os.path.join(site, f"torch_xla-{release}*.dist-info", "METADATA")):
        try:
            with open(meta, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.strip():
                        break
                    m = _PIN.match(line.strip())
                    if m:
                        return m.group(2).replace(" ", "")
        except OSError:
            continue
    return None


def read(xla: Optional[XlaInfo], pkgs: Dict[str, str], env: Dict[str, str]) -> Optional[PjrtPluginInfo]:
    if xla is None:
        return None
    dist = next((d for d in PLUGINS if d in pkgs), None)
    return PjrtPluginInfo(distribution=dist, version=pkgs.get(dist) if dist else None,
                          pinned=torch_xla_pin(xla), library_path=env.get("TPU_LIBRARY_PATH") or None)


def _fallback(message: str, known: Dict[str, Any]) -> None:
    return None


STEP = Step("pjrt", ("xla", "packages", "environ"), read, _fallback, "PJRT plugin")
