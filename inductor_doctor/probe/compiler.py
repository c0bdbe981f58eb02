"""The C and C++ compilers the compile stack would use, and what they can actually compile.

Which compiler, mirrored from the sources (read, not imported):

* Inductor's C++ backend, `torch/_inductor/cpp_builder.py::get_cpp_compiler`: it searches
  `config.cpp.cxx = (None, os.environ.get("CXX", "clang++" if darwin else "g++"))` and keeps the
  first entry whose `[cxx, "--version"]` runs. `None` is a conda-installed g++, tried only with
  `TORCH_INDUCTOR_INSTALL_GXX` set. The entry is one executable (`CXX="ccache g++"` fails there).
* C++ extensions, `torch/utils/cpp_extension.py::get_cxx_compiler`: `CXX`, else `c++`.
* Triton's launcher stub, `triton/runtime/build.py::get_cc`: `CC`, else `gcc`, else `clang`.

What it can do is asked of the compiler itself: three tiny translation units, compiled in
parallel, each under a timeout (a wedged compiler must not wedge the doctor). Answers are cached
per (binary, mtime, size, test) for the life of the process.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import CompilerInfo
from inductor_doctor.probe import _diskcache
from inductor_doctor.probe._proc import ProcResult, c_locale_env, first_error_line, run
from inductor_doctor.probe.step import Step

COMPILE_TIMEOUT_S = 20.0

TRIVIAL_CXX = 'extern "C" int inductor_doctor_probe(int x) { return x + 1; }\n'
TRIVIAL_C = "int inductor_doctor_probe(int x) { return x + 1; }\n"
OPENMP_CXX = '#include <omp.h>\nextern "C" int inductor_doctor_probe() { return omp_get_max_threads(); }\n'
PYTHON_H = "#include <Python.h>\nint inductor_doctor_probe(void) { return Py_IsInitialized(); }\n"


def _inductor_cache_dir(env: Mapping[str, str]) -> str:
    """torch._inductor.runtime.cache_dir_utils.default_cache_dir: /tmp/torchinductor_<user>."""
    if env.get("TORCHINDUCTOR_CACHE_DIR"):
        return env["TORCHINDUCTOR_CACHE_DIR"]
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in some containers
        user = "unknown"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r"[\\/:*?\"<>|]", "_", user))


def inductor_cxx_candidates(env: Mapping[str, str]) -> Tuple[Tuple[str, str], ...]:
    """`(command, why)` in the order Inductor's `cpp_compiler_search` tries them."""
    out = []
    if sys.platform == "linux" and env.get("TORCH_INDUCTOR_INSTALL_GXX"):
        out.append(
            (os.path.join(_inductor_cache_dir(env), "gcc", "bin", "g++"), "TORCH_INDUCTOR_INSTALL_GXX")
        )
    if env.get("CXX") is not None:
        out.append((env["CXX"], "CXX"))
    else:
        out.append(("clang++" if sys.platform == "darwin" else "g++", "config.cpp.cxx default"))
    return tuple(out)


def extension_cxx(env: Mapping[str, str]) -> Tuple[str, str]:
    """torch.utils.cpp_extension's compiler: `CXX`, else `c++`."""
    if env.get("CXX"):
        return env["CXX"], "CXX"
    return "c++", "cpp_extension default"


def triton_cc(env: Mapping[str, str]) -> Tuple[Optional[str], str]:
    """Triton's launcher compiler: `CC`, else `gcc`, else `clang` on PATH."""
    if env.get("CC"):
        return env["CC"], "CC"
    for name in ("gcc", "clang"):
        if shutil.which(name, path=env.get("PATH")):
            return name, "triton get_cc default"
    return None, "triton get_cc default"


_lock = threading.Lock()
_identity: Dict[Tuple[str, float, int], Tuple[Optional[str], Optional[str], Optional[str]]] = {}
_tests: Dict[Tuple[str, float, int, str, str], Tuple[bool, Optional[str]]] = {}


def _key(path: str) -> Optional[Tuple[str, float, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_mtime, st.st_size)  # as called: `c++` and `g++` answer with their own name


def resolve(command: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The executable a `subprocess` call of `command` would run (PATH search unless it is a path)."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) and os.path.isfile(command) else None
    return shutil.which(command, path=(env or os.environ).get("PATH"))


_CLANG_V = re.compile(r"clang version (\d+(?:\.\d+)*)")
_ANY_V = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
_GNU_NAME = re.compile(r"(?:^|[\s/-])g(?:cc|\+\+)(?:-\d+)?(?:\s|$)")


#: Compilers whose `--version` hung, with the time limit it ran past: nothing else is asked of them.
HUNG: Dict[str, float] = {}


def identify(
    path: str, timeout_s: float = COMPILE_TIMEOUT_S
) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """`(kind, version, first --version line)`, as the compiler reports itself; cached."""
    key = _key(path)
    if key is not None:
        with _lock:
            if key in _identity:
                return _identity[key]
    # The name it is called by is part of the answer (`c++ (Debian ...)` vs `g++ (Debian ...)`).
    file_key = _diskcache.file_key(path)
    disk_key = [path, file_key] if file_key is not None else None
    stored = _diskcache.get("identity", disk_key)
    if stored is not None and isinstance(stored.get("answer"), list) and len(stored["answer"]) == 3:
        answer_d = tuple(stored["answer"])
        if key is not None:
            with _lock:
                _identity[key] = answer_d  # type: ignore[assignment]
        return answer_d  # type: ignore[return-value]
    res = run([path, "--version"], timeout_s=timeout_s, env=c_locale_env())
    if not res.ok:
        if res.timed_out:  # remembered for this run (not on disk): a later caller does not wait again
            with _lock:
                HUNG[path] = timeout_s
                if key is not None:
                    _identity[key] = (None, None, None)
        return None, None, None
    text = res.stdout + res.stderr
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    kind: Optional[str]
    version: Optional[str] = None
    if "clang" in first.lower():
        kind = "apple-clang" if "Apple" in first else "clang"
        m = _CLANG_V.search(first)
        version = m.group(1) if m else None
    elif "Free Software Foundation" in text or "(GCC)" in first or _GNU_NAME.search(first):
        kind = "gcc"
        dump = run([path, "-dumpfullversion", "-dumpversion"], timeout_s=timeout_s, env=c_locale_env())
        version = dump.stdout.strip() if dump.ok and dump.stdout.strip() else None
    elif "Intel" in first:
        kind = "other"
    elif "Microsoft" in text:
        kind = "msvc"
    else:
        kind = "other"
    if version is None:
        m = _ANY_V.search(first)
        version = m.group(1) if m else None
    answer = (kind, version, first[:200] or None)
    if key is not None:
        with _lock:
            _identity[key] = answer
    _diskcache.put("identity", disk_key, {"answer": list(answer)})
    return answer


def try_compile(
    path: str,
    source: str,
    lang: str,
    args: Tuple[str, ...],
    timeout_s: float = COMPILE_TIMEOUT_S,
    witness: Optional[str] = None,
) -> Tuple[bool, Optional[str]]:
    """Compile `source`; `(ok, first error line)`. Cached per binary, source and flags.

    A success is also remembered on disk, keyed by the compiler binary, the flags, the search-path
    variables and `witness` (the header the test is about, e.g. Python.h); a failure is always
    asked again, so installing the missing piece shows at once.
    """
    key = _key(path)
    cache_key = (key[0], key[1], key[2], source, lang + " " + " ".join(args)) if key else None
    if cache_key is not None:
        with _lock:
            if cache_key in _tests:
                return _tests[cache_key]
    disk_key = None
    compiler_file = _diskcache.file_key(path)
    if compiler_file is not None:
        disk_key = [compiler_file, source, lang, list(args), _diskcache.compiler_env(),
                    _diskcache.file_key(witness) if witness else None,
                    search_dirs_state(path, lang, timeout_s)]
        stored = _diskcache.get("compile", disk_key)
        if stored is not None and stored.get("ok") is True:
            with _lock:
                if cache_key is not None:
                    _tests[cache_key] = (True, None)
            return True, None
    ext = ".cpp" if lang == "c++" else ".c"
    with tempfile.TemporaryDirectory(prefix="indoc-cc-") as tmp:
        src = os.path.join(tmp, "probe" + ext)
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        out = os.path.join(tmp, "probe.so")
        argv = [path, *args, src]
        if "-fsyntax-only" not in args:
            argv += ["-o", out]
        res: ProcResult = run(argv, timeout_s=timeout_s, env=c_locale_env(), cwd=tmp)
    if res.timed_out:
        answer: Tuple[bool, Optional[str]] = (False, f"timed out after {timeout_s:g}s")
    elif res.ok:
        answer = (True, None)
    else:
        answer = (False, (first_error_line(res.stderr) or res.why()).replace(tmp, "<tmp>"))
    if cache_key is not None and not res.timed_out:
        with _lock:
            _tests[cache_key] = answer
    if answer[0]:
        _diskcache.put("compile", disk_key, {"ok": True})
    return answer


_search: Dict[Tuple[str, str], List[str]] = {}


def search_dirs(path: str, lang: str, timeout_s: float = COMPILE_TIMEOUT_S) -> List[str]:
    """The directories this compiler searches for `#include <...>`, as it says (`-E -v`); remembered
    per compiler binary and search-path variables."""
    memo = (path, lang)
    with _lock:
        if memo in _search:
            return _search[memo]
    disk_key = [_diskcache.file_key(path), lang, _diskcache.compiler_env()]
    stored = _diskcache.get("search-dirs", disk_key) if disk_key[0] is not None else None
    dirs: List[str] = []
    if stored is not None and isinstance(stored.get("dirs"), list):
        dirs = [d for d in stored["dirs"] if isinstance(d, str)]
    else:
        res = run([path, "-x", lang, "-E", "-v", "-"], timeout_s=timeout_s, env=c_locale_env(), input="")
        inside = False
        for line in (res.stderr or "").splitlines():
            if line.startswith("#include <...> search starts here"):
                inside = True
            elif line.startswith("End of search list"):
                break
            elif inside and line.startswith(" "):
                dirs.append(os.path.normpath(line.strip().split(" (")[0]))
        if res.ok:
            _diskcache.put("search-dirs", disk_key, {"dirs": dirs})
    with _lock:
        _search[memo] = dirs
    return dirs


def search_dirs_state(path: str, lang: str, timeout_s: float = COMPILE_TIMEOUT_S) -> List[List[object]]:
    """Each search directory with its mtime: installing or removing a header (omp.h, Python.h)
    changes its directory, so a remembered answer about it is asked again."""
    state: List[List[object]] = []
    for d in search_dirs(path, lang, timeout_s):
        try:
            state.append([d, os.stat(d).st_mtime_ns])
        except OSError:
            state.append([d, None])
    return state


def probe_compiler(
    command: Optional[str],
    chosen_by: str,
    lang: str,
    python_include: Optional[str],
    openmp: bool,
    env: Optional[Mapping[str, str]] = None,
    timeout_s: float = COMPILE_TIMEOUT_S,
    pool: Optional[ThreadPoolExecutor] = None,
) -> CompilerInfo:
    """Everything a CompilerInfo holds, for `command`; the compile tests run in parallel."""
    info = CompilerInfo(command=command, chosen_by=chosen_by)
    if not command:
        info.works = False
        info.error = "no compiler found on PATH"
        return info
    path = resolve(command, env)
    if path is None:
        info.works = False
        info.error = f"`{command}` not found" + (" on PATH" if os.sep not in command else "")
        return info
    info.path = path
    info.kind, info.version, info.version_line = identify(path, timeout_s)
    if info.version_line is None:
        info.works = False
        info.error = f"`{command} --version` failed"
        return info
    base = ("-x", lang, "-shared", "-fPIC")
    jobs = {"works": (TRIVIAL_CXX if lang == "c++" else TRIVIAL_C, base, None)}
    if openmp:
        jobs["openmp"] = (OPENMP_CXX, (*base, "-fopenmp"), None)
    if python_include:
        jobs["python_h"] = (PYTHON_H, ("-x", lang, "-fsyntax-only", "-I", python_include),
                            os.path.join(python_include, "Python.h"))
    own_pool = pool is None
    ex = pool or ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="indoc-cc")
    try:
        futures = {
            k: ex.submit(try_compile, path, src, lang, args, timeout_s, witness)
            for k, (src, args, witness) in jobs.items()
        }
        results = {k: f.result() for k, f in futures.items()}
    finally:
        if own_pool:
            ex.shutdown(wait=True)
    info.works, err = results["works"]
    if err:
        info.error = f"cannot build a trivial shared object: {err}"
    if "openmp" in results:
        info.openmp, info.openmp_error = results["openmp"]
        if info.openmp_error:
            info.notes.append(f"OpenMP: {info.openmp_error}")
    if "python_h" in results:
        info.python_h, info.python_h_error = results["python_h"]
        if info.python_h_error:
            info.notes.append(f"Python.h: {info.python_h_error}")
    else:
        info.notes.append("Python.h not tested: the target's include directory is unknown")
    return info


#: The note that says a compiler is on PATH but failed or hung on `--version`.
DOES_NOT_RUN = "found, but does not answer `--version` (fails or hangs): "


_VERSIONED_CXX = re.compile(r"^(?:g\+\+|clang\+\+)-\d+(?:\.\d+)?$")
#: Where an installed omp.h lives (libomp-N-dev: LLVM N's resource directory; GCC's own; Homebrew).
OMP_HEADER_GLOBS = ("/usr/lib/llvm-*/lib/clang/*/include/omp.h", "/usr/lib/llvm-*/include/openmp/omp.h",
                    "/usr/lib/gcc/*/*/include/omp.h", "/opt/homebrew/opt/libomp/include/omp.h",
                    "/usr/local/opt/libomp/include/omp.h")


def cxx_on_path(env: Mapping[str, str]) -> Dict[str, str]:
    """Every C++ compiler on PATH by name (first hit of each name): a directory listing per PATH
    entry, no process."""
    found: Dict[str, str] = {}
    for d in (env.get("PATH") or "").split(os.pathsep):
        try:
            names = os.listdir(d or ".")
        except OSError:
            continue
        for n in names:
            if n in found or not (n in ("g++", "c++", "clang++") or _VERSIONED_CXX.match(n)):
                continue
            full = os.path.join(d, n)
            if os.path.isfile(full) and os.access(full, os.X_OK):
                found[n] = full
    return dict(sorted(found.items()))


def omp_headers() -> List[str]:
    import glob

    return sorted({p for pattern in OMP_HEADER_GLOBS for p in glob.glob(pattern) if os.path.isfile(p)})


def inductor_cxx(
    python_include: Optional[str],
    env: Optional[Mapping[str, str]] = None,
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> CompilerInfo:
    """The compiler Inductor's C++ backend would pick, probed (first candidate that runs wins),
    with the other compilers on PATH and the installed omp.h files beside it (for the advice)."""
    env = env if env is not None else os.environ
    info = _inductor_cxx(python_include, env, timeout_s)
    info.on_path = cxx_on_path(env)
    info.omp_headers = omp_headers()
    return info


def _inductor_cxx(python_include: Optional[str], env: Mapping[str, str], timeout_s: float) -> CompilerInfo:
    candidates = inductor_cxx_candidates(env)
    tried, broken = [], []
    for command, why in candidates:
        path = resolve(command, env)
        if path is not None and identify(path, timeout_s)[2] is not None:
            info = probe_compiler(command, why, "c++", python_include, True, env, timeout_s)
            if tried:
                info.notes.append("skipped (does not run): " + ", ".join(tried))
            _name_check(info)
            return info
        tried.append(command)
        if path is not None:
            broken.append(command)
    search = ", ".join(repr(c) for c, _ in candidates)
    info = CompilerInfo(
        command=candidates[-1][0],
        chosen_by=candidates[-1][1],
        works=False,
        error=f"No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, {search})",
    )
    if broken:  # found, but `--version` failed or hung: "not found" would send the user astray
        info.does_not_run = list(broken)
        info.notes.append(DOES_NOT_RUN + ", ".join(f"`{c}`" for c in broken))
    if any(" " in c.strip() for c, _ in candidates):
        info.notes.append("Inductor runs CXX as one program: a launcher or flags in it (`ccache g++`) "
                          "make it unusable there")
    return info


def _name_check(info: CompilerInfo) -> None:
    """Inductor decides gcc-vs-clang from the command's *name*; say when that disagrees."""
    name = os.path.basename(info.command or "")
    is_clang = bool(re.search(r"clang", name))
    is_gcc = not is_clang and bool(re.search(r"(gcc|g\+\+|gnu-c\+\+)", name))
    if info.kind == "clang" and not is_clang:
        info.notes.append(f"Inductor will not treat `{name}` as clang (it judges by the name)")
    elif info.kind == "gcc" and not is_gcc:
        info.notes.append(f"Inductor will not treat `{name}` as gcc (it judges by the name)")


def triton_cc_info(
    python_include: Optional[str],
    env: Optional[Mapping[str, str]] = None,
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> CompilerInfo:
    env = env if env is not None else os.environ
    command, why = triton_cc(env)
    info = probe_compiler(command, why, "c", python_include, False, env, timeout_s)
    if command is None:
        info.error = "Failed to find C compiler (Triton looks for CC, gcc, clang)"
    return info


#: The C++ compiler Inductor would pick, and what it can compile.
STEP = Step("cxx", ("target", "environ", "step"),
            lambda t, env, step: inductor_cxx(t.get("include_dir"), env, step),
            lambda m, known: CompilerInfo(error=m), "C++ compiler")
