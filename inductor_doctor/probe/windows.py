"""What Windows decides for the compile stack, read without running a compiler.

Inductor on Windows compiles its CPU kernels with `cl` (or `CXX`), and triton-windows builds each
launcher with `CC`, else the MSVC a Developer Prompt activated, else its bundled TinyCC, else `cl`
on PATH (`triton/runtime/build.py`, `_find_compiler`/`get_cc`). What breaks there, in 2025-26
threads, is the environment around them, and all of it can be read as files and variables:

* MAX_PATH: the registry's `LongPathsEnabled` (read with `winreg`, imported only on Windows) and
  whether the installed Triton gives its cache paths the `\\\\?\\` prefix (`normalize_path` in
  `triton/runtime/cache.py`, triton-windows 3.6.0.post26+);
* the MSVC environment: `VSCMD_ARG_HOST_ARCH`/`VSCMD_ARG_TGT_ARCH`, `VCToolsInstallDir`, `INCLUDE`,
  `LIB`; the `cl.exe` on PATH and the `Host<arch>\\<arch>` directory it sits in (a `Hostx64\\x86`
  cl makes 32-bit objects a 64-bit Python cannot link); the toolsets installed under Visual Studio;
  the languages of cl's messages (the LCID folders beside cl.exe, 1033 English);
* `CC`/`CXX` naming a folder or a file that is not there;
* the code pages (`GetACP`/`GetOEMCP`, ctypes, Windows only) a non-English `cl` writes in;
* how the installed torch builds its `cl` command and decodes its output, read from
  `torch/_inductor/cpp_builder.py` (`InductorClCommand`).

Every function takes the environment and paths it reads, so the same code reads a directory laid out
like a Visual Studio install on any machine; `gather_windows(..., system_facts=False)` skips the
registry and the code pages. A few stats and a directory listing per toolset: milliseconds.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Mapping, Optional, Tuple

from inductor_doctor.core.facts import InductorClCommand, MsvcToolset, PathFact, RuntimeDll, WindowsInfo
from inductor_doctor.probe import pe

#: Where the registry keeps the switch that lifts MAX_PATH for programs that declare themselves
#: long-path aware (python.exe does since 3.6; cl.exe does not).
LONG_PATHS_KEY = r"SYSTEM\CurrentControlSet\Control\FileSystem"
LONG_PATHS_VALUE = "LongPathsEnabled"

_CL_DIR = re.compile(r"[\\/]MSVC[\\/](?P<version>\d+\.\d+\.\d+)[\\/]bin[\\/]Host(?P<host>[A-Za-z0-9]+)"
                     r"[\\/](?P<target>[A-Za-z0-9]+)[\\/]cl(?:\.exe)?$", re.IGNORECASE)


def path_fact(name: str, path: str) -> PathFact:
    return PathFact(name=name, path=path, length=len(path), spaces=" " in path,
                    non_ascii=any(ord(c) > 127 for c in path))


def parse_cl_path(path: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(host, target, toolset) of `...\\MSVC\\14.44.35207\\bin\\Hostx64\\x86\\cl.exe`: ("x64", "x86",
    "14.44.35207"); Nones for a cl that is not in a Visual Studio toolset's tree."""
    m = _CL_DIR.search(path)
    if not m:
        return None, None, None
    return m.group("host").lower(), m.group("target").lower(), m.group("version")


def cl_languages(cl_dir: str) -> List[int]:
    """The LCIDs of the message resources beside a cl.exe (`1033\\clui.dll` is English, `2052\\`
    Simplified Chinese): the languages cl can print in. VSLANG, else the user's UI language where its
    pack is installed, else English decides which one it does."""
    out: List[int] = []
    try:
        for entry in os.scandir(cl_dir):
            pack = os.path.join(entry.path, "clui.dll")
            if entry.name.isdigit() and entry.is_dir() and os.path.isfile(pack):
                out.append(int(entry.name))
    except OSError:
        pass
    return sorted(out)


def _program_files(environ: Mapping[str, str]) -> List[str]:
    names = ("ProgramFiles(x86)", "ProgramW6432", "ProgramFiles")
    out: List[str] = []
    for n in names:
        value = environ.get(n)
        if value and value not in out:
            out.append(value)
    return out


def toolsets(environ: Mapping[str, str]) -> List[MsvcToolset]:
    """The MSVC toolsets under `<Program Files>\\Microsoft Visual Studio\\<year>\\<edition>\\VC\\Tools\\
    MSVC` (where Visual Studio and the Build Tools install them, and where triton-windows'
    `find_msvc_hardcoded` looks), newest first, with the host/target folders that hold a cl.exe."""
    found: List[MsvcToolset] = []
    for base in _program_files(environ):
        vs = os.path.join(base, "Microsoft Visual Studio")
        for year in _listdir(vs):
            for edition in _listdir(os.path.join(vs, year)):
                msvc = os.path.join(vs, year, edition, "VC", "Tools", "MSVC")
                for version in _listdir(msvc):
                    root = os.path.join(msvc, version)
                    if any(t.root == root for t in found):
                        continue
                    found.append(_toolset(root, version))
    found.sort(key=lambda t: _version_key(t.version), reverse=True)
    return found


def _toolset(root: str, version: str) -> MsvcToolset:
    tool = MsvcToolset(version=version, root=root)
    bin_dir = os.path.join(root, "bin")
    for host in _listdir(bin_dir):
        for target in _listdir(os.path.join(bin_dir, host)):
            cl_dir = os.path.join(bin_dir, host, target)
            if os.path.isfile(os.path.join(cl_dir, "cl.exe")):
                tool.hosts.append(f"{host}/{target}")
                if host.lower() == "hostx64" and target.lower() == "x64":
                    tool.languages = cl_languages(cl_dir)
    return tool


def _listdir(path: str) -> List[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def find_on_path(environ: Mapping[str, str], names: Tuple[str, ...] = ("cl.exe", "cl")) -> Optional[str]:
    """The first file of these names along PATH, as a bare `cl` resolves there."""
    for folder in (environ.get("PATH") or environ.get("Path") or "").split(os.pathsep):
        folder = folder.strip().strip('"')
        if not folder:
            continue
        for name in names:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return candidate
    return None


def compiler_problem(value: Optional[str], environ: Mapping[str, str]) -> Optional[str]:
    """What is wrong with a `CC`/`CXX` value that names no program: "a folder", "missing" (a path to
    nothing), "not on PATH" (a bare name PATH does not hold); None when it runs or is unset."""
    if not value:
        return None
    value = value.strip().strip('"')
    if os.path.isdir(value):
        return "a folder"
    if any(sep in value for sep in ("/", "\\")):
        return None if os.path.isfile(value) or os.path.isfile(value + ".exe") else "missing"
    base = value if value.lower().endswith(".exe") else value + ".exe"
    return None if find_on_path(environ, (base, value)) else "not on PATH"


def read_inductor_cl_command(torch_path: Optional[str]) -> Optional[InductorClCommand]:
    """How this torch's Inductor writes and reads its `cl` command, from its cpp_builder.py's source:
    the quoting of `/I`, of the sources and of `/Fe`, `SUBPROCESS_DECODE_ARGS`, and whether
    `check_msvc_cl_language_id` refuses a non-English MSVC. None where the file is not there."""
    if not torch_path:
        return None
    source = os.path.join(torch_path, "_inductor", "cpp_builder.py")
    try:
        with open(source, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    info = InductorClCommand(source=source)
    if "/I {inc_dir}" in text:
        info.quotes_include_dirs = False
    elif '/I "{inc_dir}"' in text:
        info.quotes_include_dirs = True
    if re.search(r'_sources_args = " "\.join\(sources\)', text):
        info.quotes_sources = False
    if re.search(r'f"\{output_flags\}\{relative_target_file\}"|/Fe\{target_file\}', text):
        info.quotes_output = False
    decode = re.search(r"^SUBPROCESS_DECODE_ARGS = (?P<args>(?:[^\n]*\n){0,3})", text, re.MULTILINE)
    if decode:
        args = decode.group("args").split("else", 1)[0]
        if "getpreferredencoding" in args:
            info.decodes_output_as = "locale, replace" if "replace" in args else "locale"
        elif "utf-8" in args or "utf8" in args:
            info.decodes_output_as = "utf-8"
    info.refuses_non_english = "def check_msvc_cl_language_id" in text
    return info


def triton_cache_paths(triton_path: Optional[str]) -> Tuple[Optional[bool], Optional[int]]:
    """(whether the installed Triton gives its cache directories the `\\\\?\\` prefix, triton-windows's
    `normalize_path` in runtime/cache.py, so that its own files are not limited to MAX_PATH; how long
    the name of the temporary directory it writes each kernel's files in is: `tmp.pid_<pid>_<uuid4>`,
    51 characters, or triton-windows 3.5.1's `tmp.<8 characters>`, 12)."""
    if not triton_path:
        return None, None
    try:
        with open(os.path.join(triton_path, "runtime", "cache.py"), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None, None
    temp: Optional[int] = None
    if "tmp.pid_{pid}_{rnd_id}" in text:
        temp = len("tmp.pid_") + 6 + 1 + 36
    elif 'f"tmp.{rnd_id}"' in text:
        temp = len("tmp.") + (8 if "uuid4())[:8]" in text else 36)
    return "normalize_path" in text, temp


def long_paths_enabled() -> Optional[bool]:
    """The registry's LongPathsEnabled; None where it cannot be read (not Windows, no such value)."""
    if sys.platform != "win32":
        return None
    import winreg  # Windows only: never imported elsewhere

    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, LONG_PATHS_KEY) as key:
            value, _kind = winreg.QueryValueEx(key, LONG_PATHS_VALUE)
    except OSError:
        return False  # no value: Windows' default, long paths off
    return bool(value)


def code_pages() -> Tuple[Optional[int], Optional[int], Optional[int]]:
    """(ANSI code page, OEM code page, the user's UI language LCID); Nones off Windows."""
    if sys.platform != "win32":
        return None, None, None
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    return int(kernel32.GetACP()), int(kernel32.GetOEMCP()), int(kernel32.GetUserDefaultUILanguage())


#: The Visual C++ runtime DLLs torch's and Triton's DLLs import.
RUNTIME_DLLS = ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")
#: The DLLs of torch's and Triton's whose build is read, relative to each package.
BUILT = (("torch", os.path.join("lib", "c10.dll")), ("triton", os.path.join("_C", "libtriton.pyd")))


def runtime_dirs(python_executable: Optional[str], torch_path: Optional[str],
                 environ: Mapping[str, str]) -> List[str]:
    """Where Windows looks for a Python extension's dependent DLLs, in order: the application's
    directory (python.exe's: a conda environment keeps its own msvcp140.dll there), the directories
    torch adds (`torch/lib`), then System32."""
    dirs = []
    if python_executable:
        dirs.append(os.path.dirname(python_executable))
    if torch_path:
        dirs.append(os.path.join(torch_path, "lib"))
    root = environ.get("SystemRoot") or environ.get("SYSTEMROOT") or environ.get("windir")
    if root:
        dirs.append(os.path.join(root, "System32"))
    return list(dict.fromkeys(dirs))


def vc_runtime(dirs: List[str]) -> List[RuntimeDll]:
    """Each runtime DLL's first copy in `dirs`, its version, and the copies after it."""
    out = []
    for name in RUNTIME_DLLS:
        found = [os.path.join(d, name) for d in dirs if os.path.isfile(os.path.join(d, name))]
        dll = RuntimeDll(name)
        if found:
            dll.path, dll.version = found[0], pe.file_version(found[0])
            dll.others = [f"{p} ({pe.file_version(p) or '?'})" for p in found[1:]]
        out.append(dll)
    return out


def msvc_built(torch_path: Optional[str], triton_path: Optional[str]) -> Dict[str, str]:
    """The linker version of torch's c10.dll and Triton's libtriton.pyd, where they are."""
    out: Dict[str, str] = {}
    for (package, relative), root in zip(BUILT, (torch_path, triton_path)):
        if root:
            version = pe.linker_version(os.path.join(root, relative))
            if version:
                out[f"{package}/{relative.replace(os.sep, '/')}"] = f"{version[0]}.{version[1]}"
    return out


def gather_windows(environ: Mapping[str, str], torch_path: Optional[str] = None,
                   triton_path: Optional[str] = None, system_facts: bool = True,
                   python_executable: Optional[str] = None) -> WindowsInfo:
    """The Windows section. `system_facts=False` leaves the registry and the code pages unread (they
    exist only on Windows); everything else is files and `environ`."""
    info = WindowsInfo()
    if system_facts:
        try:
            info.long_paths_enabled = long_paths_enabled()
            info.ansi_code_page, info.oem_code_page, info.ui_language = code_pages()
        except (OSError, AttributeError, ValueError) as exc:
            info.notes.append(f"registry or code pages unreadable: {type(exc).__name__}: {exc}")
    info.vscmd_host_arch = environ.get("VSCMD_ARG_HOST_ARCH") or None
    info.vscmd_tgt_arch = environ.get("VSCMD_ARG_TGT_ARCH") or None
    info.vc_tools_install_dir = environ.get("VCToolsInstallDir") or None
    info.vc_tools_version = environ.get("VCToolsVersion") or None
    info.include_set = bool((environ.get("INCLUDE") or "").strip(" ;"))
    info.lib_set = bool((environ.get("LIB") or "").strip(" ;"))
    info.vslang = environ.get("VSLANG") or None
    info.cl_on_path = find_on_path(environ)
    if info.cl_on_path:
        info.cl_host, info.cl_target, info.cl_version = parse_cl_path(info.cl_on_path)
        info.cl_languages = cl_languages(os.path.dirname(info.cl_on_path))
    info.toolsets = toolsets(environ)
    info.cc, info.cxx = environ.get("CC") or None, environ.get("CXX") or None
    info.cc_problem = compiler_problem(info.cc, environ)
    info.cxx_problem = compiler_problem(info.cxx, environ)
    if triton_path:
        tcc = os.path.join(triton_path, "runtime", "tcc", "tcc.exe")
        info.tcc = tcc if os.path.isfile(tcc) else None
    info.triton_long_paths, info.triton_temp_dir = triton_cache_paths(triton_path)
    info.inductor_cl = read_inductor_cl_command(torch_path)
    info.vc_runtime = vc_runtime(runtime_dirs(python_executable, torch_path, environ))
    info.msvc_built = msvc_built(torch_path, triton_path)
    return info
