"""What a torch wheel says about the facts the known-issue rules rest on, read from its own files.

Each extractor takes the text of one file and returns a fact, or raises `Unreadable` when the file
is there but no longer has the shape the extractor knows: a refresh must stop and ask a human
rather than record a guess. A file that is absent is a fact too (`None`): torch 2.0 has no
`cpp_builder.py`, torch 2.12 dropped the GCC 9 `#error` from `C++17.h`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

#: The files read from every torch wheel (their sha256 goes into the snapshot).
FILES = (
    "torch/__init__.py",
    "torch/_dynamo/eval_frame.py",
    "torch/_inductor/cpp_builder.py",
    "torch/_inductor/codecache.py",
    "torch/include/c10/util/C++17.h",
    "torch/include/ATen/core/TensorBase.h",
    "torch/_inductor/utils.py",
    "torch/_inductor/scheduler.py",
    "torch/utils/cpp_extension.py",
    "torch/_inductor/config.py",
    "torch/_utils.py",
)


class Unreadable(Exception):
    """A file the audit reads has changed shape: update the extractor, do not guess."""


Read = Callable[[str], Optional[str]]

_REFUSE = re.compile(
    r"if sys\.version_info >= \((\d+),\s*(\d+)\):\s*raise RuntimeError\(\s*\"([^\"]*supported[^\"]*)\""
)
_GIL = re.compile(
    r"Py_GIL_DISABLED\"\)\s*==\s*1(?P<cond>\s*and\s*sys\.version_info\s*<\s*\(\s*(?P<a>\d+),\s*(?P<b>\d+),"
    r"\s*(?P<c>\d+),?\s*\))?\s*:\s*raise RuntimeError\(\s*(?P<msg>(?:\"[^\"]*\"\s*)+)\)"
)
_STD_DEFAULT = re.compile(r"def _get_cpp_std_cflag\(std_num: str = \"(c\+\+\d+)\"\)")
_CPP_FLAGS_FN = re.compile(r"^def cpp_flags\(.*?(?=^\S)", re.M | re.S)
_STD_FLAG = re.compile(r"-std=(c\+\+\d+)")
_GCC_FLOOR = re.compile(r"!defined\(__clang__\)[^#]*?__GNUC__ < (\d+)", re.S)
_CLANG_FLOOR = re.compile(r"defined\(__clang__\) && __clang_major__ < (\d+)")
_TYPED_CONST_DATA_PTR = re.compile(r"template\s*<(?P<params>[^;{}]*?)>\s*const T\* const_data_ptr\(\) const")
_JIT_STD = re.compile(r"cflags = common_cflags \+ \['-fPIC', '-std=(c\+\+\d+)'\]")
_MIN_SMS = re.compile(r"min_sms\s*=\s*(?:\d+\s+if\s+[^\n]*?\s+else\s+)?(\d+)")
_OLD_SMS = re.compile(r"(?:cores|sms)\s*<\s*(\d+)")


def _strings(literals: str) -> str:
    return "".join(re.findall(r"\"([^\"]*)\"", literals))


def dynamo_refusal(read: Read) -> Dict[str, Any]:
    """The first Python `torch.compile` refuses, from `torch/__init__.py` and Dynamo's own check.

    torch 2.0 has the check only in `_dynamo/eval_frame.py` (`check_if_dynamo_supported`, which
    `torch.compile` reaches through `torch._dynamo.optimize`); later releases have it in both.
    The lower of the two is the one a user meets.
    """
    found: List[Tuple[Tuple[int, int], int, str, str]] = []
    for order, name in enumerate(("torch/__init__.py", "torch/_dynamo/eval_frame.py")):
        text = read(name)
        if text is None:
            continue
        for m in _REFUSE.finditer(text):
            found.append(((int(m.group(1)), int(m.group(2))), order, name, m.group(3)))
    if not found:
        raise Unreadable("no `sys.version_info >= (3, N)` refusal in torch/__init__.py or eval_frame.py")
    (major, minor), _, name, message = min(found)
    return {"python": f"{major}.{minor}", "message": message, "file": name}


def free_threaded_gate(read: Read) -> Optional[Dict[str, Any]]:
    """How torch.compile treats a free-threaded (GIL-disabled) CPython: refused always, or below
    a patch release; None when the release has no such check."""
    for name in ("torch/__init__.py", "torch/_dynamo/eval_frame.py"):
        text = read(name) or ""
        m = _GIL.search(text)
        if m:
            gate = f"<{m.group('a')}.{m.group('b')}.{m.group('c')}" if m.group("cond") else "always"
            return {"refused": gate, "message": _strings(m.group("msg")).strip(), "file": name}
    if "Py_GIL_DISABLED" in (read("torch/__init__.py") or ""):
        raise Unreadable("torch/__init__.py mentions Py_GIL_DISABLED in a form the audit does not know")
    return None


def cxx_standard(read: Read) -> Dict[str, Any]:
    """The `-std=` Inductor compiles its C++ with on Linux."""
    builder = read("torch/_inductor/cpp_builder.py")
    if builder is not None:
        m = _STD_DEFAULT.search(builder)
        if m:
            return {"std": m.group(1), "file": "torch/_inductor/cpp_builder.py",
                    "where": "_get_cpp_std_cflag"}
    cache = read("torch/_inductor/codecache.py") or ""
    fn = _CPP_FLAGS_FN.search(cache)
    m = _STD_FLAG.search(fn.group(0)) if fn else None
    if m:
        return {"std": m.group(1), "file": "torch/_inductor/codecache.py", "where": "cpp_flags"}
    raise Unreadable("found neither _get_cpp_std_cflag nor cpp_flags' -std=")


def extension_std(read: Read) -> Dict[str, Any]:
    """The `-std=` torch.utils.cpp_extension compiles C++ extensions with on Linux (JIT builds)."""
    m = _JIT_STD.search(read("torch/utils/cpp_extension.py") or "")
    if not m:
        raise Unreadable("torch/utils/cpp_extension.py: no `common_cflags + ['-fPIC', '-std=...']`")
    return {"std": m.group(1), "file": "torch/utils/cpp_extension.py"}


def header_floor(read: Read) -> Dict[str, Any]:
    """The GCC / clang majors below which `c10/util/C++17.h` stops the build with `#error`."""
    text = read("torch/include/c10/util/C++17.h")
    if text is None:
        raise Unreadable("torch/include/c10/util/C++17.h is missing")
    gcc, clang = _GCC_FLOOR.search(text), _CLANG_FLOOR.search(text)
    if "__GNUC__ <" in text and not gcc or "__clang_major__ <" in text and not clang:
        raise Unreadable("C++17.h has a compiler check in a form the audit does not know")
    return {"gcc": int(gcc.group(1)) if gcc else None, "clang": int(clang.group(1)) if clang else None,
            "file": "torch/include/c10/util/C++17.h"}


def const_data_ptr(read: Read) -> Dict[str, Any]:
    """Whether `TensorBase::const_data_ptr<T>` carries an `enable_if` non-type template parameter
    (the form clang >= 18 mangles with `Tn`); None when the typed accessor does not exist."""
    text = read("torch/include/ATen/core/TensorBase.h")
    if text is None:
        raise Unreadable("torch/include/ATen/core/TensorBase.h is missing")
    decls = [m.group("params") for m in _TYPED_CONST_DATA_PTR.finditer(text)]
    if not decls:
        if "const_data_ptr" in text and "const T* const_data_ptr" in text:
            raise Unreadable("TensorBase.h declares const_data_ptr<T> in a form the audit does not know")
        return {"enable_if": None, "file": "torch/include/ATen/core/TensorBase.h", "declaration": None}
    with_enable_if = ["enable_if" in d for d in decls]
    if len(set(with_enable_if)) != 1:
        raise Unreadable("TensorBase.h declares const_data_ptr<T> both with and without enable_if")
    return {"enable_if": with_enable_if[0], "file": "torch/include/ATen/core/TensorBase.h",
            "declaration": "template <" + " ".join(decls[0].split()) + ">"}


def is_big_gpu_sms(read: Read) -> int:
    """The SM count below which `is_big_gpu` turns max-autotune GEMM templates off (CUDA)."""
    text = read("torch/_inductor/utils.py") or ""
    start = text.find("def is_big_gpu")
    if start < 0:
        raise Unreadable("torch/_inductor/utils.py has no is_big_gpu")
    body = text[start : start + 3000]
    m = _MIN_SMS.search(body) or _OLD_SMS.search(body)
    if not m:
        raise Unreadable("is_big_gpu has no SM threshold the audit can read")
    return int(m.group(1))


def min_capability(read: Read) -> int:
    """The CUDA major capability below which Inductor refuses the GPU (GPUTooOldForTriton)."""
    text = read("torch/_inductor/scheduler.py") or ""
    for marker in ("raise GPUTooOldForTriton", "too old to be supported by the triton"):
        at = text.find(marker)
        if at >= 0:
            m = list(re.finditer(r"\.major\s*<\s*(\d+)", text[max(0, at - 400) : at]))
            if m:
                return int(m[-1].group(1))
    raise Unreadable("torch/_inductor/scheduler.py has no capability check the audit can read")


_DECIDE = re.compile(r"^def decide_compile_threads\(.*?(?=^\S)", re.M | re.S)
_CAP = re.compile(r"min\(\s*(\d+)\s*,")
_ASSIGNED = re.compile(r"^compile_threads\s*=\s*\(.*?^\)", re.M | re.S)  # torch 2.0: no function
_UTILS_CPU_COUNT = re.compile(r"^def cpu_count\(.*?(?=^\S)", re.M | re.S)


def compile_threads(read: Read) -> Dict[str, Any]:
    """How Inductor sizes its compile worker pool when nothing sets it (`decide_compile_threads` in
    `torch/_inductor/config.py`): the variable that overrides it, the cap, and what it counts as the
    CPUs: the process's affinity (`os.sched_getaffinity`, which a container's CPU quota does not
    shrink: pytorch/pytorch#191385) or every CPU of the host (`os.cpu_count`), directly or through
    `torch._utils.cpu_count`; and whether it scales down on free memory (pytorch/pytorch#183003)."""
    name = "torch/_inductor/config.py"
    text = read(name) or ""
    m = _DECIDE.search(text) or _ASSIGNED.search(text)
    if not m:
        raise Unreadable(f"{name} has no decide_compile_threads (nor `compile_threads = (...)`) to read")
    body = m.group(0)
    cap = _CAP.search(body)
    if "cgroup" in body or "cpu.max" in body:
        raise Unreadable(f"{name}: decide_compile_threads reads cgroups now; teach the audit its rule")
    where = body
    source = name
    if "torch._utils.cpu_count()" in body:
        utils = _UTILS_CPU_COUNT.search(read("torch/_utils.py") or "")
        if not utils:
            raise Unreadable("torch/_utils.py has no cpu_count the audit can read")
        where, source = utils.group(0), f"{name}, torch/_utils.py"
    if "sched_getaffinity" in where:
        counts = "affinity"
    elif "os.cpu_count()" in where:
        counts = "cpu_count"
    else:
        raise Unreadable(f"{source}: decide_compile_threads counts CPUs neither by affinity nor os.cpu_count")
    if cap is None:
        raise Unreadable(f"{name}: decide_compile_threads has no min(N, ...) cap the audit can read")
    return {"env": "TORCHINDUCTOR_COMPILE_THREADS" if "TORCHINDUCTOR_COMPILE_THREADS" in body else None,
            "cap": int(cap.group(1)), "counts": counts, "memory_aware": "meminfo" in body, "file": source}


def from_metadata(meta: str) -> Dict[str, Any]:
    """Requires-Python and the Triton requirement (specifier and marker) of the wheel."""
    out: Dict[str, Any] = {"requires_python": None, "triton": None, "triton_marker": None}
    for line in meta.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Requires-Python":
            out["requires_python"] = value
        elif key == "Requires-Dist":
            req, _, marker = value.partition(";")
            m = re.match(r"^(pytorch-triton|triton)\s*\(?\s*([^)\s]*)\s*\)?\s*$", req.strip())
            if m:
                out["triton"] = m.group(2) or ""
                out["triton_marker"] = marker.strip() or None
    return out


def extract(read: Read, meta: str) -> Dict[str, Any]:
    facts = from_metadata(meta)
    facts["dynamo_refuses"] = dynamo_refusal(read)
    facts["free_threaded"] = free_threaded_gate(read)
    facts["cxx_std"] = cxx_standard(read)
    facts["header_floor"] = header_floor(read)
    facts["extension_std"] = extension_std(read)
    facts["const_data_ptr"] = const_data_ptr(read)
    facts["is_big_gpu_sms"] = is_big_gpu_sms(read)
    facts["min_capability"] = min_capability(read)
    facts["compile_threads"] = compile_threads(read)
    return facts
