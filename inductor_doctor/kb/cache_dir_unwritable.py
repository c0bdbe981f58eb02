"""The compile cache directory cannot be created or written: PermissionError / read-only FS.

Inductor's default cache, `/tmp/torchinductor_<user>`, and Triton's, `~/.triton/cache`, are
created on first use. On shared machines another account may own the path (or a shared
`/tmp/triton` from an older default), in containers `$HOME` may be `/` or read-only, and a
`TORCHINDUCTOR_CACHE_DIR` may point at a read-only mount: the first compile then stops with
`PermissionError: [Errno 13] Permission denied` or `OSError: [Errno 30] Read-only file system`.
The kernel's own answer (`access(2)`, which honours read-only mounts) makes the rule conclusive.
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
from inductor_doctor.kb._cache_dirs import cache_dirs, describe
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._rules import not_installed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts


def rule(facts: Facts) -> List[RuleOutcome]:
    if facts.torch is None or not facts.torch.version:
        return not_installed("torch")
    dirs = cache_dirs(facts)
    if dirs is None:
        return one(Status.INCONCLUSIVE, "the cache directories were not probed")
    bad = [d for d in dirs if d.writable is False]
    if bad:
        return one(Status.AFFECTED, "; ".join(f"{describe(d)}: {d.error or 'not writable'}" for d in bad),
                   paths=[d.path for d in bad])
    unknown = [d for d in dirs if d.writable is None]
    if unknown:
        return one(Status.INCONCLUSIVE, "could not tell whether " + ", ".join(d.path for d in unknown)
                   + " is writable")
    return one(Status.OK, "; ".join(f"{d.name} cache {d.path} is writable" for d in dirs))


#: Not a path into an installed package or a bin/ directory (a program, not a cache).
_NOT_PROGRAM = r"(?![^']*(?:site-packages|dist-packages|[/\\]bin[/\\]))"

#: Windows refusing the rename of a finished `tmp.*` entry onto an existing one, in a cache that was just
#: written to: a stale or locked entry, not a cache the user cannot write (chengzeyi/Comfy-WaveSpeed#123,
#: kijai/ComfyUI-WanVideoWrapper#220; deleting the entry fixes it).
_RENAMED = r": '[^'\n]*[/\\]tmp[.\w-]*' -> '"
_RENAMED_SAYS = "it is the rename of a finished tmp entry onto an existing one (a stale or locked entry)"

ISSUE = KnownIssue(
    id="cache-dir-unwritable",
    title="Compile cache directory not writable: 'Permission denied' / 'Read-only file system'",
    severity=Severity.ERROR,
    devices=(DeviceKind.TOOLCHAIN,),
    upstream=("triton-lang/triton#518", "pytorch/pytorch#34238", "opendatahub-io/ilab-on-ocp#26"),
    aliases=("cache-permission-denied", "read-only-cache"),
    summary=(
        "The first torch.compile creates Inductor's cache (TORCHINDUCTOR_CACHE_DIR, else "
        "/tmp/torchinductor_<user>) and Triton's (TRITON_CACHE_DIR, else ~/.triton/cache). If the "
        "path belongs to another user, sits on a read-only mount, or $HOME is not writable (common in "
        "containers run as an arbitrary UID), the compile fails with `PermissionError: [Errno 13] "
        "Permission denied` or `OSError: [Errno 30] Read-only file system`."
    ),
    signatures=(
        # A path inside an installed package or a bin/ directory is a program denied, not a cache
        # (Triton's bundled ptxas without its executable bit, triton-lang/triton#704 in fb's fork).
        Signature(r"Permission denied: '" + _NOT_PROGRAM + r"[^']*(?:torchinductor|\.triton|triton)[^']*'",
                  note="a cache path owned by someone else"),
        Signature(r"Read-only file system: '" + _NOT_PROGRAM
                  + r"[^']*(?:torchinductor|\.triton|triton)[^']*'"),
        Signature(r"\[WinError 5\] Access is denied: '" + _NOT_PROGRAM
                  + r"[^']*(?:torchinductor|\.triton|triton)[^']*'",
                  note="Windows' wording (lllyasviel/FramePack#221)",
                  against=_RENAMED, against_says=_RENAMED_SAYS),
        # A bare permission error is this issue's only beside a compile cache's own path.
        Signature(r"\[Errno 13\] Permission denied", strength="partial", subject=("compile-cache",),
                  against=_RENAMED, against_says=_RENAMED_SAYS),
        Signature(r"\[Errno 30\] Read-only file system", strength="partial", subject=("compile-cache",)),
    ),
    workarounds=(
        Workaround("Give Inductor a cache of your own",
                   'export TORCHINDUCTOR_CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/torchinductor"', "env"),
        Workaround("And Triton (a writable path when $HOME is not)",
                   'export TRITON_CACHE_DIR="${TMPDIR:-/tmp}/triton-$(id -u)"', "env"),
    ),
    rule=rule,
)
