"""`inductor-doctor hook`: opt a whole environment in to the exception hook, or out again.

`--install-pth` writes one line, `inductor_doctor_hook.pth`, into the site-packages of the
interpreter the user names (`--python`, default this one): every start of that interpreter then
calls `inductor_doctor.hook.install()`, which imports nothing heavy and costs nothing until a
compile-stack exception. The line does nothing where inductor-doctor is not importable, or with
`INDUCTOR_DOCTOR_HOOK=0`. `--remove-pth` deletes the file; with neither, the command says whether it
is there. Installing the package never writes it: this explicit command is the only way in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, Optional

from inductor_doctor.core.document import Document
from inductor_doctor.hook import PTH_LINE, PTH_NAME, site_packages


@dataclass
class HookDocument(Document):
    """Where the `.pth` line is, and what this command did with it."""

    ENVELOPE = ("schema", "tool_version")  # no knowledge base is read

    python: str
    site_packages: str
    pth: str
    action: str  # installed | removed | present | absent
    command: str = "hook"

    def body(self) -> Dict[str, Any]:
        return {"python": self.python,
                "site_packages": self.site_packages, "pth": self.pth, "action": self.action,
                "line": PTH_LINE.strip()}


def hook_pth(python: Optional[str], install: bool, remove: bool) -> HookDocument:
    from inductor_doctor.core.codes import UsageError
    from inductor_doctor.core.files import write_text_atomic
    from inductor_doctor.probe.target import resolve_python

    if install and remove:
        raise UsageError("hook takes --install-pth or --remove-pth, not both")
    interpreter = resolve_python(python)
    site = site_packages(interpreter)
    pth = os.path.join(site, PTH_NAME)
    if install:
        try:
            write_text_atomic(pth, PTH_LINE)
        except OSError as exc:
            raise UsageError(f"{site}: cannot write {PTH_NAME} ({exc.strerror or exc})") from None
        action = "installed"
    elif remove:
        try:
            os.unlink(pth)
            action = "removed"
        except FileNotFoundError:
            action = "absent"
        except OSError as exc:
            raise UsageError(f"{pth}: cannot remove it ({exc.strerror or exc})") from None
    else:
        action = "present" if os.path.exists(pth) else "absent"
    return HookDocument(interpreter, site, pth, action)
