"""const-data-ptr-abi decides on the ABI probe's facts: the probe records how far it got, what the
compiler references and what libtorch lacks; the rule alone says affected, ok, inconclusive or
not-applicable, and why (the same words the probe used to write itself)."""

from __future__ import annotations

import pytest

from inductor_doctor.check.environment import environment_of
from inductor_doctor.core.facts import AbiInfo, Facts, PythonInfo
from inductor_doctor.core.model import Status
from inductor_doctor.kb.const_data_ptr_abi import judge, rule

TN = "_ZNK2at10TensorBase14const_data_ptrIlTnNSt9enable_ifIXntsr3stdE10is_const_vIT_EEiE4typeELi0EEEPKS3_v"
OLD = "_ZNK2at10TensorBase14const_data_ptrIlLi0EEEPKT_v"
CLANG = dict(compiler="clang++-19", compiler_version="clang 19.1.7", flags=["-std=c++17"],
             torch_version="2.9.0")
WHO = "clang++-19 (clang 19.1.7) with -std=c++17"


@pytest.mark.parametrize("abi, status, reason", [
    (AbiInfo(stage="compared", referenced=[TN], missing=[TN], exported_spelling=OLD, **CLANG),
     Status.AFFECTED, f"{WHO} references {TN}, which libtorch_cpu.so (torch 2.9.0) does not export; it "
     f"exports {OLD} (clang >= 18 mangling; -fclang-abi-compat=17 or g++ avoids it)"),
    (AbiInfo(stage="compared", referenced=[OLD], **CLANG),
     Status.OK, f"{WHO} references {OLD}, which libtorch_cpu.so (torch 2.9.0) exports"),
    (AbiInfo(stage="compared", **CLANG),
     Status.OK, f"{WHO} references no const_data_ptr symbol (nothing to mismatch)"),
    (AbiInfo(stage="no-torch"), Status.NOT_APPLICABLE, "torch is not installed for this interpreter"),
    (AbiInfo(stage="no-headers", torch_version="2.1.0"), Status.NOT_APPLICABLE,
     "torch 2.1.0 ships no C++ headers (ATen/core/TensorBase.h): no extension builds against it"),
    (AbiInfo(stage="no-library"), Status.INCONCLUSIVE,
     "torch has headers but no libtorch_cpu.so to look the symbol up in"),
    (AbiInfo(stage="no-compiler", error="`clang++-99` (CXX) is not on PATH"), Status.INCONCLUSIVE,
     "no C++ compiler: `clang++-99` (CXX) is not on PATH"),
    (AbiInfo(stage="timed-out", error="compiling the probe timed out after 60s", **CLANG),
     Status.INCONCLUSIVE, f"{WHO}: compiling the probe timed out after 60s"),
    (AbiInfo(stage="not-compiled", error="error: unknown argument '-fno-x'", **CLANG),
     Status.INCONCLUSIVE, f"{WHO} cannot compile the probe: error: unknown argument '-fno-x'"),
    (AbiInfo(stage="failed", error="cannot read /x.so as ELF: bad magic"), Status.INCONCLUSIVE,
     "cannot read /x.so as ELF: bad magic"),
    (AbiInfo(stage="pending"), Status.INCONCLUSIVE, "the ABI compile is still running"),
])
def test_the_rule_decides_on_what_the_probe_found(abi, status, reason):
    assert judge(abi) == (status, reason)
    facts = Facts(python=PythonInfo("/p", "3.11.7"), abi=abi)
    (outcome,) = rule(facts)
    assert (outcome.status, outcome.reason, outcome.device) == (status, reason, "toolchain")
    environment = environment_of(facts)
    assert list(environment["abi"])[:2] == ["status", "reason"], "the report states the verdict first"
    assert (environment["abi"]["status"], environment["abi"]["reason"]) == (status.value, reason)
    assert "stage" not in environment["abi"]


def test_a_probe_that_did_not_run_is_no_verdict():
    facts = Facts(python=PythonInfo("/p", "3.11.7"))
    (outcome,) = rule(facts)
    assert outcome.status is Status.INCONCLUSIVE and "did not run" in outcome.reason
    assert environment_of(facts)["abi"]["status"] is None


def test_the_probe_module_decides_nothing():
    from inductor_doctor.probe import abi

    assert not hasattr(AbiInfo(), "status") and not hasattr(AbiInfo(), "reason")
    assert "Status" not in vars(abi)
