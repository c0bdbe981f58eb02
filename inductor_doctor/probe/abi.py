"""The const_data_ptr ABI check: does this compiler name `TensorBase::const_data_ptr<int64_t>` the
way libtorch exports it?

torch 2.3–2.11 declare `template <typename T, std::enable_if_t<!std::is_const_v<T>, int> = 0>
const T* const_data_ptr() const`. Clang ≥ 18 mangles that second template parameter with the new
Itanium `Tn` prefix, GCC (which builds the official libtorch) does not, so an extension built with
clang references a symbol libtorch never defines: `undefined symbol: ..const_data_ptrIlTnNSt9enable_if..`
at import time (flashinfer-ai/flashinfer#872, pytorch/pytorch#169926).

This module records what it found (`AbiInfo.stage`: how far it got; what the compiler references,
what libtorch lacks, what went wrong); the verdict is the rule's (`kb/const_data_ptr_abi.py`).

Rather than predict that from version numbers, we ask the compiler: compile the one-line TU that
uses the function against the installed headers, with the flags an extension build would use
(`CXX`/`c++`, the `-std` torch's cpp_extension passes, `CPPFLAGS` and `CFLAGS` — what setuptools and
torch's ninja build put on the compile line; `CXXFLAGS` reaches only their link line — and torch's
`_GLIBCXX_USE_CXX11_ABI`),
read the object's undefined symbols with pyelftools and look each up in libtorch_cpu.so's dynamic
hash table. No torch import, no binutils: a torch whose import fails still gets a verdict. It costs
one compile, about a second and ~180 MB for cc1plus; a completed comparison is remembered on disk
under the compiler binary, the flags and torch's header and library files (see `_diskcache`).
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import AbiInfo, TorchInfo
from inductor_doctor.probe import _diskcache, _elf, compiler
from inductor_doctor.probe._proc import c_locale_env, first_error_line, run
from inductor_doctor.probe.step import Step

TU = (
    "#include <ATen/core/TensorBase.h>\n"
    "const int64_t* probe(const at::TensorBase& t) { return t.const_data_ptr<int64_t>(); }\n"
)
HEADER = os.path.join("ATen", "core", "TensorBase.h")

#: How GCC spells `const_data_ptr<long>` in the libtorch builds we know: torch ≤ 2.11 (with the
#: enable_if default argument) and torch ≥ 2.12 (plain `template <typename T>`).
EXPECTED_SPELLINGS = (
    "_ZNK2at10TensorBase14const_data_ptrIlLi0EEEPKT_v",
    "_ZNK2at10TensorBase14const_data_ptrIlEEPKT_v",
)

COMPILE_TIMEOUT_S = 60.0
DEFAULT_STD = "c++17"

_STD = re.compile(r"common_cflags \+= \[\s*['\"]-std=(c\+\+\d+)['\"]")

_lock = threading.Lock()
_cache: Dict[Tuple[object, ...], AbiInfo] = {}


def _stat_key(path: str) -> Tuple[str, float, int]:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_mtime, st.st_size)


def extension_std(torch_dir: Optional[str]) -> str:
    """The `-std` torch.utils.cpp_extension passes (c++17 up to torch 2.11, c++20 from 2.12), read as text."""
    if torch_dir:
        try:
            with open(os.path.join(torch_dir, "utils", "cpp_extension.py"), encoding="utf-8") as f:
                m = _STD.search(f.read())
            if m:
                return m.group(1)
        except OSError:
            pass
    return DEFAULT_STD


LAUNCHERS = ("ccache", "sccache", "distcc", "icecc")


def _split_command(command: str) -> Tuple[Optional[str], List[str]]:
    """`CXX` may carry a launcher and arguments (`ccache clang++ -m64`), as build tools allow.

    The probe runs the compiler itself (a launcher only caches or ships the same compile) with the
    extra arguments in front of ours.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and os.path.basename(words[0]) in LAUNCHERS:
        words = words[1:]
    return (words[0], words[1:]) if words else (None, [])


def _flags(torch: TorchInfo, env: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """`(flags shown to the user, include flags)`. The user's CFLAGS and CPPFLAGS come last, as on the
    compile line of an extension build (setuptools' customize_compiler, which torch's BuildExtension
    turns into the ninja rule); CXXFLAGS is left out because that build passes it to the linker only
    (measured with torch 2.13 and setuptools 84: `tests/verdicts/test_workarounds.py`)."""
    shown = [f"-std={extension_std(torch.path)}"]
    if torch.cxx11_abi is not None:
        shown.append(f"-D_GLIBCXX_USE_CXX11_ABI={int(torch.cxx11_abi)}")
    for name in ("CFLAGS", "CPPFLAGS"):
        try:
            shown += shlex.split(env.get(name, ""))
        except ValueError:
            shown += env.get(name, "").split()
    inc = torch.include_dir or ""
    includes = ["-I", inc, "-I", os.path.join(inc, "torch", "csrc", "api", "include")]
    return shown, includes


def check(
    torch: Optional[TorchInfo],
    env: Optional[Mapping[str, str]] = None,
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> AbiInfo:
    """What the compiler an extension build would use references, and what `torch`'s libtorch
    exports of it. Never raises."""
    start = time.monotonic()
    env = env if env is not None else os.environ
    try:
        info = _check(torch, env, timeout_s)
    except Exception as exc:  # a doctor bug must not hide the rest of the probe
        info = AbiInfo(stage="failed", error=f"the ABI check failed: {type(exc).__name__}: {exc}")
    info.duration_s = time.monotonic() - start
    return info


def _check(torch: Optional[TorchInfo], env: Mapping[str, str], timeout_s: float) -> AbiInfo:
    if torch is None:
        return AbiInfo(stage="no-torch")
    info = AbiInfo(torch_version=torch.version)
    if not torch.include_dir or not os.path.isfile(os.path.join(torch.include_dir, HEADER)):
        info.stage = "no-headers"
        return info
    if not torch.libtorch_cpu or not os.path.isfile(torch.libtorch_cpu):
        info.stage = "no-library"
        return info
    info.library = torch.libtorch_cpu
    command, why = compiler.extension_cxx(env)
    info.compiler = command
    flags, includes = _flags(torch, env)
    info.flags = flags
    exe, extra = _split_command(command)
    path = compiler.resolve(exe, env) if exe else None
    if path is None:
        info.stage = "no-compiler"
        info.error = f"`{exe or command}` ({why}) is not on PATH"
        return info
    flags = [*extra, *flags]
    info.compiler_path = path
    kind, version, line = compiler.identify(path)
    info.compiler_version = f"{kind or 'compiler'} {version}" if version else kind
    if line is None:  # no answer to `--version`, which Inductor asks first too: no probe compile
        hung = compiler.HUNG.get(path)
        info.stage = "timed-out" if hung else "not-compiled"
        info.error = (f"`--version` timed out after {hung:g}s" if hung else "`--version` failed") + \
            ": the probe is not compiled with it"
        return info
    key = (_stat_key(path), tuple(flags), _stat_key(torch.libtorch_cpu), torch.include_dir)
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        info.cached = True
        return _copy(cached, info)
    disk_key = [
        STORED_FORM, _diskcache.file_key(path), flags, includes, _diskcache.compiler_env(), TU,
        _diskcache.file_key(os.path.join(torch.include_dir, HEADER)),
        _diskcache.file_key(torch.libtorch_cpu),
        _diskcache.file_key(os.path.join(torch.path or "", "version.py")),
    ]
    stored = _diskcache.get("abi", disk_key)
    if stored is not None and stored.get("stage") == "compared":
        _copy_stored(stored, info)
        info.cached = True
        return info
    _compile_and_compare(info, path, flags, includes, timeout_s)
    if info.stage == "compared":
        with _lock:
            _cache[key] = info
        _diskcache.put("abi", disk_key, {f: getattr(info, f) for f in _STORED})
    return info


_STORED = ("stage", "referenced", "missing", "exported_spelling")
#: What a remembered comparison holds; a new form is a new key (an older doctor's stored verdicts
#: are not read back).
STORED_FORM = "abi-facts/2"


def _copy_stored(stored: Mapping[str, object], into: AbiInfo) -> None:
    into.stage = str(stored["stage"])
    into.referenced = [str(s) for s in stored.get("referenced") or []]  # type: ignore[union-attr]
    into.missing = [str(s) for s in stored.get("missing") or []]  # type: ignore[union-attr]
    spelling = stored.get("exported_spelling")
    into.exported_spelling = str(spelling) if spelling else None


def _copy(cached: AbiInfo, into: AbiInfo) -> AbiInfo:
    for field in _STORED:
        value = getattr(cached, field)
        setattr(into, field, list(value) if isinstance(value, list) else value)
    return into


def _compile_and_compare(
    info: AbiInfo, path: str, flags: List[str], includes: List[str], timeout_s: float
) -> None:
    with tempfile.TemporaryDirectory(prefix="indoc-abi-") as tmp:
        src = os.path.join(tmp, "const_data_ptr_probe.cpp")
        obj = os.path.join(tmp, "const_data_ptr_probe.o")
        with open(src, "w", encoding="utf-8") as f:
            f.write(TU)
        res = run([path, *flags, *includes, "-c", src, "-o", obj], timeout_s=timeout_s,
                  env=c_locale_env(), cwd=tmp)
        if not res.ok:
            if res.timed_out:
                info.stage = "timed-out"
                info.error = f"compiling the probe timed out after {timeout_s:g}s"
            else:
                info.stage = "not-compiled"
                info.error = (first_error_line(res.stderr) or res.why()).replace(tmp + os.sep, "")
            return
        try:
            undefined = _elf.undefined_symbols(obj)
        except _elf.ELF_ERRORS as exc:
            info.stage = "failed"
            info.error = f"cannot read the probe object as ELF: {exc}"
            return
    info.referenced = sorted({s for s in undefined if "const_data_ptr" in s})
    try:
        with _elf.open_elf(info.library or "") as elf:
            index = _elf.SymbolIndex(elf)
            if not index.usable:
                info.stage = "failed"
                info.error = f"{info.library} has no dynamic hash table to look symbols up in"
                return
            info.missing = [s for s in info.referenced if not index.defines(s)]
            if info.missing:
                info.exported_spelling = next((s for s in EXPECTED_SPELLINGS if index.defines(s)), None)
    except _elf.ELF_ERRORS as exc:
        info.stage = "failed"
        info.error = f"cannot read {info.library} as ELF: {exc}"
        return
    info.stage = "compared"


def compile_or_defer(torch_info: Optional[TorchInfo], env: Dict[str, str],
                     live_probe: Optional[Any]) -> AbiInfo:
    """The const_data_ptr ABI compile now; or, beside a `check`'s canaries, deferred to its live probe
    (`LiveProbe.defer_abi`: no canary reads it, and on a first run it is the slowest static probe)."""
    if live_probe is None:
        return check(torch_info, env)
    live_probe.defer_abi(lambda: check(torch_info, env))
    return AbiInfo(stage="pending")


STEP = Step("abi", ("torch_files", "environ", "live_probe"), compile_or_defer,
            lambda m, known: AbiInfo(stage="failed", error=m), "ABI")
