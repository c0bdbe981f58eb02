"""Where the doctor keeps what it remembers: one directory, the user's own, never a made-up one.

What is read back from there decides verdicts (a compiler's identity, a canary's outcome, a
preflight answer), so a directory that someone else can write is no place to read from: whoever can
rename its subdirectories can put records of their own in their place. `cache_dir()` refuses a
directory that is not this user's, or one that others can write at any level above it (a shared
`/tmp/x` that another user made, a group-writable parent), as pip refuses a cache it does not own:
then nothing is cached, and `cache_refusal()` has the one line to warn with.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Dict, Optional


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


#: The directories refused in this process, and why (what `cache_refusal` warns with).
_refused: Dict[str, str] = {}


def cache_dir() -> Optional[Path]:
    """Where results are cached; None when there is nowhere sensible (no home) or nowhere this user
    can trust (`untrusted`): then nothing is cached.

    Never a made-up path: as root, `/nonexistent/.cache` would simply be created.
    """
    path = configured_cache_dir()
    if path is None:
        return None
    why = untrusted(path)
    if why is not None:
        _refused.setdefault(str(path), why)
        return None
    return path


def cache_refusal() -> Optional[str]:
    """The one warning line for a cache directory refused in this process, or None."""
    if not _refused:
        return None
    path, why = next(iter(_refused.items()))
    return f"warning: the cache directory {path} is not used ({why}); running uncached"


def configured_cache_dir() -> Optional[Path]:
    """The cache directory asked for, trusted or not: INDUCTOR_DOCTOR_CACHE_DIR, else
    $XDG_CACHE_HOME/inductor-doctor, else the home's .cache/inductor-doctor; None with no home."""
    explicit = os.environ.get("INDUCTOR_DOCTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "inductor-doctor"
    home = home_dir()
    return home / ".cache" / "inductor-doctor" if home else None


def untrusted(path: Path) -> Optional[str]:
    """Why records under `path` could be someone else's; None when only this user (or root) can
    have put them there.

    The directory itself, if it exists, must be this user's; it and every directory above it must
    belong to this user or root and be writable by no one else, except a sticky parent (/tmp),
    where others cannot rename what is ours. A level that does not exist yet is one the doctor creates
    (0700, `private_dir`). A link is followed: the path as written and the one it leads to must
    both pass.
    """
    written = Path(os.path.abspath(path))
    why = _walk(written)
    if why is None:
        real = Path(os.path.realpath(written))
        if real != written:
            why = _walk(real)
    return why


def _walk(path: Path) -> Optional[str]:
    uid = os.getuid()
    current, first = path, True
    while True:
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return f"{current} cannot be read: {exc.strerror or exc}"
        if st is not None:
            if first and not stat.S_ISLNK(st.st_mode) and st.st_uid != uid:
                return f"{current} belongs to uid {st.st_uid}, not to this user (uid {uid})"
            if st.st_uid not in (uid, 0):
                return f"{current} belongs to uid {st.st_uid}, who can replace what is below it"
            writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            # Sticky protects our entries in a shared parent, not the cache's own: in a sticky
            # directory others can still create the doctor's subdirectories before it does.
            if writable and not stat.S_ISLNK(st.st_mode) and (first or not st.st_mode & stat.S_ISVTX):
                who = "others" if st.st_mode & stat.S_IWOTH else "its group"
                return f"{current} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
        first = False  # a missing level is the doctor's to create; its parent is a parent
        if current.parent == current:
            return None
        current = current.parent


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
