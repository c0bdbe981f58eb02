"""Where the doctor keeps what it remembers: one directory, the user's own, never a made-up one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def home_dir() -> Optional[Path]:
    """$HOME, else the password database's home (cron, systemd and `env -i` leave HOME unset)."""
    home = os.environ.get("HOME")
    if home:
        return Path(home)
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None
    return Path(entry) if entry and entry != "/nonexistent" else None


def cache_dir() -> Optional[Path]:
    """Where results are cached; None when there is nowhere sensible (no home): then nothing is.

    Never a made-up path: as root, `/nonexistent/.cache` would simply be created.
    """
    explicit = os.environ.get("INDUCTOR_DOCTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "inductor-doctor"
    home = home_dir()
    return home / ".cache" / "inductor-doctor" if home else None


def private_dir(path: Path) -> None:
    """Create `path` (and any missing parents) for this user only: 0700, whatever the umask.

    `Path.mkdir(parents=True, mode=...)` applies the mode to the last directory only; a cache
    directory that the doctor creates must not be readable by others at any level it creates. An
    existing directory of ours that others can read is tightened.
    """
    missing = []
    d = path
    while not d.exists():
        missing.append(d)
        if d.parent == d:
            break
        d = d.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:  # a concurrent run made it first
            pass
        os.chmod(d, 0o700)
    st = os.stat(path)
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        os.chmod(path, 0o700)
