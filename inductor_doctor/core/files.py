"""Writing files the way a doctor must: atomically, and with user-only permissions where asked."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Optional, Union


def file_key(path: Optional[str]) -> Optional[list]:
    """What identifies a file's content cheaply: its real path, size and mtime in nanoseconds (None
    for no path, or one that cannot be read): the key of every record kept about a file."""
    if not path:
        return None
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    return [real, st.st_size, st.st_mtime_ns]


def read_own_text(path: Union[str, Path]) -> Optional[str]:
    """A record's text, only if this user wrote it: a regular file (a link is not followed) owned
    by this user and writable by no one else, in a directory of the same kind. Anything else
    (missing, another user's, a link, a directory, a FIFO) is None: a record is never read from
    where someone else could have put it."""
    path = str(path)
    uid = os.getuid()
    try:
        parent = os.stat(os.path.dirname(path) or ".")
        if parent.st_uid != uid or parent.st_mode & 0o022:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def write_text_atomic(path: Union[str, Path], text: str, private: bool = False, durable: bool = True) -> None:
    """Write via a temporary file in the same directory and rename, so readers never see half.

    `durable=False` skips the fsync, for records the doctor can compute again (its caches): the rename
    still keeps readers from half a file, a record lost to a power cut is only asked again, and a
    repeated check no longer waits for the disk (an fsync on a busy node took longer than the rest)."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    import tempfile  # only a write pays for it (list and explain write nothing)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if private:
            os.chmod(tmp, 0o600)
        else:
            os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_output(path: Path, text: str) -> None:
    """--output FILE, atomically; a disk that refuses it is the user's to fix (exit 2), not a doctor bug."""
    from inductor_doctor.core.codes import UsageError

    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def emit(text: str, output: Optional[Path]) -> None:
    """A rendered report to --output, else to stdout (one trailing newline)."""
    if output is not None:
        write_output(output, text)
        return
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
