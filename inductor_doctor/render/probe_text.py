"""The probe as a person reads it: one short section per component, problems marked, notes dimmed.

`probe_to_text` is a pure function of the facts (a `Facts`, or its `to_dict()` as it sits in a
report's `environment`). Colour is used only when asked for, or, by default, when stdout is a
terminal and `NO_COLOR` is unset, so logs and pipes get plain text.
"""

from __future__ import annotations

import io
import os
from typing import Any, List, Mapping, Optional, Tuple, Union

from rich.console import Console
from rich.table import Table
from rich.text import Text

from inductor_doctor.render.style import BAD, DIM, GOOD, STATUS, WARN, use_color

Row = Tuple[str, Union[str, Text]]


def _yes_no(value: Optional[bool], good: bool = True) -> Text:
    if value is None:
        return Text("unknown", style=DIM)
    ok = value if good else not value
    return Text("yes" if value else "no", style=GOOD if ok else BAD)


def _v(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def _python(py: Mapping[str, Any]) -> List[Row]:
    if py.get("error"):
        return [("interpreter", _v(py.get("executable"))), ("error", Text(str(py["error"]), style=BAD))]
    impl = py.get("implementation") or "cpython"
    flags = f", abiflags {py['abiflags']!r}" if py.get("abiflags") else ""
    rows: List[Row] = [
        ("interpreter", f"{py.get('executable')}"),
        ("version", f"{py.get('version')} ({impl}{flags})"),
        ("platform", f"{_v(py.get('platform'))} {_v(py.get('machine'))}, glibc {_v(py.get('glibc'))}"),
    ]
    if py.get("prefix") and py.get("prefix") != py.get("base_prefix"):
        rows.append(("environment", f"{py['prefix']} (base {py.get('base_prefix')})"))
    std = py.get("libstdcxx_path")
    rows.append((
        "libstdc++",
        f"{std} (GLIBCXX {_v(py.get('libstdcxx_glibcxx_max'))}, CXXABI {_v(py.get('libstdcxx_cxxabi_max'))})"
        if std else Text("not found", style=WARN),
    ))
    h = py.get("has_python_h")
    rows.append(("Python.h", Text.assemble(_yes_no(h), f"  {_v(py.get('include_dir'))}")))
    return rows


def _torch(t: Optional[Mapping[str, Any]]) -> List[Row]:
    if t is None:
        return [("", Text("not installed", style=DIM))]
    build = f"CUDA {t['cuda']}" if t.get("cuda") else f"ROCm/HIP {t['hip']}" if t.get("hip") else "CPU only"
    rows: List[Row] = [
        ("version", f"{_v(t.get('version'))} ({build})"),
        ("path", _v(t.get("path"))),
        ("git", _v(t.get("git_version"))),
        ("C++11 ABI", _v(None if t.get("cxx11_abi") is None else int(bool(t["cxx11_abi"])))),
        ("built with", _v(t.get("built_with"))),
        ("triton pin", _v(t.get("triton_requirement"))),
    ]
    if t.get("cuda_arch_list"):
        source = os.path.basename(str(t.get("cuda_arch_source") or "")) or "-"
        rows.append(("GPU archs", f"{' '.join(t['cuda_arch_list'])}  (from {source})"))
    if t.get("import_ok") is not None:
        rows.append((
            "import torch",
            Text("ok", style=GOOD) if t["import_ok"] else Text(f"FAILS: {t.get('import_error')}", style=BAD),
        ))
    return rows


def _triton(tr: Optional[Mapping[str, Any]], torch: Optional[Mapping[str, Any]]) -> List[Row]:
    if tr is None:
        pinned = torch and torch.get("triton_pin")
        return [("", Text("not installed" + (f" (torch pins {pinned})" if pinned else ""),
                          style=WARN if pinned else DIM))]
    version = Text(f"{_v(tr.get('version'))} ({_v(tr.get('distribution'))})")
    pin = torch.get("triton_pin") if torch else None
    if pin and tr.get("version"):
        if _satisfies(str(tr["version"]), str(pin)) is False:
            version.append(f"  torch pins {pin}", style=BAD)
        else:
            version.append(f"  torch pins {pin}", style=DIM)
    rows: List[Row] = [("version", version), ("path", _v(tr.get("path")))]
    if tr.get("bundled_ptxas"):
        rows.append(("bundled ptxas", f"{tr['bundled_ptxas']} ({_v(tr.get('bundled_ptxas_version'))})"))
    if tr.get("import_ok") is not None:
        failed = Text(f"FAILS: {tr.get('import_error')}", style=BAD)
        rows.append(("import triton", Text("ok", style=GOOD) if tr["import_ok"] else failed))
    return rows


def _satisfies(version: str, spec: str) -> Optional[bool]:
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except Exception:
        return None


def _cuda(c: Mapping[str, Any]) -> List[Row]:
    rows: List[Row] = [
        ("driver", f"{_v(c.get('driver_version'))} (supports CUDA {_v(c.get('driver_cuda_version'))})"),
        ("runtime", _v(c.get("runtime_version"))),
    ]
    if c.get("cudnn_version"):
        rows.append(("cuDNN", str(c["cudnn_version"])))
    rows.append(("ptxas", f"{_v(c.get('ptxas_path'))} ({_v(c.get('ptxas_version'))})"))
    libcuda = c.get("libcuda_paths") or []
    if libcuda:
        plain = c.get("libcuda_so_unversioned")
        rows.append(("libcuda", Text.assemble(", ".join(libcuda), "  libcuda.so: ", _yes_no(plain))))
    gpus = c.get("gpus") or []
    rows += _visibility(c)
    if not gpus:
        driver = len(c.get("driver_gpus") or [])
        rows.append(("GPUs", Text(f"none visible to torch (the driver lists {driver})", style=BAD)
                     if driver else Text("none", style=DIM)))
    for g in gpus:
        mem = f"{g['memory_mib'] / 1024:.0f} GiB" if g.get("memory_mib") else "? GiB"
        sms = f", {g['sm_count']} SMs" if g.get("sm_count") else ""
        line = Text(f"{g.get('name')}, sm {_v(g.get('sm'))}, {mem}{sms}")
        if g.get("driver_index") is not None and g.get("driver_index") != g.get("index"):
            line.append(f"  (nvidia-smi GPU {g['driver_index']})", style=DIM)
        if g.get("big_gpu") is False:
            line.append("  not a 'big GPU' for Inductor (max-autotune GEMM templates off)", style=WARN)
        rows.append((f"cuda:{g.get('index')}", line))
    rows += _cuda_libs(c.get("libs") or [])
    return rows


# --- GPU/CUDA catalog: visibility, the CUDA libraries an import maps, the toolkit -------------------


def _visibility(c: Mapping[str, Any]) -> List[Row]:
    var = c.get("visible_devices")
    if var is None:
        return []
    driver, seen = len(c.get("driver_gpus") or []), len(c.get("gpus") or [])
    line = Text(f"{var!r}: torch sees {seen} of the driver's {driver} GPUs")
    for why in c.get("visibility") or []:
        line.append(f"  {why}", style=WARN)
    return [("CUDA_VISIBLE_DEVICES", line)]


def _cuda_libs(libs: List[Mapping[str, Any]]) -> List[Row]:
    if not libs:
        return []
    foreign = [lib for lib in libs if lib.get("resolved") != lib.get("wheel")]
    if not foreign:
        return [("CUDA libraries", Text(f"{len(libs)} from torch's nvidia-* wheels", style=GOOD))]
    rows: List[Row] = []
    for lib in foreign:
        line = Text(f"{_v(lib.get('resolved'))} (via {_v(lib.get('via'))}), not the wheel's",
                    style=BAD if lib.get("missing_symbols") or not lib.get("resolved") else WARN)
        if lib.get("missing_symbols"):
            line.append(f"; lacks {', '.join(lib['missing_symbols'][:2])}", style=BAD)
        rows.append((str(lib.get("soname")), line))
    return rows


def _toolkit(tk: Optional[Mapping[str, Any]], torch: Optional[Mapping[str, Any]]) -> List[Row]:
    if not tk:
        return [("", Text("not probed", style=DIM))]
    if not tk.get("cuda_home"):
        return [("CUDA_HOME", Text("none (no CUDA_HOME, CUDA_PATH, nvcc on PATH or /usr/local/cuda): "
                                   "AOTInductor and CUDA extensions cannot build", style=WARN))]
    home = Text(f"{tk['cuda_home']}  ({_v(tk.get('source'))})")
    if tk.get("cuda_home_exists") is False:
        home.append("  does not exist", style=BAD)
    nvcc = Text(f"{_v(tk.get('nvcc'))} ({_v(tk.get('nvcc_version'))})")
    wanted = torch.get("cuda") if torch else None
    have = str(tk.get("nvcc_version") or "")
    if wanted and have and have.split(".")[0] != str(wanted).split(".")[0]:
        nvcc.append(f"  torch was built with CUDA {wanted}", style=WARN)
    return [("CUDA_HOME", home), ("nvcc", nvcc),
            ("cuda_runtime.h", Text.assemble(_yes_no(bool(tk.get("cuda_runtime_h"))),
                                             f"  {_v(tk.get('cuda_runtime_h'))}"))]


def _compiler(c: Mapping[str, Any], openmp: bool) -> List[Row]:
    if not c.get("path"):
        return [("command", _v(c.get("command"))), ("error", Text(_v(c.get("error")), style=BAD))]
    rows: List[Row] = [
        ("command", f"{c.get('command')} -> {c.get('path')}  ({_v(c.get('chosen_by'))})"),
        ("version", f"{_v(c.get('kind'))} {_v(c.get('version'))}"),
        ("works", _yes_no(c.get("works"))),
    ]
    if openmp:
        rows.append(("OpenMP", _yes_no(c.get("openmp"))))
    rows.append(("Python.h", _yes_no(c.get("python_h"))))
    if c.get("error"):
        rows.append(("error", Text(str(c["error"]), style=BAD)))
    return rows


def _abi(a: Mapping[str, Any]) -> List[Row]:
    status = a.get("status") or "not checked"
    verdict = Text(status, style=STATUS.get(status, DIM))
    if a.get("cached"):
        verdict.append("  (remembered: same compiler, flags and torch files as an earlier run)", style=DIM)
    return [("verdict", verdict), ("reason", _v(a.get("reason")))]


def _xla(x: Optional[Mapping[str, Any]]) -> List[Row]:
    if x is None:
        return [("", Text("not installed", style=DIM))]
    return [("version", _v(x.get("version"))), ("path", _v(x.get("path"))),
            ("PJRT_DEVICE", _v(x.get("pjrt_device")))]


def _caches(c: Optional[Mapping[str, Any]]) -> List[Row]:
    if not c:
        return [("", Text("not probed", style=DIM))]
    rows: List[Row] = []
    for d in c.get("dirs") or []:
        problems = []
        if d.get("writable") is False:
            problems.append("not writable")
        if "noexec" in (d.get("mount_options") or []):
            problems.append("noexec mount")
        line = Text(f"{d.get('path')}  ({_v(d.get('source'))})")
        line.append("  " + ", ".join(problems) if problems else "  ok", style=BAD if problems else GOOD)
        rows.append((str(d.get("name")), line))
    return rows


def _env(env: Mapping[str, str]) -> List[Row]:
    rows = [(k, v) for k, v in env.items() if k != "PATH"]
    return rows or [("", Text("none of the variables that matter is set", style=DIM))]


def _table(console: Console, title: str, rows: List[Row], notes: List[str]) -> None:
    table = Table(title=title, title_justify="left", title_style="bold", show_header=False, box=None,
                  pad_edge=False)
    table.add_column("field", style=DIM, no_wrap=True)
    table.add_column("value", overflow="fold")
    for name, value in rows:
        table.add_row(name, value)
    for note in notes:
        table.add_row("note", Text(note, style=DIM))
    console.print(table)
    console.print()


def render(data: Mapping[str, Any], **_: Any) -> str:
    """The `probe` document: its environment, sectioned, and how long probing took."""
    env = dict(data.get("environment") or {})
    env["duration_s"] = (data.get("meta") or {}).get("duration_s", env.get("duration_s"))
    return probe_to_text(env)


def probe_to_text(facts: Any, color: Optional[bool] = None, width: int = 110) -> str:
    """A sectioned, readable probe report (from `Facts.to_dict()`). Pure: the same facts, the same text."""
    d: Mapping[str, Any] = facts.to_dict() if hasattr(facts, "to_dict") else facts  # type: ignore[union-attr]
    color = use_color() if color is None else color
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=width,
                      color_system="standard" if color else None, highlight=False, soft_wrap=False)
    torch = d.get("torch")

    def part(key: str) -> Mapping[str, Any]:
        return d.get(key) or {}

    def notes(key: str) -> List[str]:
        return list(part(key).get("notes") or [])

    sections = [
        ("Python", _python(part("python")), notes("python")),
        ("torch", _torch(torch), notes("torch")),
        ("Triton", _triton(d.get("triton"), torch), notes("triton")),
        ("CUDA", _cuda(part("cuda")), notes("cuda")),
        ("CUDA toolkit (AOTInductor, extensions)", _toolkit(d.get("toolkit"), torch), notes("toolkit")),
        ("C++ compiler (Inductor)", _compiler(part("cxx"), True), notes("cxx")),
        ("C compiler (Triton launcher)", _compiler(part("cc"), False), notes("cc")),
        ("const_data_ptr ABI", _abi(part("abi")), []),
        ("torch_xla", _xla(d.get("xla")), notes("xla")),
        ("Code caches", _caches(d.get("caches")), notes("caches")),
        ("Environment", _env(part("env")), []),
    ]
    for title, rows, notes in sections:
        _table(console, title, rows, [n for n in notes if not n.startswith("libtorch_cpu.so .comment")])
    how = "static + live" if d.get("live") is not None else "static (add --live for what only torch knows)"
    console.print(Text(f"probed in {float(d.get('duration_s') or 0):.2f}s, {how}", style=DIM))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
