"""The issues whose facts are read from every release's sources (core/_data/source_history.json,
written by `tools/release_audit.py sources`): torch-config-knob-missing, triton-api-removed,
cuda-malloc-async-graphs, bisect-state-leftover. Their rules on recorded facts and on this machine's
real torch, and what `explain --log` adds to a diagnosis from the history.
"""

from __future__ import annotations

import pytest
from conftest import run_json
from test_rules_environment import make_facts, only

from inductor_doctor.core import source_history as history
from inductor_doctor.core.model import Status
from inductor_doctor.kb import registry


def annotate(id_: str, *lines: str, **versions: str):
    issue = registry().find(id_)
    assert issue is not None and issue.annotate is not None
    return issue.annotate(list(lines), {k: [v] for k, v in versions.items()})


# --- the history itself -----------------------------------------------------------------------------

def test_the_history_covers_every_release_of_the_snapshot_and_knows_the_knobs_users_hit():
    from inductor_doctor.core.releases import RELEASES

    assert set(history.torch_releases()) == {v for v in RELEASES["torch"] if int(v.split(".")[0]) >= 2}
    assert history.knob("torch._inductor.config", "fx_graph_cache")[0][0] == "2.2.0"
    assert history.knob("torch._dynamo.config", "recompile_limit")[0][0] == "2.7.0"
    old = history.alias("torch._dynamo.config", "cache_size_limit")
    assert old is not None and old[0] == "torch._dynamo.config.recompile_limit"
    assert history.knob("torch._dynamo.config", "log_level") == [["2.0.0", "2.0.1"]]
    assert history.knob("torch._inductor.config", "triton.cudagraphs")  # a nested class's attribute


# --- torch-config-knob-missing ----------------------------------------------------------------------

KNOB = "torch-config-knob-missing"


def test_a_missing_knob_is_told_with_its_releases_and_the_logs_torch():
    said = annotate(KNOB, "AttributeError: torch._dynamo.config.recompile_limit does not exist",
                    torch="2.5.1+cu124")
    assert said == ("torch._dynamo.config.recompile_limit is defined by torch 2.7.0 to "
                    f"{history.torch_releases()[-1]}; before torch 2.7.0 its name was cache_size_limit "
                    "(defined from torch 2.0.0); the log's torch is 2.5.1, which does not have it")
    gone = annotate(KNOB, "E   AttributeError: torch._dynamo.config.log_level does not exist",
                    torch="2.1.0.dev20230621+cpu")
    assert "torch 2.0.0 to 2.0.1 (gone in 2.1.0)" in gone and "2.1.0, which does not have it" in gone
    python = annotate(KNOB, "AttributeError: module 'torch._dynamo.config' has no attribute "
                      "'allow_unspec_int_on_nn_module'")
    assert python.startswith("torch._dynamo.config.allow_unspec_int_on_nn_module is defined by torch 2.7.0")
    assert "misspelt or private" in annotate(KNOB, "torch._dynamo.config.repro_dir does not exist")
    assert "only an import loads" in annotate(KNOB, "module 'torch._inductor' has no attribute 'config'")


def test_a_variable_this_torch_never_reads_is_likely_and_one_it_reads_is_ok():
    facts = make_facts(env={"TORCHINDUCTOR_FX_GRAPH_CACHE": "1", "TORCHINDUCTOR_NO_SUCH_KNOB": "1"})
    out = only("torch-config-knob-missing", facts)
    assert out.status is Status.LIKELY and "never reads TORCHINDUCTOR_NO_SUCH_KNOB" in out.reason, out.reason
    assert "FX_GRAPH_CACHE" not in out.reason
    ok = only("torch-config-knob-missing", make_facts(env={"TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}))
    assert ok.status is Status.OK
    assert only("torch-config-knob-missing", make_facts(env={})).status is Status.NOT_APPLICABLE


def test_the_check_flags_an_unread_variable_for_real():
    data = run_json(["check", "--static", "--only", "torch-config-knob-missing"],
                    env={"TORCHDYNAMO_RECOMPILE_LIMITT": "64"})
    row = data["results"][0]
    assert (row["status"], row["basis"]) == ("likely", "static"), row
    assert "TORCHDYNAMO_RECOMPILE_LIMITT" in row["reason"]


@pytest.mark.parametrize("name", ["TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_FX_GRAPH_CACHE",
                                  "TORCHDYNAMO_VERBOSE"])
def test_variables_torch_reads_outside_its_config_files_count_as_read(name):
    assert only("torch-config-knob-missing", make_facts(env={name: "1"})).status is Status.OK


# --- triton-api-removed -----------------------------------------------------------------------------

API = "triton-api-removed"
#: What the probe read beside Triton 3.7.1 from bitsandbytes 0.44.1 (tests/envs/build_extensions.sh).
BNB_0441 = [
    ("bitsandbytes/triton/int8_matmul_mixed_dequantize.py", 12, "triton.ops.matmul_perf_model", name)
    for name in ("early_config_prune", "estimate_matmul_time")
]


def triton_facts(missing=(), packages=("bitsandbytes 0.44.1",), imports=10, complete=True):
    from inductor_doctor.core.facts import TritonImport, TritonImportScan, TritonInfo

    found = [TritonImport("bitsandbytes", "0.44.1", p, ln, m, n) for p, ln, m, n in missing]
    scan = TritonImportScan(missing=found, packages=list(packages), imports=imports, complete=complete)
    triton = TritonInfo(version="3.7.1", path="/venv/site-packages/triton")
    return make_facts(triton=triton, triton_imports=scan)


def test_a_package_importing_a_module_triton_removed_is_affected_with_the_release_that_removed_it():
    out = only(API, triton_facts(BNB_0441))
    assert out.status is Status.AFFECTED, out
    assert out.reason.startswith(
        "bitsandbytes 0.44.1 imports triton.ops.matmul_perf_model.early_config_prune and 1 more "
        "(bitsandbytes/triton/int8_matmul_mixed_dequantize.py:12), which Triton 3.7.1 does not have "
        "(triton.ops.matmul_perf_model is in Triton 2.0.0 to 3.1.0 (gone in 3.2.0)"), out.reason


def test_imports_that_resolve_are_ok_none_is_not_applicable_and_no_triton_is_not_installed():
    assert only(API, triton_facts(packages=("bitsandbytes 0.45.5",))).status is Status.OK
    assert only(API, triton_facts(packages=(), imports=0)).status is Status.NOT_APPLICABLE
    assert only(API, triton_facts(complete=False, packages=())).status is Status.INCONCLUSIVE
    assert only(API, make_facts()).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize("line,triton,says", [
    ("ModuleNotFoundError: No module named 'triton.ops'", "3.2.0",
     "triton.ops is in Triton 2.0.0 to 3.1.0 (gone in 3.2.0); Triton 3.2.0 does not"),
    ("ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' (x.py)", "3.3.1",
     "triton.compiler.compiler.AttrsDescriptor is in Triton 2.3.0 to 3.2.0 (gone in 3.3.0); Triton 3.3.1 "
     "does not"),
    ("Error: No module named 'triton.language.target_info'", "3.2.0",
     "triton.language.target_info is in Triton 3.5.0 to"),
])
def test_a_log_is_told_which_triton_releases_have_the_name(line, triton, says):
    assert says in annotate(API, line, triton=triton)


def _attribute_fact(line: str, **versions: str):
    from inductor_doctor.triage.context import LogContext, Sighting
    from inductor_doctor.triage.facts import TRITON_ATTRIBUTE, triton_name_removed

    seen = {(TRITON_ATTRIBUTE, 0): Sighting(1, [line])}
    return triton_name_removed(LogContext(seen), {k: [v] for k, v in versions.items()})


# The attribute lines of triton-lang/triton#4918, vllm-project/vllm#29062, triton-lang/triton#695 (in
# tests/data/triage/) and state-spaces/mamba#219.
def test_an_attribute_a_later_triton_removed_is_sure_and_one_every_triton_or_the_logs_has_is_not():
    log1p = "AttributeError: module 'triton.language.math' has no attribute 'log1p'. Did you mean: 'log2'?"
    found = _attribute_fact(log1p)
    assert found is not None and found[1].startswith("Triton 3.0.0 removed log1p")
    assert _attribute_fact(log1p, triton="2.2.0") is None  # the log's own Triton has it
    assert _attribute_fact(log1p, triton="3.1.0") is not None
    constexpr_function = "AttributeError: module 'triton.language' has no attribute 'constexpr_function'"
    assert "Triton 3.5.0 removed constexpr_function" in _attribute_fact(constexpr_function)[1]
    assert _attribute_fact("AttributeError: module 'triton.language' has no attribute 'constexpr'") is None
    # newer than an old Triton (math arrived in 2.1.0): not a removal
    assert _attribute_fact("AttributeError: module 'triton.language' has no attribute 'math'") is None


def test_the_probe_reads_a_real_package_beside_a_real_triton_and_a_repeat_is_cheap(tmp_path):
    """The reader's semantics on files: a module the Triton tree lacks, a name its module does not define,
    and ones it does (the real Triton and bitsandbytes are in test_states_extensions.py, -m envs)."""
    import time

    from inductor_doctor.core.facts import TritonInfo
    from inductor_doctor.probe import triton_imports

    site = tmp_path / "site"
    tri = site / "triton"
    (tri / "language").mkdir(parents=True)
    (tri / "__init__.py").write_text("from .runtime import jit\n__version__ = '3.7.1'\n")
    (tri / "language" / "__init__.py").write_text("from .core import program_id\ndef cdiv(a, b): pass\n")
    pkg = site / "userpkg"
    pkg.mkdir()
    (pkg / "k.py").write_text("import triton\n"
                              "from triton.language import cdiv, libdevice\nimport triton.ops\n")
    info = site / "userpkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: userpkg\nRequires-Dist: triton>=2\n\n")
    (info / "RECORD").write_text("userpkg/k.py,,\n")
    scan = triton_imports.scan({"sys_path": [str(site)]}, TritonInfo(version="3.7.1", path=str(tri)), 30)
    assert scan is not None and scan.packages == ["userpkg 1.0"] and scan.imports == 3
    missing = sorted((m.module, m.name) for m in scan.missing)
    assert missing == [("triton.language", "libdevice"), ("triton.ops", None)]
    start = time.monotonic()
    triton_imports.scan({"sys_path": [str(site)]}, TritonInfo(version="3.7.1", path=str(tri)), 30)
    assert time.monotonic() - start < 0.1


# --- cuda-malloc-async-graphs -------------------------------------------------------------------------

ASYNC = "cuda-malloc-async-graphs"


def cuda_facts(version="2.13.0+cu130", **env):
    return make_facts(torch_version=version, cuda="13.0", env=env)


def test_the_async_allocator_with_a_release_whose_graph_trees_check_the_pool_is_likely():
    out = only(ASYNC, cuda_facts(PYTORCH_CUDA_ALLOC_CONF="expandable_segments:False,backend:cudaMallocAsync"))
    assert out.status is Status.LIKELY, out
    assert "refuses checkPoolLiveAllocations, which its CUDA graph trees call" in out.reason
    assert "slow_path_cudagraph_asserts is on by default" in out.reason


def test_the_variable_counts_only_where_the_release_reads_it():
    # PYTORCH_ALLOC_CONF is read from torch 2.9 on (libc10's strings, per release).
    assert only(ASYNC, cuda_facts(PYTORCH_ALLOC_CONF="backend:cudaMallocAsync")).status is Status.LIKELY
    old = only(ASYNC, cuda_facts("2.5.1+cu124", PYTORCH_ALLOC_CONF="backend:cudaMallocAsync"))
    assert old.status is Status.NOT_APPLICABLE and "does not read that variable" in old.reason, old.reason
    before = only(ASYNC, cuda_facts("2.0.1+cu118", PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync"))
    assert before.status is Status.OK  # 2.0's graph trees did not call it


def test_torchs_own_allocator_or_a_cpu_torch_is_not_applicable():
    assert only(ASYNC, cuda_facts(PYTORCH_CUDA_ALLOC_CONF="backend:native")).status is Status.NOT_APPLICABLE
    assert only(ASYNC, make_facts(env={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"})).status is \
        Status.NOT_APPLICABLE  # a CPU-only torch


# --- cublas-pairing -----------------------------------------------------------------------------------

CUBLAS = "cublas-pairing"


def cublas_facts(torch_version, cuda, installed, pinned, sm="9.0", name="NVIDIA H100 80GB HBM3"):
    from inductor_doctor.core.facts import CublasInfo, GPUInfo

    wheel = "nvidia-cublas-cu12" if cuda.startswith("12") else "nvidia-cublas"
    return make_facts(torch_version=torch_version, cuda=cuda, gpus=[GPUInfo(index=0, name=name, sm=sm)],
                      cublas=CublasInfo(wheel=wheel, installed=installed, pinned=pinned))


def test_the_known_bad_pairing_of_torch_2_10_cu128_and_its_own_cublas_is_likely_on_each_gpu():
    out = only(CUBLAS, cublas_facts("2.10.0+cu128", "12.8", "12.8.4.1", "==12.8.4.1"))
    assert (out.status, out.device) == (Status.LIKELY, "cuda:0"), out
    assert "known-bad pairing (pytorch/pytorch#174949, #170676)" in out.reason
    fixed = only(CUBLAS, cublas_facts("2.10.0+cu128", "12.8", "12.9.1.4", "==12.8.4.1"))
    assert fixed.status is Status.LIKELY and "torch pins nvidia-cublas-cu12==12.8.4.1" in fixed.reason
    before = only(CUBLAS, cublas_facts("2.8.0+cu128", "12.8", "12.8.4.1", "==12.8.4.1"))
    assert before.status is Status.OK


def test_cublas_13_5_1_27_on_an_rtx_50xx_is_likely_and_elsewhere_ok():
    rtx = only(CUBLAS, cublas_facts("2.13.0+cu130", "13.0", "13.5.1.27", None, "12.0", "RTX 5090"))
    assert rtx.status is Status.LIKELY and "feedstock#521" in rtx.reason
    h100 = only(CUBLAS, cublas_facts("2.13.0+cu130", "13.0", "13.5.1.27", None))
    assert h100.status is Status.OK


def test_the_probe_reads_the_pin_from_torchs_requirements():
    from inductor_doctor.probe import cublas

    target = {"torch_requires": ["filelock", "nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\""]}
    info = cublas.read(target, {"nvidia-cublas-cu12": "12.9.1.4"})
    assert info is not None
    assert (info.wheel, info.installed, info.pinned) == ("nvidia-cublas-cu12", "12.9.1.4", "==12.8.4.1")
    assert cublas.read({"torch_requires": ["filelock"]}, {}) is None


# --- xla-pjrt-plugin-skew ---------------------------------------------------------------------------------

PJRT = "xla-pjrt-plugin-skew"


def xla_facts(dist="libtpu", version="0.0.23", pinned="==0.0.21", library_path=None):
    from inductor_doctor.core.facts import PjrtPluginInfo, XlaInfo

    return make_facts(xla=XlaInfo(version="2.8.0", path="/venv/site-packages/torch_xla"),
                      pjrt=PjrtPluginInfo(distribution=dist, version=version, pinned=pinned,
                                          library_path=library_path))


def test_a_libtpu_outside_torch_xlas_pin_is_likely_and_the_pinned_one_ok():
    out = only(PJRT, xla_facts())
    assert out.status is Status.LIKELY and "pins libtpu==0.0.21" in out.reason, out.reason
    assert only(PJRT, xla_facts(version="0.0.21")).status is Status.OK
    assert only(PJRT, xla_facts(dist=None, version=None)).status is Status.NOT_APPLICABLE
    assert "TPU_LIBRARY_PATH=/opt/libtpu.so" in only(PJRT, xla_facts(library_path="/opt/libtpu.so")).reason
    assert only(PJRT, make_facts()).status is Status.NOT_APPLICABLE  # no torch_xla


def test_the_pin_is_read_from_torch_xlas_metadata(tmp_path):
    from inductor_doctor.core.facts import XlaInfo
    from inductor_doctor.probe import pjrt

    info = tmp_path / "torch_xla-2.8.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: torch_xla\nRequires-Dist: absl-py\n"
                                   "Requires-Dist: libtpu==0.0.21; extra == \"tpu\"\n\n")
    found = pjrt.read(XlaInfo(version="2.8.0", path=str(tmp_path / "torch_xla")), {"libtpu": "0.0.23"}, {})
    assert found is not None and (found.distribution, found.version, found.pinned) == ("libtpu", "0.0.23",
                                                                                        "==0.0.21")
