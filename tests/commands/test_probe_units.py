"""Fast tests of the probe's parts on real inputs: real files, real processes, real ELF libraries."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from inductor_doctor.check.environment import environment_of
from inductor_doctor.core.facts import AbiInfo, CudaInfo, Facts, GPUInfo, PythonInfo, TorchInfo
from inductor_doctor.probe import _elf, compiler, cuda, live, relevant_env, target, torch_build
from inductor_doctor.probe._proc import run
from inductor_doctor.render.probe_text import probe_to_text

TORCH_DIR = Path(target.query(sys.executable)["modules"]["torch"])


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Remembered compiler answers go to a throwaway directory, never the user's cache."""
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("INDUCTOR_DOCTOR_NO_CACHE", raising=False)


def test_run_kills_a_hung_process_group_at_the_deadline():
    start = time.monotonic()
    res = run(["sh", "-c", "sleep 30 & sleep 30"], timeout_s=0.5)
    assert res.timed_out and not res.ok
    assert time.monotonic() - start < 5


def test_run_reports_a_missing_program_instead_of_raising():
    res = run(["/nonexistent/compiler", "--version"])
    assert res.error and "cannot run" in res.error and not res.ok


def test_target_query_of_this_interpreter():
    t = target.query(sys.executable)
    assert t["version"] == ".".join(str(n) for n in sys.version_info[:3])
    assert t["modules"]["torch"] == str(TORCH_DIR)
    assert "torch" in t["packages"]


def test_target_script_runs_on_the_oldest_supported_syntax():
    """Everything the target interpreter runs parses as Python 3.8."""
    import ast

    from inductor_doctor.target import TARGET_DIR

    scripts = sorted(TARGET_DIR.rglob("*.py"))
    assert {"describe.py", "live.py", "harness.py", "gather.py"} <= {p.name for p in scripts}
    for path in scripts:
        ast.parse(path.read_text(), filename=str(path), feature_version=(3, 8))


def test_target_ignores_a_shadowing_torch_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise SystemExit('imported the wrong torch')\n")
    monkeypatch.chdir(tmp_path)
    t = target.query(sys.executable)
    assert t["modules"]["torch"] == str(TORCH_DIR)


def test_read_version_py_parses_without_executing(tmp_path):
    p = tmp_path / "version.py"
    p.write_text(
        "from typing import Optional\nimport os\nos.system('false')\n"
        "__version__ = '2.9.0+cu128'\ncuda: Optional[str] = '12.8'\nhip = None\n"
    )
    v = torch_build.read_version_py(str(p))
    assert v == {"__version__": "2.9.0+cu128", "cuda": "12.8", "hip": None}


@pytest.mark.parametrize(
    "requires,line",
    [
        (["filelock", 'triton==3.6.0; platform_system == "Linux"'],
         'triton==3.6.0; platform_system == "Linux"'),
        (['triton (==3.1.0) ; platform_system == "Linux"'], 'triton (==3.1.0) ; platform_system == "Linux"'),
        (['pytorch-triton-rocm==3.1.0; platform_system == "Linux"'],
         'pytorch-triton-rocm==3.1.0; platform_system == "Linux"'),
        (["filelock", "tritonclient>=2"], None),
        (None, None),
    ],
)
def test_triton_requirement(requires, line):
    assert torch_build.triton_requirement(requires) == line


def test_cxx11_abi_from_libc10():
    flag, how = torch_build.cxx11_abi(str(TORCH_DIR))
    assert flag is True and "libc10.so" in how


def test_symbol_index_uses_the_hash_table():
    lib = str(TORCH_DIR / "lib" / "libtorch_cpu.so")
    start = time.monotonic()
    with _elf.open_elf(lib) as elf:
        index = _elf.SymbolIndex(elf)
        assert index.usable
        assert index.defines("_ZNK2at10TensorBase14const_data_ptrIlEEPKT_v")
        assert not index.defines("_ZNK2at10TensorBase14const_data_ptrIlLi0EEEPKT_v")
        assert not index.defines("definitely_not_a_symbol")
    # A Python scan of libtorch_cpu's ~300k dynamic symbols takes many seconds; a lookup does not.
    assert time.monotonic() - start < 2


def test_libstdcxx_versions_from_version_definitions():
    from inductor_doctor.probe import loader

    path = loader.find_library("libstdc++.so.6", {"machine": "x86_64"})
    assert path
    glibcxx, cxxabi = loader.libstdcxx_versions(path)
    assert glibcxx and glibcxx.startswith("3.4.")
    assert cxxabi and cxxabi.startswith("1.3.")


def test_max_version_compares_numerically():
    assert _elf.max_version(["GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "GLIBCXX_3.4", "CXXABI_1.3.13"],
                            "GLIBCXX") == "3.4.30"
    assert _elf.max_version(["GLIBCXX_3.4.9"], "CXXABI") is None


def test_built_with_prefers_the_main_compiler():
    comments = ["GCC: (GNU) 13.3.1 20240611 (Red Hat 13.3.1-2)",
                "Intel(R) oneAPI DPC++/C++ Compiler 2024.2.0", "GCC: (GNU) 7.5.0"]
    assert _elf.built_with(comments) == "GCC 13.3.1"
    assert _elf.built_with(["Ubuntu clang version 18.1.3 (1ubuntu1)"]) == "clang 18.1.3"


def test_nvidia_smi_csv_parsing():
    text = ("0, NVIDIA H100 80GB HBM3, 9.0, 81559, GPU-aaaa\n"
            "1, NVIDIA GeForce GTX 1080, 6.1, 8192, GPU-bbbb\n")
    gpus = cuda.parse_gpu_csv(text)
    assert [(g.index, g.name, g.sm, g.memory_mib, g.uuid) for g in gpus] == [
        (0, "NVIDIA H100 80GB HBM3", "9.0", 81559, "GPU-aaaa"),
        (1, "NVIDIA GeForce GTX 1080", "6.1", 8192, "GPU-bbbb"),
    ]
    assert gpus[0].device == "cuda:0"


#: What `nvidia-smi -q -d COMPUTE` printed on a 4 x H100 host (driver 580.159.04), and the bare banner's
#: first lines on the same driver: the probe reads the driver and its CUDA version from either.
SMI_Q_COMPUTE = """
==============NVSMI LOG==============

Timestamp                                              : Fri Nov 27 20:46:48 2026
Driver Version                                         : 580.159.04
CUDA Version                                           : 13.0

Attached GPUs                                          : 4
GPU 00000000:00:06.0
    Compute Mode                                       : Default
"""
SMI_BANNER = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
"""


@pytest.mark.parametrize("text", [SMI_Q_COMPUTE, SMI_BANNER], ids=["q-compute", "banner"])
def test_the_driver_header_is_read_from_either_form(text):
    m = cuda._SMI_HEADER.search(text)
    assert m and m.groups() == ("580.159.04", "13.0")


def test_driver_version_from_proc(tmp_path):
    p = tmp_path / "version"
    p.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build\n"
                 "GCC version:  gcc version 13.3.0\n")
    assert cuda.driver_from_proc(str(p)) == "580.159.03"
    assert cuda.driver_from_proc(str(tmp_path / "absent")) is None


def test_no_gpu_degrades_to_empty():
    if Path(cuda.PROC_VERSION).exists():
        pytest.skip("this machine has an NVIDIA driver")
    info = cuda.driver_info({"PATH": "/usr/bin:/bin"})
    assert info.gpus == [] and info.driver_version is None and info.notes


def test_cudnn_version_spelling():
    assert live._cudnn(90100) == "9.1.0"
    assert live._cudnn(8902) == "8.9.2"


def test_inductor_compiler_choice_mirrors_torch():
    assert compiler.inductor_cxx_candidates({}) == (("g++", "config.cpp.cxx default"),)
    assert compiler.inductor_cxx_candidates({"CXX": "clang++-19"})[-1] == ("clang++-19", "CXX")
    gxx = compiler.inductor_cxx_candidates({"TORCH_INDUCTOR_INSTALL_GXX": "1",
                                            "TORCHINDUCTOR_CACHE_DIR": "/c"})
    assert gxx[0] == ("/c/gcc/bin/g++", "TORCH_INDUCTOR_INSTALL_GXX")
    assert compiler.extension_cxx({}) == ("c++", "cpp_extension default")
    assert compiler.triton_cc({"CC": "clang"}) == ("clang", "CC")


def test_missing_compiler_is_reported_not_raised():
    info = compiler.inductor_cxx(None, dict(os.environ, CXX="no-such-compiler++"))
    assert info.works is False
    assert "No working C++ compiler found" in (info.error or "")
    cc = compiler.triton_cc_info(None, {"PATH": "/nonexistent"})
    assert cc.works is False and "Failed to find C compiler" in (cc.error or "")


def _fake_compiler(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-g++"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_hanging_compiler_does_not_hang_the_probe(tmp_path):
    cxx = _fake_compiler(tmp_path, 'if [ "$1" = --version ]; then echo "g++ (fake) 12.2.0"; exit 0; fi\n'
                                   "exec sleep 60\n")
    start = time.monotonic()
    info = compiler.inductor_cxx("/usr/include", dict(os.environ, CXX=cxx), timeout_s=1)
    elapsed = time.monotonic() - start
    assert info.path == cxx and info.kind == "gcc" and info.version == "12.2.0"
    assert info.works is False and "timed out" in (info.error or "")
    assert info.openmp is False
    assert elapsed < 10


def test_compiler_answers_are_cached_per_binary(tmp_path):
    counter = tmp_path / "calls"
    cxx = _fake_compiler(tmp_path, f'echo x >> {counter}\n'
                                   'if [ "$1" = --version ]; then echo "g++ (fake) 12.2.0"; fi\nexit 0\n')
    first = compiler.try_compile(cxx, "int x;\n", "c++", ("-c",))
    calls = counter.read_text().count("x")
    second = compiler.try_compile(cxx, "int x;\n", "c++", ("-c",))
    assert first == second == (True, None)
    assert counter.read_text().count("x") == calls


def test_successes_are_remembered_on_disk_failures_are_not(tmp_path, monkeypatch):
    counter = tmp_path / "calls"
    cxx = _fake_compiler(tmp_path, f'echo x >> {counter}\n'
                                   'case "$*" in *fail*) exit 1;; esac\nexit 0\n')

    def calls() -> int:
        return counter.read_text().count("x") if counter.exists() else 0

    assert compiler.try_compile(cxx, "ok", "c++", ("-c",)) == (True, None)
    assert compiler.try_compile(cxx, "x", "c++", ("-fail",))[0] is False
    before = calls()
    monkeypatch.setattr(compiler, "_tests", {})  # a new process: only the disk remembers
    assert compiler.try_compile(cxx, "ok", "c++", ("-c",)) == (True, None)
    assert calls() == before, "the success came from the disk"
    assert compiler.try_compile(cxx, "x", "c++", ("-fail",))[0] is False
    assert calls() == before + 1, "the failure was asked again"
    monkeypatch.setenv("INDUCTOR_DOCTOR_NO_CACHE", "1")
    monkeypatch.setattr(compiler, "_tests", {})
    compiler.try_compile(cxx, "ok", "c++", ("-c",))
    assert calls() == before + 2, "INDUCTOR_DOCTOR_NO_CACHE re-asks"


def test_relevant_env_keeps_toolchain_variables_and_drops_secrets():
    env = relevant_env({"CXX": "clang++", "TORCHINDUCTOR_CACHE_DIR": "/x", "HF_TOKEN": "s3cret",
                        "TORCH_API_KEY": "s3cret", "HOME": "/root", "TRITON_PTXAS_PATH": "/p"})
    assert env == {"CXX": "clang++", "TORCHINDUCTOR_CACHE_DIR": "/x", "TRITON_PTXAS_PATH": "/p"}


def test_facts_round_trip_through_json():
    facts = Facts(
        python=PythonInfo(executable="/py", version="3.11.7"),
        torch=TorchInfo(version="2.9.0", notes=["n"]),
        cuda=CudaInfo(gpus=[GPUInfo(index=0, name="H100", sm="9.0", sm_count=132)]),
        abi=AbiInfo(stage="compared", referenced=["a"]),
    )
    again = Facts.from_dict(facts.to_dict())
    assert again == facts
    assert again.gpus[0].device == "cuda:0"


def test_live_merge_prefers_live_values():
    facts = Facts(python=PythonInfo(executable="/py", version="3.11.7"),
                  torch=TorchInfo(version="2.13.0", cxx11_abi=None),
                  cuda=CudaInfo(gpus=[GPUInfo(index=0, name="H100", sm="9.0", memory_mib=81559)]))
    live.merge(facts, {
        "stage": "done", "import_ok": True, "torch_version": "2.13.0+cu130", "cxx11_abi": True,
        "cuda_version": "13.0", "cudnn_version": 91900, "cudart_version": "13.0",
        "devices": [{"index": 0, "name": "NVIDIA H100", "sm": "9.0", "memory_mib": 81000, "sm_count": 132}],
        "big_gpu": [True], "triton": {"import_ok": True, "version": "3.6.0", "path": "/t"},
    })
    assert facts.torch.import_ok is True and facts.torch.cxx11_abi is True
    assert facts.torch.version == "2.13.0+cu130" and facts.torch.cuda == "13.0"
    g = facts.gpus[0]
    assert (g.name, g.sm_count, g.big_gpu, g.memory_mib) == ("NVIDIA H100", 132, True, 81559)
    assert facts.cuda.cudnn_version == "9.19.0" and facts.cuda.runtime_version == "13.0"
    assert facts.triton is not None and facts.triton.version == "3.6.0"


def test_live_merge_of_a_crash_during_import():
    facts = Facts(python=PythonInfo(executable="/py", version="3.11.7"), torch=TorchInfo(version="2.9.0"))
    live.merge(facts, {"stage": "import torch", "import_ok": False,
                       "import_error": "import torch: the process died with SIGSEGV at `import torch`",
                       "probe_error": "the process died with SIGSEGV at `import torch`"})
    assert facts.torch.import_ok is False and "SIGSEGV" in facts.torch.import_error


def test_live_probe_reports_a_segfaulting_import(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("import ctypes\nctypes.string_at(0)\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    answer = live.query(sys.executable, timeout_s=60)
    assert answer["import_ok"] is False
    assert "SIGSEGV" in answer["import_error"]


def test_probe_to_text_is_pure_and_honours_colour():
    facts = Facts(python=PythonInfo(executable="/py", version="3.11.7", glibc="2.36"),
                  torch=TorchInfo(version="2.9.0", import_ok=False, import_error="ImportError: boom"),
                  abi=AbiInfo(stage="compared", compiler="clang++-19", flags=["-std=c++17"],
                              referenced=["X"], missing=["X"]))
    environment = environment_of(facts)
    plain = probe_to_text(environment, color=False)
    assert plain == probe_to_text(environment_of(facts), color=False)
    assert "\x1b[" not in plain
    for needle in ("Python", "torch", "FAILS: ImportError: boom", "const_data_ptr ABI", "affected",
                   "clang++-19 with -std=c++17 references X", "not installed"):
        assert needle in plain
    assert "\x1b[" in probe_to_text(environment, color=True)


def test_probe_to_text_default_follows_no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    facts = Facts(python=PythonInfo(executable="/py", version="3.11.7"))
    assert "\x1b[" not in probe_to_text(facts)


@pytest.mark.parametrize(
    "cxx,split",
    [("clang++-19", ("clang++-19", [])), ("ccache clang++ -m64", ("clang++", ["-m64"])),
     ("/usr/bin/sccache /opt/llvm/bin/clang++", ("/opt/llvm/bin/clang++", [])), ("ccache", (None, []))],
)
def test_abi_probe_runs_the_compiler_behind_a_launcher(cxx, split):
    from inductor_doctor.probe.abi import _split_command

    assert _split_command(cxx) == split


def test_abi_probe_uses_the_std_of_torchs_cpp_extension():
    from inductor_doctor.probe.abi import extension_std

    assert extension_std(str(TORCH_DIR)) == "c++20"
    assert extension_std(None) == "c++17"


def test_the_late_stage_is_a_new_snapshot_and_the_first_stays_as_it_was():
    """check decides on the whole facts, and the canaries' keys rest on the static ones: the live
    probe and the deferred ABI compile return new facts instead of patching the first."""
    import copy

    from inductor_doctor.probe import LiveProbe, gather

    late = LiveProbe(sys.executable)
    first = gather(sys.executable, live_probe=late)
    before = copy.deepcopy(first.to_dict())
    assert first.abi.stage == "pending" and first.live is None
    whole = late.finish(first)
    assert first.to_dict() == before
    assert whole is not first and whole.abi.stage == "compared"
    assert whole.live is not None and whole.torch is not None and whole.torch.import_ok is True


def test_the_probe_plan_runs_each_step_once_what_it_needs_is_known():
    from inductor_doctor.probe import GIVEN, Step, plan, run_plan

    order: list = []

    def step(name: str, *needs: str) -> Step:
        return Step(name, needs, lambda *got: order.append(name) or (name, got))

    answers, notes = run_plan([step("c", "a", "b"), step("a", "x"), step("b", "a")], {"x": 1})
    assert order == ["a", "b", "c"] and notes == []
    assert answers["c"] == ("c", (("a", (1,)), ("b", (("a", (1,)),))))
    failing = Step("d", ("x",), lambda x: 1 / 0, lambda m, known: f"fallback beside {known['x']}", "d")
    answers, notes = run_plan([failing], {"x": 1})
    assert answers["d"] == "fallback beside 1"
    assert notes == ["d probe failed: ZeroDivisionError: division by zero"]
    with pytest.raises(ValueError, match="needs nothing produces"):
        run_plan([step("e", "nowhere")], {})
    produced = {s.name for s in plan()} | set(GIVEN)
    assert all(n in produced for s in plan() for n in s.needs)
    from inductor_doctor.core.declare import walk

    sections = [e for e in walk(Facts) if len(e.path) == 1 and e.probe and e.cost != "live"]
    assert sections and all(e.probe in produced for e in sections), "a section no step produces"
