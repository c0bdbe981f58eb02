"""The four canary-backed seed issues, in process and fast: static rules on built facts and fake
torch trees, signatures on the real error texts, and the classifier on recorded canary endings.

Nothing here imports torch or runs a canary; the real runs are in test_seed_cli.py,
test_seed_canaries.py, test_seed_envs.py and test_seed_gpu.py.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

import pytest

from inductor_doctor.check.engine import classify
from inductor_doctor.check.runner import CanaryJob, CanaryRun
from inductor_doctor.core.facts import Facts, PythonInfo, TorchInfo, XlaInfo
from inductor_doctor.core.model import Basis, KnownIssue, Status
from inductor_doctor.kb import registry
from inductor_doctor.kb import view_dtype_align as vda

SEEDS = ("block-mask-cpu", "triton-constexpr-dynamic", "view-dtype-align", "xla-donor-hash")


def issue(issue_id: str) -> KnownIssue:
    found = registry().find(issue_id)
    assert found is not None, issue_id
    return found


def facts(torch: Optional[str] = None, path: Optional[Path] = None, xla: Optional[str] = None,
          env: Optional[dict] = None) -> Facts:
    f = Facts(python=PythonInfo(executable="/usr/bin/python3", version="3.11.7"))
    if torch:
        f.torch = TorchInfo(version=torch, path=str(path) if path else None)
    if xla:
        f.xla = XlaInfo(version=xla)
    f.env = dict(env or {})
    return f


def outcome(issue_id: str, f: Facts):
    rule = issue(issue_id).rule
    assert rule is not None
    (o,) = rule(f)
    return o


def fake_torch(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "torch"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    root.mkdir(exist_ok=True)
    return root


# -- metadata ---------------------------------------------------------------------------------


@pytest.mark.parametrize("issue_id", SEEDS)
def test_seed_issue_has_canary_rule_and_runnable_workaround(issue_id):
    i = issue(issue_id)
    assert i.rule is not None and i.canary is not None
    assert any(w.command for w in i.workarounds), "at least one workaround is a runnable command"
    assert all(w.command is None or "\n" not in w.command for w in i.workarounds)


@pytest.mark.parametrize(
    "issue_id,refs",
    [
        ("block-mask-cpu", {"pytorch/pytorch#151290", "pytorch/pytorch#151887"}),
        ("triton-constexpr-dynamic",
         {"pytorch/pytorch#136504", "pytorch/pytorch#136512", "fla-org/flash-linear-attention#160"}),
        ("view-dtype-align",
         {"pytorch/pytorch#151589", "pytorch/pytorch#151859", "city96/ComfyUI-GGUF#257"}),
        ("xla-donor-hash", {"pytorch/xla#8464", "pytorch/xla#8467"}),
    ],
)
def test_refs_are_stored_in_full(issue_id, refs):
    assert set(issue(issue_id).upstream) == refs


def test_runnable_workarounds_named_by_the_contract():
    commands = {w.command for i in SEEDS for w in issue(i).workarounds}
    assert "export TORCHINDUCTOR_ALIGNMENT_ASSERTS=0" in commands
    assert "export XLA_ENABLE_PARAM_ALIASING=0" in commands
    assert "pip install 'torch>=2.6'" in commands


def test_canary_budget():
    """Measured: block-mask ~30 s cold on 2 cores, so it belongs in the default check."""
    assert not issue("block-mask-cpu").canary.deep
    assert issue("block-mask-cpu").canary.timeout_s >= 120
    assert issue("xla-donor-hash").canary.affected_exit_signals == ()  # an abort alone is not the bug
    assert issue("triton-constexpr-dynamic").canary.needs == ("torch", "triton")
    assert issue("xla-donor-hash").canary.needs == ("torch", "torch_xla")


# -- rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize("issue_id", SEEDS)
def test_no_component_is_not_applicable(issue_id):
    assert outcome(issue_id, facts()).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(
    "version,status",
    [("2.8.0.dev20250410+cpu", Status.LIKELY), ("2.8.0.dev20250422", Status.LIKELY),
     ("2.8.0.dev20250423", Status.LIKELY), ("2.8.0.dev20250424", Status.OK),
     ("2.8.0.dev20250301", Status.OK), ("2.7.0", Status.OK), ("2.8.0", Status.OK),
     ("2.13.0+cpu", Status.OK), ("2.8.0a0+git1234", Status.INCONCLUSIVE)],
)
def test_block_mask_rule_is_the_nightly_window(version, status):
    o = outcome("block-mask-cpu", facts(version))
    assert o.status is status, o.reason
    assert o.basis is Basis.VERSION


TRITON_WRAP = "_higher_order_ops/triton_kernel_wrap.py"


def test_triton_rule_fix_present_is_ok_static(tmp_path):
    root = fake_torch(tmp_path, {TRITON_WRAP: "x = variable.specialize_symbolic(arg)\n"})
    o = outcome("triton-constexpr-dynamic", facts("2.6.0", root))
    assert (o.status, o.basis) == (Status.OK, Basis.STATIC)
    assert "specialize_symbolic" in o.reason


def test_triton_rule_fix_absent_is_likely_static(tmp_path):
    root = fake_torch(tmp_path, {TRITON_WRAP: "class TritonHOPifier:\n    pass\n"})
    o = outcome("triton-constexpr-dynamic", facts("2.5.1", root))
    assert (o.status, o.basis) == (Status.LIKELY, Basis.STATIC)


@pytest.mark.parametrize(
    "version,status",
    [("2.5.1", Status.LIKELY), ("2.2.0", Status.LIKELY), ("2.1.2", Status.NOT_APPLICABLE),
     ("2.6.0", Status.INCONCLUSIVE)],
)
def test_triton_rule_without_readable_source_falls_back_to_version(tmp_path, version, status):
    o = outcome("triton-constexpr-dynamic", facts(version, tmp_path / "nowhere"))
    assert o.status is status, o.reason


PRE_FIX_IR = '''
def is_unaligned(node: IRNode) -> bool:
    if isinstance(node, (TensorBox, StorageBox)):
        return is_unaligned(node.data)

    if isinstance(node, ReinterpretView):
        return is_unaligned(node.data)

    if isinstance(node, Buffer):
        return node.get_name() in V.graph.unaligned_buffers

    # assume to be aligned otherwise
    return False


@ir_dataclass
class BaseView(IRNode):
    data: IRNode
    offset = 0

    def codegen_alignment_asserts(self, wrapper):
        wrapper.writeline(f"assert_alignment({name}, {GPU_ALIGN_BYTES}, {op_name!r})")
'''

FIXED_IR = PRE_FIX_IR.replace(
    "    if isinstance(node, ReinterpretView):\n        return is_unaligned(node.data)\n",
    "    if isinstance(node, ReinterpretView):\n        layout = node.layout\n"
    "        has_unaligned_layout = not V.graph.sizevars.statically_known_multiple_of(\n"
    "            layout.offset * get_dtype_size(layout.dtype), GPU_ALIGN_BYTES\n        )\n"
    "        return is_unaligned(node.data) or has_unaligned_layout\n",
)


@pytest.mark.parametrize(
    "text,status",
    [(PRE_FIX_IR, Status.LIKELY), (FIXED_IR, Status.OK),
     ("def is_unaligned(node):\n    return False\n", Status.OK)],  # no asserts generated at all
    ids=["pre-fix", "fixed", "no-asserts"],
)
def test_view_align_rule_reads_ir_py(tmp_path, text, status):
    root = fake_torch(tmp_path, {"_inductor/ir.py": text})
    o = outcome("view-dtype-align", facts("2.8.0.dev20250415", root))
    assert (o.status, o.basis) == (status, Basis.STATIC), o.reason


def test_view_align_pre_fix_offset_elsewhere_in_file_does_not_count():
    """`offset` appears all over ir.py; only is_unaligned's own body may count."""
    assert "offset" in PRE_FIX_IR
    o = vda.from_source(PRE_FIX_IR)
    assert o is not None and o.status is Status.LIKELY


@pytest.mark.parametrize(
    "version,status",
    [("2.8.0.dev20250408", Status.LIKELY), ("2.8.0.dev20250422+cu128", Status.LIKELY),
     ("2.8.0.dev20250423", Status.OK), ("2.8.0.dev20250407", Status.OK), ("2.7.1", Status.OK),
     ("2.8.0", Status.OK), ("2.13.0", Status.OK), ("2.8.0a0+gitdeadbee", Status.INCONCLUSIVE)],
)
def test_view_align_rule_version_fallback(tmp_path, version, status):
    o = outcome("view-dtype-align", facts(version, tmp_path / "nowhere"))
    assert (o.status, o.basis) == (status, Basis.VERSION), o.reason


def test_view_align_rule_mentions_workaround_env(tmp_path):
    root = fake_torch(tmp_path, {"_inductor/ir.py": PRE_FIX_IR})
    o = outcome("view-dtype-align", facts("2.8.0.dev20250415", root,
                                          env={"TORCHINDUCTOR_ALIGNMENT_ASSERTS": "0"}))
    assert o.status is Status.LIKELY and "TORCHINDUCTOR_ALIGNMENT_ASSERTS=0 is set" in o.reason


@pytest.mark.parametrize(
    "version,status",
    [("2.5.1", Status.LIKELY), ("2.4.0", Status.LIKELY), ("2.6.0", Status.OK), ("2.6.0rc3", Status.OK),
     ("2.9.0+cpu", Status.OK)],
)
def test_xla_rule_by_version(version, status):
    o = outcome("xla-donor-hash", facts("2.5.1", xla=version))
    assert (o.status, o.device) == (status, "xla")


def test_system_torch_tree_is_read_as_text():
    """This machine's torch (2.13): both source rules find the fix without importing torch."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        pytest.skip("no torch here")
    root = Path(spec.origin).parent
    for issue_id in ("triton-constexpr-dynamic", "view-dtype-align"):
        o = outcome(issue_id, facts("2.13.0", root))
        assert (o.status, o.basis) == (Status.OK, Basis.STATIC), o.reason


# -- signatures -------------------------------------------------------------------------------

INDUCTOR_WRAPPED = "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n\nOutput:\n{}\n"
DYNAMO_WRAPPED = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n{}\n"

MATCHES = {
    "block-mask-cpu": [
        INDUCTOR_WRAPPED.format("/tmp/t/cx.cpp:288:10: error: conflicting declaration \u2018auto i8\u2019"),
        DYNAMO_WRAPPED.format("CppCompileError: C++ compile error\nx.cpp:3:5: error: conflicting "
                              "declaration 'int tmp0'"),
        "Conflicting declaration found in create_block_mask",
    ],
    "triton-constexpr-dynamic": [
        DYNAMO_WRAPPED.format("NameError: name 's0' is not defined"),
        "torch._inductor.exc.InductorError: NameError: name 's2' is not defined",
        "NameError: name 'u12' is not defined",
    ],
    "view-dtype-align": [
        "AssertionError: Expect the tensor to be 16 bytes aligned. Fail due to storage_offset=1 itemsize=2",
        "AssertionError: \nError in op: torch.ops.aten.view.dtype\nExpect the tensor to be 16 bytes "
        "aligned. Fail due to storage_offset=1 itemsize=4",
    ],
    "xla-donor-hash": [
        "F0000 00:00:1733 pjrt_computation_client.cc:529] Non-OK-status: status\nStatus: "
        "INVALID_ARGUMENT: CopyToHostAsync() called on deleted or donated buffer",
        "Results: t1=4, t2=4",
    ],
}
NON_MATCHES = {
    "block-mask-cpu": ["cpp_prefix.h:4:10: fatal error: 'omp.h' file not found",
                       INDUCTOR_WRAPPED.format("x.cpp: error: redefinition of 'x'")],
    "triton-constexpr-dynamic": ["NameError: name 'foo' is not defined", "NameError: name 's0x' is"],
    "view-dtype-align": ["alignment cannot be 0", "AssertionError: expected aligned"],
    "xla-donor-hash": ["Results: t1=3, t2=4", "Results: t1=41, t2=4"],
}


def exact_hit(issue_id: str, text: str) -> bool:
    return any(s.strength == "exact" and s.search(text) for s in issue(issue_id).signatures)


@pytest.mark.parametrize("issue_id,text", [(i, t) for i, ts in MATCHES.items() for t in ts])
def test_exact_signature_matches_real_error_text(issue_id, text):
    assert exact_hit(issue_id, text)


@pytest.mark.parametrize("issue_id,text", [(i, t) for i, ts in NON_MATCHES.items() for t in ts])
def test_exact_signature_ignores_other_errors(issue_id, text):
    assert not exact_hit(issue_id, text)


def test_no_seed_signature_claims_another_seeds_error():
    for owner, texts in MATCHES.items():
        for other in SEEDS:
            if other != owner:
                assert not any(exact_hit(other, t) for t in texts), (owner, other)


# -- the classifier on recorded canary endings ---------------------------------------------------


def run_of(issue_id: str, result: Optional[dict], returncode: int = 0, stdout: str = "",
           stderr: str = "") -> CanaryRun:
    i = issue(issue_id)
    job = CanaryJob(key=f"{issue_id}@x", script=Path(i.canary.script), device="x", python="python3",
                    timeout_s=10, affected_signals=tuple(i.canary.affected_exit_signals))
    return CanaryRun(job=job, returncode=returncode, timed_out=False, interrupted=False, duration_s=1.0,
                     stdout=stdout, stderr=stderr, result=result)


def test_xla_abort_without_its_signature_is_inconclusive():
    """torch_xla aborts for many reasons: a SIGABRT counts only with xla#8464's own words."""
    run = run_of("xla-donor-hash", None, returncode=-signal.SIGABRT,
                 stderr="F0000 00:00:1 pjrt_client.cc:99] Check failed: buffer != nullptr\n")
    status, reason, _ = classify(issue("xla-donor-hash"), run)
    assert status is Status.INCONCLUSIVE and "SIGABRT" in reason
    with_words = run_of("xla-donor-hash", None, returncode=-signal.SIGABRT,
                        stderr="F0000 Status: INVALID_ARGUMENT: CopyToHostAsync() called on deleted or "
                               "donated buffer\n")
    status, reason, _ = classify(issue("xla-donor-hash"), with_words)
    assert status is Status.AFFECTED and "SIGABRT" in reason


def test_xla_abort_with_text_names_it_and_the_workaround():
    message = ("Status: INVALID_ARGUMENT: CopyToHostAsync() called on deleted or donated buffer "
               "[pytorch/xla#8464]; with XLA_ENABLE_PARAM_ALIASING=0: clean (t1=3, t2=4)")
    run = run_of("xla-donor-hash", {"status": "error", "exc_type": "builtins.AssertionError",
                                    "message": message, "traceback": "AssertionError: " + message})
    status, reason, _ = classify(issue("xla-donor-hash"), run)
    assert status is Status.AFFECTED
    assert "donated buffer" in reason and "XLA_ENABLE_PARAM_ALIASING=0: clean" in reason


def test_other_abort_of_a_non_xla_canary_is_inconclusive():
    run = run_of("view-dtype-align", None, returncode=-signal.SIGABRT, stderr="terminate called\n")
    status, reason, _ = classify(issue("view-dtype-align"), run)
    assert status is Status.INCONCLUSIVE and "SIGABRT" in reason


def test_block_mask_other_compile_error_is_inconclusive_and_names_the_cause():
    """What torch 2.13 prints with CXX=clang++-19 and no libomp headers (Dynamo's hint last)."""
    message = ("CppCompileError: C++ compile error\n\nCommand:\nclang++-19 header.hpp -fopenmp -E\n\n"
               "Output:\n.../torch/csrc/inductor/cpp_prefix.h:4:10: fatal error: 'omp.h' file not found\n"
               "    4 | #include <omp.h>\n1 error generated.\n\n\nSet TORCHDYNAMO_VERBOSE=1 for the "
               "internal stack trace (please do this especially if you're reporting a bug to PyTorch).")
    run = run_of("block-mask-cpu", {"status": "error", "exc_type": "torch._inductor.exc.InductorError",
                                    "message": message, "traceback": "Traceback ...\n" + message})
    status, reason, evidence = classify(issue("block-mask-cpu"), run)
    assert status is Status.INCONCLUSIVE
    assert "fatal error: 'omp.h' file not found" in reason
    assert "TORCHDYNAMO_VERBOSE" not in reason
    assert evidence, "the end of the traceback comes with it"


def test_block_mask_conflicting_declaration_is_affected():
    message = ("CppCompileError: C++ compile error\nOutput:\n"
               "k.cpp:9:10: error: conflicting declaration 'auto x'")
    run = run_of("block-mask-cpu", {"status": "error", "exc_type": "torch._inductor.exc.InductorError",
                                    "message": message})
    status, reason, _ = classify(issue("block-mask-cpu"), run)
    assert status is Status.AFFECTED and "conflicting declaration" in reason


def test_skip_and_missing_are_not_applicable():
    for result in ({"status": "skip", "message": "torch.cuda.is_available() is False"},
                   {"status": "missing", "module": "triton", "message": "triton is not installed"}):
        status, _, _ = classify(issue("triton-constexpr-dynamic"), run_of("triton-constexpr-dynamic", result))
        assert status is Status.NOT_APPLICABLE


# -- plan -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec,status",
    [("torch==2.8.0.dev20250415", Status.LIKELY), ("torch==2.7.0", Status.OK), ("torch>=2.7", Status.OK)],
)
def test_block_mask_plan_never_claims_more_than_likely(spec, status):
    """A host-dependent bug: even a pin inside the nightly window is only `likely`."""
    from inductor_doctor.commands.plan import predict_issue
    from inductor_doctor.plan.resolve import PlanRequest, build_input

    inp, _, _ = build_input(PlanRequest(specs=[spec]))
    (finding,) = predict_issue(inp, issue("block-mask-cpu"))
    assert finding.status is status, finding.reason


@pytest.mark.parametrize(
    "specs,issue_id,status",
    [(["torch==2.5.1"], "triton-constexpr-dynamic", Status.AFFECTED),
     (["torch==2.6.0"], "triton-constexpr-dynamic", Status.OK),
     (["torch==2.8.0.dev20250410"], "view-dtype-align", Status.AFFECTED),
     (["torch==2.8.0"], "view-dtype-align", Status.OK),
     (["torch==2.5.1", "torch_xla==2.5.1"], "xla-donor-hash", Status.AFFECTED),
     (["torch==2.6.0", "torch_xla==2.6.0"], "xla-donor-hash", Status.OK)],
)
def test_plan_uses_the_affected_ranges(specs, issue_id, status):
    from inductor_doctor.commands.plan import predict_issue
    from inductor_doctor.plan.resolve import PlanRequest, build_input

    inp, _, _ = build_input(PlanRequest(specs=specs))
    (finding,) = predict_issue(inp, issue(issue_id))
    assert finding.status is status, finding.reason
