"""`check --artifact` / `plan --artifact`: real artifacts, real loads, and the doctor's verdict on each.

The package and blob are built here with the test torch (cached per torch release under the test
envs folder: a build takes about a minute on two cores) and loaded for real, by this torch and by
the older releases of the heavy venvs, before the doctor's verdict is compared with what happened.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENVS, run_cli, run_json, venv_python

from inductor_doctor.artifact import kind_of, read_artifact
from inductor_doctor.artifact.elf import read_object
from inductor_doctor.artifact.host import HostView
from inductor_doctor.check.artifacts import judge, row_ids
from inductor_doctor.core.model import Status
from inductor_doctor.kb.artifact_gpu_arch_missing import runs_on
from inductor_doctor.probe._fatbin import cubin_arch, fatbin_archs, fatbin_entries

HERE = Path(__file__).resolve().parents[1]  # tests/
BUILD = HERE / "data" / "artifacts" / "build.py"


def _torch_version() -> str:
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:  # noqa: BLE001
        return ""


@pytest.fixture(scope="session")
def built() -> Path:
    """model.pt2, cache.bin and inductor-cache/ built by this torch, once per torch release."""
    version = _torch_version()
    if not version:
        pytest.skip("torch is not installed for the test interpreter")
    out = ENVS / "artifacts" / f"{version}-2"  # -2: with_inputs.pt2 added
    if not (out / ".ready").exists():
        shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.run([sys.executable, str(BUILD), str(out)], capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        (out / ".ready").touch()
    return out


# --- fast: the readers and the rules on facts ----------------------------------------------------------


def _fatbin(entries) -> bytes:
    """A fat binary laid out as nvcc and fatbinary write it: (kind, sm, payload[, flags, header size])."""
    import struct

    body = b""
    for kind, arch, payload, *more in entries:
        flags = more[0] if more else 0x11
        size = more[1] if len(more) > 1 else 64
        padded = payload + b"\0" * (-len(payload) % 8)
        head = struct.pack("<HHIIIIIHHIIIQQQ", kind, 0x101, size, len(padded), 0, 0, 0, 1, 7, arch, 0, 0,
                           flags, 0, 0)
        body += head + b"\0" * (size - len(head)) + padded
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_fatbin_headers_name_the_cubin_and_ptx_architectures():
    import io

    data = _fatbin([(2, 80, b"\x7fELF" + b"x" * 60), (2, 90, b"y" * 128), (1, 90, b"ptx" * 10)])
    assert fatbin_archs(io.BytesIO(data), len(data)) == (["sm_80", "sm_90"], ["compute_90"])


def test_fatbin_entries_follow_the_format():
    """Header sizes other than 64 (newer toolkits add options), payloads padded to 8, compressed
    payloads (LZ4, Zstandard: their headers still name the architecture), the architecture-specific
    flag (sm_90a), zeros between containers; a header that is not an entry's ends its container."""
    import io

    first = _fatbin([(2, 90, b"c" * 13, 0x102011, 72), (1, 90, b"p" * 7, 0x8011, 104),
                     (2, 100, b"d", 0x8011, 120)])
    second = _fatbin([(2, 75, b"e" * 8)])
    broken = bytearray(_fatbin([(2, 86, b"f" * 8), (2, 89, b"g" * 8)]))
    broken[16 + 64 + 8 + 2] = 0x02  # the second entry's header version
    data = first + b"\0" * 8 + second + bytes(broken)
    entries = list(fatbin_entries(io.BytesIO(data), len(data)))
    assert [(e.arch, e.compression, e.header_size) for e in entries] == [
        ("sm_90a", "lz4", 72), ("compute_90", "zstd", 104), ("sm_100", "zstd", 120), ("sm_75", None, 64),
        ("sm_86", None, 64)]
    archs = fatbin_archs(io.BytesIO(data), len(data))
    assert archs == (["sm_75", "sm_86", "sm_90a", "sm_100"], ["compute_90"])


@pytest.mark.parametrize("e_flags,abi,arch", [
    (0x5A055A, 7, "sm_90"), (0x5A0D5A, 7, "sm_90a"), (0x320532, 7, "sm_50"), (0x6406400, 8, "sm_100"),
    (0x6406408, 8, "sm_100a"), (0, 7, None)])
def test_cubin_architecture_from_its_elf_header(e_flags, abi, arch):
    """EF_CUDA_SM (low byte) and EF_CUDA_ACCELERATORS_V1 (0x800) up to ELF ABI 7; from ABI 8 the SM in
    the second byte and EF_CUDA_ACCELERATORS (0x8), as LLVM's ELF.h defines them."""
    assert cubin_arch(e_flags, abi) == arch


# --- real fatbins: the CUDA libraries of the cached torch venvs ----------------------------------------

#: What `cuobjdump --list-elf` and `--list-ptx` (CUDA 13.5) list for these libraries, entry by entry
#: (PTX as compute_XX): the counts the reader must find in their `.nv_fatbin` sections.
CUOBJDUMP_LISTS = {
    ("xla-2.5.1", "nvidia/curand/lib/libcurand.so.10"): {
        **{f"sm_{a}": 11 for a in (50, 60, 70, 75, 80, 86, 89, 90)}, "compute_90": 10},
    ("xla-2.5.1", "nvidia/cudnn/lib/libcudnn_engines_runtime_compiled.so.9"): {
        "sm_50": 1, "sm_60": 1, "sm_61": 1, "sm_70": 1, "sm_75": 1, "sm_80": 7, "sm_86": 7, "sm_90": 16,
        "sm_90a": 2, "compute_90": 16},
    ("xla-2.5.1", "torch/lib/libcusparseLt-294d6944.so.0"): {
        "sm_80": 12, "sm_86": 11, "sm_87": 10, "sm_89": 1, "sm_90": 1, "sm_90a": 17, "compute_52": 1,
        "compute_80": 2, "compute_86": 1, "compute_89": 1, "compute_90": 1},
    ("xla-2.5.1", "torch/lib/libtorch_cuda.so"): {
        **{f"sm_{a}": 340 for a in (50, 60, 70, 75, 80, 86, 90)}, "sm_90a": 1},
    ("cache-torch-2.7.1", "torch/lib/libtorch_cuda.so"): {
        **{f"sm_{a}": 378 for a in (50, 60, 70, 75, 80, 86, 90)}, "sm_89": 2, "sm_90a": 3},
}


def _site_packages(env: str) -> Path:
    if not (ENVS / env / ".ready").exists():
        pytest.skip(f"test venv {env} missing: run tests/envs/build.sh or tests/envs/build_catalog.sh {env}")
    return next((ENVS / env / "lib").glob("python3*/site-packages"))


def _nv_fatbin(lib: Path):
    """(file offset, size) of a library's .nv_fatbin section."""
    from elftools.elf.elffile import ELFFile

    with open(lib, "rb") as f:
        sec = ELFFile(f).get_section_by_name(".nv_fatbin")
        return sec["sh_offset"], sec["sh_size"]


def _entry_counts(lib: Path):
    from collections import Counter

    offset, size = _nv_fatbin(lib)
    with open(lib, "rb") as f:
        f.seek(offset)
        return Counter(e.arch for e in fatbin_entries(f, size))


@pytest.mark.envs
@pytest.mark.parametrize("env,lib", sorted(CUOBJDUMP_LISTS))
def test_real_fatbins_are_read_as_cuobjdump_lists_them(env, lib):
    """Every cubin and PTX entry of the real libraries, with its architecture (sm_90a included),
    and the union that `read_object` reports; libtorch_cuda's agree with the release's arch list."""
    import json

    path = _site_packages(env) / lib
    want = CUOBJDUMP_LISTS[(env, lib)]
    assert dict(_entry_counts(path)) == want
    with open(path, "rb") as f:
        obj = read_object(f, lib, path.stat().st_size)
    assert obj.error is None and obj.cuda_archs + obj.ptx_archs == sorted(
        want, key=lambda a: (a.startswith("compute"), int(a.split("_")[1].rstrip("a")), a))
    if lib.endswith("libtorch_cuda.so"):
        releases = json.loads((HERE.parent / "inductor_doctor/core/_data/releases.json").read_text())
        listed = releases["torch"][env.rsplit("-", 1)[1]]["pypi"]["linux_x86_64"]["archs"]
        assert set(listed) <= {a.rstrip("a") for a in obj.cuda_archs}  # and a few kernels for sm_89, sm_90a


@pytest.mark.envs
def test_every_fatbin_of_a_cuda_torch_is_read_as_cuobjdump_reads_it():
    """Where a cuobjdump is at hand (on PATH, or named by CUOBJDUMP; `pip download
    nvidia-cuda-cuobjdump` has one): every library of the torch 2.5.1 venv with device code, entry
    counts by architecture against its `--list-elf` and `--list-ptx`."""
    import os
    import re
    from collections import Counter

    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        pytest.skip("no cuobjdump (set CUOBJDUMP, or put one on PATH)")
    site = _site_packages("xla-2.5.1")
    checked = 0
    for lib in sorted([*site.glob("torch/lib/*.so*"), *site.glob("nvidia/*/lib/*.so*")]):
        listed = Counter()
        for what, prefix in (("--list-elf", "sm"), ("--list-ptx", "compute")):
            out = subprocess.run([tool, what, str(lib)], capture_output=True, text=True, timeout=600)
            if "fatal" in out.stderr:
                listed = None  # cuobjdump 13 cannot read cuBLAS 12.4's libraries ("Invalid ELF")
                break
            for m in re.finditer(r"\.sm_(\d+a?)\.(?:cubin|ptx)$", out.stdout, re.M):
                listed[f"{prefix}_{m.group(1)}"] += 1
        if not listed:
            continue
        assert _entry_counts(lib) == listed, lib.name
        checked += 1
    assert checked >= 15, checked


def _real_kernels(site: Path):
    """(a fat binary with sm_90 and sm_90a cubins and compute_90 PTX, an uncompressed sm_50 cubin), cut from
    the real libraries of a CUDA torch venv as they lie in their .nv_fatbin sections."""
    import io
    import struct

    lib = site / "nvidia/cudnn/lib/libcudnn_engines_runtime_compiled.so.9"
    offset, size = _nv_fatbin(lib)
    data = lib.read_bytes()[offset : offset + size]
    fatbin, pos = None, 0
    while fatbin is None and pos + 16 <= size:
        magic, _v, head, body = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        container = data[pos : pos + head + body]
        cubins, ptx = fatbin_archs(io.BytesIO(container), len(container))
        if "sm_90a" in cubins and "compute_90" in ptx:
            fatbin = container
        pos += head + body
    lib = site / "nvidia/curand/lib/libcurand.so.10"
    offset, size = _nv_fatbin(lib)
    with open(lib, "rb") as f:
        f.seek(offset)
        first = next(e for e in fatbin_entries(f, size) if e.compression is None and e.arch == "sm_50")
        f.seek(offset + first.payload_offset)
        cubin = f.read(first.size)
    assert fatbin and cubin[:4] == b"\x7fELF"
    return fatbin, cubin


def _as_cuda_package(package: Path, out: Path, members) -> Path:
    """A copy of a real package with its metadata saying CUDA (compiled on an sm_90) and `members`
    (name, bytes) beside its model, where a CUDA package keeps its kernels."""
    import json
    import zipfile

    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        folder = ""
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("_metadata.json") and "/aotinductor/" in info.filename:
                meta = json.loads(data)
                meta.update(AOTI_DEVICE_KEY="cuda", AOTI_COMPUTE_CAPABILITY="90")
                data = json.dumps(meta).encode()
                folder = info.filename.rsplit("/", 1)[0]
            dst.writestr(info, data)
        for name, data in members:
            dst.writestr(f"{folder}/{name}", data)
    return out


@pytest.mark.slow
@pytest.mark.envs
def test_a_multi_arch_package_is_judged_by_its_fatbins(built, tmp_path):
    """A package as `aot_inductor.emit_multi_arch_kernel` lays it out, one `.fatbin` per kernel (here
    a real one: sm_90 and sm_90a cubins and compute_90 PTX): its architectures, not the
    AOTI_COMPUTE_CAPABILITY fallback, decide where it runs: on an sm_90 (the cubin), on an sm_100 (the
    PTX, compiled by the driver), on no sm_80."""
    fatbin, _cubin = _real_kernels(_site_packages("xla-2.5.1"))
    package = _as_cuda_package(built / "model.pt2", tmp_path / "multi.pt2",
                               [("triton_poi_fused_0.fatbin", fatbin)])
    art = read_artifact(str(package))
    assert "sm_90a" in art.cuda_archs() and "compute_90" in art.ptx_archs(), art.objects
    assert any(o.kind == "fatbin" for o in art.objects)
    for gpu, status in (("9.0", Status.OK), ("10.0", Status.OK), ("8.0", Status.AFFECTED)):
        j = judge(art, HostView(torch_version=_torch_version(), gpus={"cuda:0": gpu}))
        outcome = next(o for i, o in j.outcomes if i.id == "artifact-gpu-arch-missing")
        assert outcome.status is status and "AOTI_COMPUTE_CAPABILITY" not in outcome.reason, (gpu, outcome)
    for gpu, status in (("sm_80", "affected"), ("sm_90", "ok")):
        data = run_json(["plan", "--gpu", gpu, "--artifact", str(package)])
        row = next(r for r in data["results"] if r["id"] == "artifact.multi.pt2")
        assert row["status"] == status, (gpu, row)
    assert "no kernel image is available" in row["reason"] or status == "ok"


@pytest.mark.slow
@pytest.mark.envs
def test_kernels_embedded_in_the_model_so_are_read(built, tmp_path):
    """`aot_inductor.embed_kernel_binary`: each kernel's fatbin or cubin goes into the model .so's
    .rodata between `__<kernel>_start` and `__<kernel>_end`, by torch's own cpp_builder; the reader
    finds both kinds there, and nothing in a .so that embeds none."""
    fatbin, cubin = _real_kernels(_site_packages("xla-2.5.1"))
    (tmp_path / "k0.fatbin").write_bytes(fatbin)
    (tmp_path / "k1.cubin").write_bytes(cubin)
    code = (
        "import sys\n"
        "from torch._inductor import cpp_builder as b\n"
        "d = sys.argv[1]\n"
        "kernels = [(d + '/k0.fatbin', 'triton_poi_fused_relu_0'),\n"
        "           (d + '/k1.cubin', 'triton_poi_fused_mul_1')]\n"
        "if hasattr(b, 'batch_convert_cubins_to_obj'):\n"
        "    print(b.batch_convert_cubins_to_obj(kernels, d))\n"
        "else:\n"
        "    print(b.convert_cubin_to_obj(kernels[0][0], kernels[0][1], 'ld', 'objcopy'))\n"
    )
    made = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    cc = shutil.which("gcc") or pytest.skip("no gcc")
    so = tmp_path / "model.wrapper.so"
    (tmp_path / "main.c").write_text("int model_run(void) { return 0; }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-Wl,-z,noexecstack", "-o", str(so), str(tmp_path / "main.c"),
                    made.stdout.split()[-1]], check=True)
    with open(so, "rb") as f:
        obj = read_object(f, so.name, so.stat().st_size)
    assert obj.error is None, obj.error
    assert (obj.cuda_archs, obj.ptx_archs) == (["sm_50", "sm_90", "sm_90a"], ["compute_90"])
    plain = tmp_path / "plain.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(plain), str(tmp_path / "main.c")], check=True)
    with open(plain, "rb") as f:
        assert read_object(f, plain.name, plain.stat().st_size).cuda_archs == []


@pytest.mark.parametrize("arch,gpu,runs", [
    ("sm_80", (8, 6), True), ("sm_86", (8, 0), False), ("sm_80", (9, 0), False), ("compute_80", (9, 0), True),
    ("sm_90a", (9, 0), True), ("sm_90a", (10, 0), False), ("compute_90", (8, 9), False),
])
def test_which_gpu_code_runs_where(arch, gpu, runs):
    assert runs_on(arch, *gpu) is runs


def test_row_ids_are_ids():
    class A:
        def __init__(self, name):
            self.name = name

    assert row_ids([A("Model v2.pt2"), A("model v2.pt2"), A("cache")]) == [
        "artifact.model-v2.pt2", "artifact.model-v2.pt2-2", "artifact.cache"]


def test_a_blob_in_torch_27s_layout_is_read_and_judged(tmp_path):
    """torch 2.7 wrote its blob without the checksum 2.8 added, each entry with a numbered kind, and
    no torch version in it: read as such, and said to be unreadable (a recompile) by a newer torch."""
    def field(b: bytes) -> bytes:
        return len(b).to_bytes(8, "big") + b

    blob = tmp_path / "old.bin"
    entry = field(b"\x80\x04entry")
    blob.write_bytes((1).to_bytes(8, "big") + (0).to_bytes(8, "big") + field(b"fx-key") + entry
                     + (2).to_bytes(8, "big") + field(b"aot-key") + entry)
    art = read_artifact(str(blob))
    assert (art.kind, art.error, art.entries) == ("cache-blob", None, {"inductor": 1, "aot_autograd": 1})
    assert art.metadata["blob_layout"] == "2.7" and art.torch_version is None
    j = judge(art, HostView(torch_version="2.13.0+cpu"))
    assert j.decided.status is Status.LIKELY and j.issue.id == "artifact-cache-foreign"
    assert "torch 2.7's blob layout, which torch 2.13.0+cpu cannot read" in j.decided.reason
    assert judge(art, HostView(torch_version="2.7.1+cu126")).decided.status is Status.INCONCLUSIVE


def test_not_an_artifact_is_a_usage_error(tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello, this is not a package\n")
    assert kind_of(str(bogus)) == "unknown"
    proc = run_cli(["plan", "--artifact", str(bogus)])
    assert proc.returncode == 2, proc.stderr
    assert "not an artifact" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli(["plan", "--artifact", str(tmp_path / "missing.pt2")])
    assert proc.returncode == 2 and "no such file" in proc.stderr




ARTIFACT_IDS = {"artifact-torch-mismatch", "artifact-glibcxx-too-old", "artifact-cpu-isa-missing",
                "artifact-gpu-arch-missing", "artifact-cache-foreign"}


def test_a_check_or_plan_without_an_artifact_has_no_artifact_rows():
    """The artifact issues are asked of artifacts, one row per artifact: a plain check or plan makes
    no not-applicable row for them, and `--only` naming them alone says to pass `--artifact`."""
    check = run_json(["check", "--static"])
    assert not {r["id"] for r in check["results"]} & ARTIFACT_IDS, check["results"]
    plan = run_json(["plan", "torch==2.5.1", "triton==3.1.0"])
    assert not {r["id"] for r in plan["results"]} & ARTIFACT_IDS
    proc = run_cli(["check", "--static", "--only", "artifact-cpu-isa-missing"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "concerns compiled artifacts only" in proc.stderr and "--artifact PATH" in proc.stderr
def _glibcxx_cache(root: Path) -> Path:
    """An Inductor-style cache whose kernel needs GLIBCXX_3.4.32, which GCC 13.2 introduced: linked
    against a stub libstdc++.so.6 that defines that version (the system's, GCC 12's, stops at 3.4.30)."""
    stub, cache = root / "stub", root / "cache" / "ab"
    stub.mkdir(parents=True)
    cache.mkdir(parents=True)
    (root / "stub.c").write_text("void glibcxx_3432_probe(void) {}\n")
    (root / "v.map").write_text("GLIBCXX_3.4.32 { global: glibcxx_3432_probe; local: *; };\n")
    (root / "kernel.c").write_text("extern void glibcxx_3432_probe(void);\n"
                                   "void kernel(void) { glibcxx_3432_probe(); }\n")
    cc = shutil.which("gcc") or pytest.skip("no gcc")
    script = f"-Wl,--version-script={root / 'v.map'}"
    subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libstdc++.so.6", script,
                    "-o", str(stub / "libstdc++.so.6"), str(root / "stub.c")], check=True)
    (stub / "libstdc++.so").symlink_to("libstdc++.so.6")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(cache / "cabkernel.so"), str(root / "kernel.c"),
                    f"-L{stub}", "-lstdc++"], check=True)
    return root / "cache"


def test_cache_kernel_needing_a_newer_glibcxx_is_read(tmp_path):
    art = read_artifact(str(_glibcxx_cache(tmp_path)))
    assert art.kind == "cache-dir" and art.newest("glibcxx") == "3.4.32"
    j = judge(art, HostView(torch_version="2.13.0", glibcxx="3.4.30", glibc="2.36", cxxabi="1.3.13"))
    assert j.decided.status is Status.AFFECTED and j.issue.id == "artifact-glibcxx-too-old"
    assert "GLIBCXX_3.4.32" in j.decided.reason
    data = run_json(["check", "--static", "--only", "artifact-glibcxx-too-old", "--artifact",
                     str(tmp_path / "cache")])
    from inductor_doctor.schemas import validate

    validate("check", data)
    row = next(r for r in data["results"] if r["id"] == "artifact.cache")
    assert row["status"] == "affected" and row["issue"] == "artifact-glibcxx-too-old", row


@pytest.mark.slow
def test_cache_kernel_needing_a_newer_glibcxx_fails_to_load_and_is_affected(tmp_path):
    """The loader's own refusal first, then the doctor's verdict on the same cache."""
    cache = _glibcxx_cache(tmp_path)
    real = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                           str(cache / "ab" / "cabkernel.so")], capture_output=True, text=True)
    assert "version `GLIBCXX_3.4.32' not found (required by" in real.stderr, real.stderr
    data = run_json(["check", "--only", "artifact-glibcxx-too-old", "--no-cache", "--artifact", str(cache)],
                    timeout=600)
    row = next(r for r in data["results"] if r["id"] == "artifact.cache")
    assert row["status"] == "affected" and row["basis"] == "canary", row
    assert row["issue"] == "artifact-glibcxx-too-old" and "GLIBCXX_3.4.32" in row["reason"]
    assert any("needs GLIBCXX_3.4.32" in e for e in row["evidence"]), row["evidence"]


FP16_KERNEL = """
#include <immintrin.h>
volatile float src = 1.0f;
volatile float sink;
__attribute__((constructor)) static void kernel_init(void) {
    __m512h a = _mm512_set1_ph((_Float16)src);
    sink = (float)_mm512_cvtsh_h(_mm512_add_ph(a, a));
}
"""


def _has_flag(flag: str) -> bool:
    from inductor_doctor.artifact.host import cpu_flags

    return flag in (cpu_flags() or [])


def _swap_model_so(package: Path, so: Path, out: Path) -> Path:
    """A copy of a real package whose model .so is `so`: what the package loader extracts and dlopens."""
    import zipfile

    with zipfile.ZipFile(package) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = so.read_bytes() if info.filename.endswith(".wrapper.so") else src.read(info)
            dst.writestr(info, data)
    return out


def _load_package(path: Path) -> subprocess.CompletedProcess:
    code = "import sys, torch._inductor\ntorch._inductor.aoti_load_package(sys.argv[1])\n"
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.heavy
@pytest.mark.slow
def test_package_built_with_an_isa_this_cpu_lacks_dies_and_is_affected(built, tmp_path):
    """A package whose model .so was compiled with -mavx512fp16 (which this host's CPU may lack): the
    load dies with SIGILL for real; the static rule says likely from the -m flags, the canary affected."""
    if _has_flag("avx512_fp16"):
        pytest.skip("this CPU has AVX512-FP16: nothing to lack")
    cc = shutil.which("gcc") or pytest.skip("no gcc")
    (tmp_path / "fp16.c").write_text(FP16_KERNEL)
    so = tmp_path / "model.wrapper.so"
    subprocess.run([cc, "-g", "-O1", "-mavx512f", "-mavx512fp16", "-shared", "-fPIC", "-o", str(so),
                    str(tmp_path / "fp16.c")], check=True)
    package = _swap_model_so(built / "model.pt2", so, tmp_path / "fp16.pt2")
    real = _load_package(package)
    assert real.returncode == -4, (real.returncode, real.stderr[-2000:])  # SIGILL
    data = run_json(["check", "--only", "artifact-cpu-isa-missing", "--no-cache", "--artifact", str(package)],
                    timeout=600)
    row = next(r for r in data["results"] if r["id"] == "artifact.fp16.pt2")
    assert row["status"] == "affected" and row["basis"] == "canary" and "SIGILL" in row["reason"], row
    assert row["issue"] == "artifact-cpu-isa-missing"
    assert any("avx512_fp16" in e and "likely" in e for e in row["evidence"]), row["evidence"]
    static = run_json(["check", "--static", "--only", "artifact-cpu-isa-missing", "--artifact", str(package)])
    row = next(r for r in static["results"] if r["id"] == "artifact.fp16.pt2")
    assert row["status"] == "likely" and "avx512_fp16" in row["reason"], row


@pytest.mark.heavy
@pytest.mark.slow
def test_package_needing_a_newer_glibcxx_fails_to_load_and_is_affected(built, tmp_path):
    cache = _glibcxx_cache(tmp_path)
    package = _swap_model_so(built / "model.pt2", cache / "ab" / "cabkernel.so", tmp_path / "gcc13.pt2")
    real = _load_package(package)
    assert "version `GLIBCXX_3.4.32' not found (required by" in real.stderr, real.stderr[-2000:]
    data = run_json(["check", "--only", "artifact-glibcxx-too-old", "--no-cache", "--artifact", str(package)],
                    timeout=600)
    row = next(r for r in data["results"] if r["id"] == "artifact.gcc13.pt2")
    assert row["status"] == "affected" and row["basis"] == "canary", row
    assert row["issue"] == "artifact-glibcxx-too-old" and "GLIBCXX_3.4.32" in row["reason"]


def _counting_cache(root: Path) -> Path:
    """An Inductor-style cache whose one kernel, when loaded, appends a line to root/loads.txt (a
    constructor): how many times a canary really loaded it."""
    cache = root / "cache" / "ab"
    cache.mkdir(parents=True)
    (root / "kernel.c").write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void loaded(void) {\n"
        f"  FILE *f = fopen({str(root / 'loads.txt')!r}, \"a\");\n".replace("'", '"')
        + "  if (f) { fputs(\"loaded\\n\", f); fclose(f); }\n}\n")
    cc = shutil.which("gcc") or pytest.skip("no gcc")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(cache / "cabkernel.so"), str(root / "kernel.c")],
                   check=True)
    return root / "cache"


def _loads(root: Path) -> int:
    path = root / "loads.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _artifact_row(args, python=sys.executable, name="artifact.cache"):
    data = run_json(["check", "--only", "artifact-glibcxx-too-old", *args], python=python, timeout=600)
    return next(r for r in data["results"] if r["id"] == name)


@pytest.mark.slow
def test_a_repeated_check_reuses_the_load_canary_until_the_artifact_changes(tmp_path):
    """The canary's outcome is kept like every canary's: a second check does not load the artifact
    again and says so; --no-cache loads it (and keeps the fresh outcome); touching the artifact
    loads it again."""
    import os

    cache = _counting_cache(tmp_path)
    first = _artifact_row(["--artifact", str(cache)])
    assert _loads(tmp_path) == 1, first
    assert not any("reused" in e for e in first["evidence"])
    again = _artifact_row(["--artifact", str(cache)])
    assert _loads(tmp_path) == 1, "the second check loaded the artifact again"
    said = ("status", "basis", "reason")
    assert [again[k] for k in said] == [first[k] for k in said]
    assert any(e.startswith("canary: its outcome from an earlier check, reused") for e in again["evidence"])
    _artifact_row(["--no-cache", "--artifact", str(cache)])
    assert _loads(tmp_path) == 2
    _artifact_row(["--artifact", str(cache)])
    assert _loads(tmp_path) == 2
    so = cache / "ab" / "cabkernel.so"
    st = so.stat()
    os.utime(so, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    touched = _artifact_row(["--artifact", str(cache)])
    assert _loads(tmp_path) == 3 and not any("reused" in e for e in touched["evidence"])
    _artifact_row(["--static", "--artifact", str(cache)])
    assert _loads(tmp_path) == 3


@pytest.mark.slow
@pytest.mark.envs
def test_a_changed_torch_loads_the_artifact_again(tmp_path):
    """The same interpreter with its torch changed (reinstalled, patched): a new key. A hard-linked
    copy of the torch 2.7.1 venv, whose torch/__init__.py is then replaced by a copy of itself."""
    source = ENVS / "cache-torch-2.7.1"
    _site_packages("cache-torch-2.7.1")
    venv = tmp_path / "venv"
    subprocess.run(["cp", "-al", str(source), str(venv)], check=True)
    (venv / ".ready").unlink()
    python = str(venv / "bin" / "python")
    cache = _counting_cache(tmp_path)
    _artifact_row(["--python", python, "--artifact", str(cache)])
    _artifact_row(["--python", python, "--artifact", str(cache)])
    assert _loads(tmp_path) == 1
    init = next((venv / "lib").glob("python3*/site-packages/torch/__init__.py"))
    text = init.read_text()
    init.unlink()  # a new file: the hard-linked original stays as it was
    init.write_text(text + "\n# patched\n")
    row = _artifact_row(["--python", python, "--artifact", str(cache)])
    assert _loads(tmp_path) == 2 and not any("reused" in e for e in row["evidence"]), row


# --- slow: artifacts built by the test torch -----------------------------------------------------------


@pytest.mark.slow
def test_package_facts_are_read_from_the_package(built):
    art = read_artifact(str(built / "model.pt2"))
    assert art.kind == "pt2" and art.error is None and art.device == "cpu"
    assert art.cpu_isa and art.metadata["AOTI_DEVICE_KEY"] == "cpu"
    so = [o for o in art.objects if o.kind == "so"]
    assert so and so[0].glibcxx and so[0].glibc and "libtorch_cpu.so" in so[0].needed
    assert any(s.startswith("aoti_torch_") for s in so[0].torch_symbols)


@pytest.mark.slow
def test_blob_records_the_torch_that_wrote_it(built):
    art = read_artifact(str(built / "cache.bin"))
    assert art.kind == "cache-blob" and art.torch_version == _torch_version()
    assert art.entries.get("inductor") and art.torch_git


@pytest.mark.slow
def test_glibcxx_older_than_the_package_needs_is_affected(built):
    """A fake libstdc++ fact one version below the package's need (the brief's fake-fact route)."""
    art = read_artifact(str(built / "model.pt2"))
    need = art.newest("glibcxx")
    older = ".".join(need.split(".")[:2] + [str(int(need.split(".")[2]) - 1)])
    host = HostView(torch_version=_torch_version(), glibcxx=older, glibc="2.99", cxxabi="1.3.99",
                    cpu_flags=None, what="this host")
    j = judge(art, host)
    assert j.decided.status is Status.AFFECTED and j.issue.id == "artifact-glibcxx-too-old"
    assert f"GLIBCXX_{need}" in j.decided.reason


@pytest.mark.slow
def test_cpu_without_the_packages_vector_isa_is_affected(built):
    """The package's AOTI_CPU_ISA against a CPU that has AVX2 but no AVX-512 (the flags of a Zen 3)."""
    art = read_artifact(str(built / "model.pt2"))
    if "AVX512" not in (art.cpu_isa or ""):
        pytest.skip(f"built for {art.cpu_isa}: this host has no AVX-512 to take away")
    zen3 = "fpu sse sse2 pni ssse3 sse4_1 sse4_2 popcnt avx avx2 fma f16c bmi1 bmi2 abm movbe aes".split()
    j = judge(art, HostView(torch_version=_torch_version(), cpu_flags=zen3))
    assert j.decided.status is Status.AFFECTED and j.issue.id == "artifact-cpu-isa-missing"
    assert "avx512f" in j.decided.reason and "SIGILL" in j.decided.reason


@pytest.mark.slow
def test_check_here_loads_them_ok(built):
    data = run_json(["check", "--only", "artifact-torch-mismatch", "--artifact", str(built / "model.pt2"),
                     "--artifact", str(built / "cache.bin"), "--no-cache"], timeout=900)
    rows = {r["id"]: r for r in data["results"] if r["id"].startswith("artifact.")}
    assert set(rows) == {"artifact.model.pt2", "artifact.cache.bin"}
    pt2, blob = rows["artifact.model.pt2"], rows["artifact.cache.bin"]
    assert pt2["status"] == "ok" and pt2["device"] == "cpu", pt2
    assert "exports all" in pt2["reason"] and any(e.startswith("built: pt2") for e in pt2["evidence"])
    assert blob["status"] == "ok" and blob["basis"] == "canary", blob
    assert "loaded the blob" in blob["reason"]


@pytest.mark.slow
def test_blob_from_another_torch_build_will_be_missed(built):
    """The blob's own torch against another release and another build of it: a recompile, said so."""
    art = read_artifact(str(built / "cache.bin"))
    j = judge(art, HostView(torch_version="2.12.0+cpu", torch_git="0" * 40, cpu_flags=None))
    assert j.decided.status is Status.LIKELY and j.issue.id == "artifact-cache-foreign", j.decided
    assert "every entry will be missed" in j.decided.reason and j.issue.severity.value == "warning"
    j = judge(art, HostView(torch_version=art.torch_version, torch_git="0" * 40))
    assert j.decided.status is Status.LIKELY and "another build" in j.decided.reason
    j = judge(art, HostView(torch_version=art.torch_version, torch_git=art.torch_git))
    assert j.decided.status is Status.OK, j.decided


@pytest.mark.slow
def test_package_with_example_inputs_is_run_by_the_canary(built):
    """ok earned by running: the package's recorded example inputs go through the loaded model."""
    package = built / "with_inputs.pt2"
    if not package.exists():
        pytest.skip("this torch cannot package an exported program beside its compiled model")
    assert read_artifact(str(package)).example_inputs
    data = run_json(["check", "--only", "artifact-torch-mismatch", "--no-cache", "--artifact", str(package)],
                    timeout=900)
    row = next(r for r in data["results"] if r["id"] == "artifact.with-inputs.pt2")
    assert row["status"] == "ok" and row["basis"] == "canary", row
    assert "ran model model on its example inputs" in row["reason"], row


@pytest.mark.slow
def test_plan_refuses_a_torch_that_cannot_read_the_blob(built):
    data = run_json(["plan", "torch==2.6.0", "--artifact", str(built / "cache.bin")])
    row = next(r for r in data["results"] if r["id"] == "artifact.cache.bin")
    assert row["status"] == "likely" and row["issue"] == "artifact-torch-mismatch", row
    assert "load_cache_artifacts" in row["reason"]


# --- envs: loaded by another torch release, for real, then by the doctor -----------------------------


def _load(python: str, path: Path, kind: str) -> subprocess.CompletedProcess:
    code = ("import sys, torch, torch._inductor\n"
            "p = sys.argv[1]\n"
            "if sys.argv[2] == 'pt2':\n    torch._inductor.aoti_load_package(p)\n"
            "else:\n    torch.compiler.load_cache_artifacts(open(p, 'rb').read())\n")
    return subprocess.run([python, "-c", code, str(path), kind], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.envs
@pytest.mark.parametrize("env,pt2_error", [
    ("xla-2.5.1", "has no attribute 'aoti_load_package'"),
    ("xla-2.6.0", "No AOTInductor generate cpp file or so file found in zip archive"),
])
def test_another_torch_cannot_load_them(built, env, pt2_error):
    python = venv_python(env)
    real = _load(python, built / "model.pt2", "pt2")
    assert real.returncode != 0 and pt2_error in real.stderr, real.stderr[-2000:]
    real_blob = _load(python, built / "cache.bin", "blob")
    assert real_blob.returncode != 0 and "load_cache_artifacts" in real_blob.stderr
    data = run_json(["check", "--python", python, "--only", "artifact-torch-mismatch", "--no-cache",
                     "--artifact", str(built / "model.pt2"), "--artifact", str(built / "cache.bin")],
                    timeout=900)
    rows = {r["id"]: r for r in data["results"]}
    pt2, blob = rows["artifact.model.pt2"], rows["artifact.cache.bin"]
    assert pt2["status"] == "affected" and pt2["basis"] == "canary" and pt2_error in pt2["reason"], pt2
    assert pt2["issue"] == "artifact-torch-mismatch"
    assert any("does not export" in e for e in pt2["evidence"]), pt2["evidence"]  # the static rule too
    assert blob["status"] == "affected" and blob["issue"] == "artifact-torch-mismatch", blob
    static = run_json(["check", "--static", "--python", python, "--only", "artifact-torch-mismatch",
                       "--artifact", str(built / "model.pt2")], timeout=600)
    row = next(r for r in static["results"] if r["id"] == "artifact.model.pt2")
    assert row["status"] == "affected" and "undefined symbol" in row["reason"], row


# --- envs: a cache written by one torch, read by another that misses every entry ----------------------

ROUNDTRIP = """
import json, sys, torch
from torch._dynamo.utils import counters
mode, path = sys.argv[1], sys.argv[2]
def f(x):
    return torch.sin(x) * 2 + 1
loaded = None
if mode == "load":
    info = torch.compiler.load_cache_artifacts(open(path, "rb").read())
    loaded = None if info is None else {k: len(v) for k, v in getattr(info, "artifacts", {}).items()}
torch.compile(f)(torch.randn(8))
if mode == "save":
    open(path, "wb").write(torch.compiler.save_cache_artifacts()[0])
c = counters["inductor"]
print(json.dumps({"torch": torch.__version__, "loaded": loaded, "hit": c["fxgraph_cache_hit"],
                  "miss": c["fxgraph_cache_miss"]}))
"""


def _roundtrip(python: str, mode: str, path: Path, cache_dir: Path) -> dict:
    """save: compile f with an empty Inductor cache, write the blob; load: load a blob into an empty
    cache, compile the same f. The FX graph cache's hits and misses, as torch counts them."""
    import json
    import os

    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([python, "-c", ROUNDTRIP, mode, str(path)], capture_output=True, text=True,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "stderr": proc.stderr}


@pytest.mark.slow
@pytest.mark.envs
@pytest.mark.parametrize("saver,loader,readable", [
    ("this", "cache-torch-2.9.0", True), ("cache-torch-2.9.0", "this", True),
    ("this", "cache-torch-2.7.1", False), ("cache-torch-2.7.1", "this", False),
])
def test_a_blob_from_another_torch_is_missed_for_real_and_said_likely(tmp_path, saver, loader, readable):
    """A blob saved by one release and loaded by another: torch 2.9 reads 2.13's format (and 2.13
    reads 2.9's) but the compile misses every entry and compiles again; 2.7 and 2.13 cannot read each
    other's blob at all (load_cache_artifacts warns and returns None), and the compile misses too.
    Either way no error reaches the user, only a recompile: the doctor says `likely`, artifact-cache-
    foreign, from the blob's own record of its torch; its canary loads the blob there and does not
    turn that into ok."""
    save_py = sys.executable if saver == "this" else venv_python(saver)
    load_py = sys.executable if loader == "this" else venv_python(loader)
    blob, own = tmp_path / "foreign.bin", tmp_path / "own.bin"
    saved = _roundtrip(save_py, "save", blob, tmp_path / "c1")
    assert saved["miss"] >= 1
    control = _roundtrip(load_py, "save", own, tmp_path / "c2")
    control = _roundtrip(load_py, "load", own, tmp_path / "c3")
    assert control["hit"] >= 1 and control["miss"] == 0, control  # its own blob is hit
    missed = _roundtrip(load_py, "load", blob, tmp_path / "c4")
    assert missed["hit"] == 0 and missed["miss"] >= 1, missed  # another's: compiled again
    assert (missed["loaded"] is not None) is readable, missed
    data = run_json(["check", "--python", load_py, "--only", "artifact-cache-foreign,artifact-torch-mismatch",
                     "--no-cache", "--artifact", str(blob)], timeout=900)
    row = next(r for r in data["results"] if r["id"] == "artifact.foreign.bin")
    assert row["status"] == "likely" and row["issue"] == "artifact-cache-foreign", row
    written = f"written by torch {saved['torch']}"
    if saver == "cache-torch-2.7.1":
        written = "torch 2.7's blob layout"  # a 2.7 blob records no version: its layout tells
    assert written in row["reason"], row["reason"]
    assert "every entry will be missed and compiled again" in row["reason"]
    said = " ".join([row["reason"], *row["evidence"]])
    assert ("a load says nothing of a hit" in said) if readable else ("could not read the blob" in said), said


@pytest.mark.slow
@pytest.mark.envs
def test_a_cache_directory_from_another_torch_is_missed_for_real_and_said_likely(tmp_path):
    """The same with an Inductor cache directory (TORCHINDUCTOR_CACHE_DIR baked into an image): the
    test torch's own compile hits it, torch 2.9's misses every entry; the doctor reads the torch that wrote
    it from its FX graph entries and says `likely`."""
    loader = venv_python("cache-torch-2.9.0")
    made = tmp_path / "made"
    _roundtrip(sys.executable, "save", tmp_path / "unused.bin", made)
    for python, hit in ((sys.executable, True), (loader, False)):
        copy = tmp_path / f"copy-{int(hit)}"
        shutil.copytree(made, copy)
        counted = _roundtrip(python, "compile", tmp_path / "unused.bin", copy)
        assert (counted["hit"] >= 1 and counted["miss"] == 0) if hit else (
            counted["hit"] == 0 and counted["miss"] >= 1), counted
    data = run_json(["check", "--python", loader, "--only", "artifact-cache-foreign,artifact-torch-mismatch",
                     "--no-cache", "--artifact", str(made)], timeout=900)
    row = next(r for r in data["results"] if r["id"] == "artifact.made")
    assert row["status"] == "likely" and row["issue"] == "artifact-cache-foreign", row
    assert f"written by torch {_torch_version()}" in row["reason"], row["reason"]
    assert "every entry will be missed" in row["reason"]
