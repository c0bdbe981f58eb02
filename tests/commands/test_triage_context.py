"""`explain --log` says "this is X" only when the error stands in X's own context and release.

Built from the real logs of the corpus (`tests/data/triage/`): the same words from another cause
(Inductor's own kernel, a numpy library under a memory cap, a cmake binary, a Mac) are at most
"this looks like", with the reason a user reads; the versions a log states (a collect_env block, a
`PyTorch version:` line) demote a match outside the issue's range and put an upgrade the log
already has last. What the user sees is asserted through the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from inductor_doctor.schemas import validate
from inductor_doctor.triage.scan import lowered, normalize
from inductor_doctor.triage.versions import versions_mentioned

CORPUS = Path(__file__).resolve().parents[1] / "data" / "triage"


def body(name: str) -> str:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return text[text.index("# ---\n") + len("# ---\n") :]


def triage_json(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "pasted.log"
    log.write_text(text, encoding="utf-8")
    proc = run_cli(["explain", "--log", str(log), "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    return doc


def triage_text(tmp_path: Path, text: str) -> str:
    log = tmp_path / "pasted.log"
    log.write_text(text, encoding="utf-8")
    proc = run_cli(["explain", "--log", str(log)], env={"COLUMNS": "100"})
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def only(doc: dict, issue_id: str) -> dict:
    (match,) = [r for r in doc["results"] if r["id"] == issue_id]
    return match


# --- anchoring ----------------------------------------------------------------------------------

#: (hard negative, the issue whose words it shares, what the reason must name): the log shows the
#: issue's subject (torch's or Inductor's frames), so the words are worth a "looks like".
UNANCHORED = [
    ("triton_constexpr_dynamic__neg__pytorch_133716.log", "triton-constexpr-dynamic", "@triton.jit kernel"),
    ("cache_dir_noexec__neg__pytorch_16558.log", "cache-dir-noexec", "compile cache"),
    ("triton_ptxas_driver__neg__diffvg_84.log", "triton-ptxas-driver", "Triton or Inductor"),
]
#: (hard negative, the issue whose words it shares): nothing else in the log ties the words to the
#: issue's subject (a cmake binary, a C++ program, a setup.py, no torch at all), or the log carries the
#: sign of the look-alike the issue's page names (a Mac, a build-isolation env): no match at all.
UNTIED = [
    ("cache_dir_noexec__neg__jobeinabox_4.log", "cache-dir-noexec"),
    ("torch_cpu_only_build__neg__pytorch_96976.log", "torch-cpu-only-build"),
    ("torch_cpu_only_build__neg__wan2gp_1680.log", "torch-cpu-only-build"),
    ("torch_missing__neg__pytorch3d_2014.log", "torch-missing"),
    # AOTInductor's own "conflicting declaration": Inductor's frames, but nothing of the block mask
    ("unrelated__aoti_conflicting_declaration_pytorch_111711.log", "block-mask-cpu"),
]


@pytest.mark.parametrize("name, issue_id", UNTIED, ids=[u[0].split(".")[0] for u in UNTIED])
def test_the_words_with_nothing_of_the_subject_or_beside_a_look_alike_are_no_match(tmp_path, name, issue_id):
    """No "looks like" without the issue's subject in the log, none beside a look-alike's sign:
    nothing matched, and the exit code says so (1)."""
    log = tmp_path / "pasted.log"
    log.write_text(body(name), encoding="utf-8")
    proc = run_cli(["explain", "--log", str(log), "--format", "json"])
    doc = json.loads(proc.stdout)
    assert issue_id not in {r["id"] for r in doc["results"]}
    assert proc.returncode == 1, doc["summary"]


@pytest.mark.parametrize("name, issue_id, context", UNANCHORED, ids=[u[0].split(".")[0] for u in UNANCHORED])
def test_the_words_without_the_context_are_only_a_look_alike(tmp_path, name, issue_id, context):
    """The issue's error text in another bug's log: "this looks like", and why, never "this is"."""
    doc = triage_json(tmp_path, body(name))
    match = only(doc, issue_id)
    assert match["confidence"] == "partial"
    assert match["assessment"] == f"this looks like {issue_id}"
    assert any(context in reason for reason in match["because"]), match["because"]


#: (positive, issue): the same signatures in the issue's own context stay exact.
ANCHORED = [
    ("triton_constexpr__pytorch_136512.log", "triton-constexpr-dynamic"),
    ("triton_constexpr__fla_160.log", "triton-constexpr-dynamic"),
    ("cache_dir_noexec__pytorch_123054.log", "cache-dir-noexec"),
    ("libstdcxx_too_old__pixel_perfect_sfm_11.log", "libstdcxx-too-old"),
    ("python_h__pytorch_97146.log", "python-headers-missing"),
    ("python_headers_missing__triton_windows_83.log", "python-headers-missing"),
    ("ptxas_driver__triton_2971.log", "triton-ptxas-driver"),
    ("torch_missing__deep_live_cam_934.log", "torch-missing"),
]


@pytest.mark.parametrize("name, issue_id", ANCHORED, ids=[a[0].split(".")[0] for a in ANCHORED])
def test_the_words_in_their_context_are_the_issue(tmp_path, name, issue_id):
    doc = triage_json(tmp_path, body(name))
    match = doc["results"][0]
    assert (match["id"], match["confidence"], match["because"]) == (issue_id, "exact", [])
    assert match["assessment"] == f"this is {issue_id}"


def test_an_inductor_kernel_nameerror_is_not_a_user_kernel_one(tmp_path):
    """The report that started this: Inductor's own kernel launch, then the NameError. The text a
    user reads says "looks like", names what is missing, and how to check."""
    log = (
        '  File "/tmp/torchinductor_user/ab/cabc.py", line 45, in call\n'
        "    triton_poi_fused_add_mul_0.run(buf0, arg1_1, s2, grid=grid(s2), stream=stream0)\n"
        "NameError: name 's2' is not defined\n"
    )
    out = triage_text(tmp_path, log)
    assert "this looks like triton-constexpr-dynamic" in out and "this is triton" not in out
    assert "user @triton.jit kernel" in " ".join(out.split())
    assert "check with: inductor-doctor explain --log" in out and "--check" in out


# --- versions -----------------------------------------------------------------------------------


def test_a_collect_env_block_is_read_for_torch_and_cuda_apart(tmp_path):
    """"CUDA used to build PyTorch: 12.1" is CUDA's version, not torch's (pytorch#123159's block)."""
    data, _ = normalize(body("libcuda_not_found__pytorch_123159_title.log").encode())
    versions = versions_mentioned(lowered(data))
    assert versions["torch"] == ["2.1.2"] and versions["cuda"] == ["12.1"]


def test_a_release_outside_the_range_demotes_and_says_why(tmp_path):
    """pytorch#104102 states torch 2.1.0a0: before user kernels were traced at all."""
    doc = triage_json(tmp_path, body("triton_constexpr_dynamic__neg__pytorch_104102.log"))
    match = only(doc, "triton-constexpr-dynamic")
    assert match["confidence"] == "partial" and match["version_in_range"] is False
    assert any("outside the affected range" in r for r in match["because"])


def test_an_upgrade_the_log_already_has_is_not_offered_first(tmp_path):
    """A real constexpr log pasted with the torch it ran on: 2.13 already has the fix, so the
    match is a look-alike, and `pip install 'torch>=2.6'` comes last, saying why."""
    doc = triage_json(tmp_path, body("triton_constexpr__pytorch_136512.log") + "\nPyTorch version: 2.13.0\n")
    match = only(doc, "triton-constexpr-dynamic")
    assert match["confidence"] == "partial"
    commands = [w["command"] for w in match["workarounds"]]
    upgrade = commands.index("pip install 'torch>=2.6'")
    assert upgrade == len(commands) - 1
    assert match["workarounds"][upgrade]["moot"] == "the log's torch 2.13.0 already satisfies this"
    assert all(w["moot"] is None for w in match["workarounds"][:upgrade])


def test_a_release_inside_the_range_keeps_the_match_exact(tmp_path):
    log = body("triton_constexpr__pytorch_136512.log") + "\nPyTorch version: 2.5.1+cu124\n"
    doc = triage_json(tmp_path, log)
    match = only(doc, "triton-constexpr-dynamic")
    assert match["confidence"] == "exact" and match["version_in_range"] is True
    assert all(w["moot"] is None for w in match["workarounds"])


def test_a_failure_class_is_not_bounded_by_its_modules_instance(tmp_path):
    """triton-version-skew's range is the AttrsDescriptor pair; torch 2.2's get_cuda_stream import
    (pytorch#120199) is the same failure on another release pair, and stays exact."""
    doc = triage_json(tmp_path, body("triton_version_skew__pytorch_120199.log"))
    match = only(doc, "triton-version-skew")
    assert match["confidence"] == "exact" and match["version_in_range"] is False
    assert "another release pair" in match["note"]


# --- the log plus this machine ------------------------------------------------------------------

#: (hard negative, the issue whose words it shares): the error with nothing around it that tells its
#: cause (another program's GLIBCXX error, a third-party build's missing header or old compiler); the
#: log alone cannot decide, a machine can: "possibly X", naming the fact, and exit 1 all the same.
POSSIBLY = [
    ("libstdcxx_too_old__neg__pytorch_3147.log", "libstdcxx-too-old", "libstdc++"),
    ("libstdcxx_too_old__neg__dnascent_4.log", "libstdcxx-too-old", "libstdc++"),
    ("python_headers_missing__neg__clodius_9.log", "python-headers-missing", "Python.h"),
    ("compiler_too_old__neg__pytorch_103371.log", "compiler-too-old", "C++ compiler"),
]


@pytest.mark.parametrize("name, issue_id, fact", POSSIBLY, ids=[u[0].split(".")[0] for u in POSSIBLY])
def test_the_words_alone_are_possibly_the_issue_decided_by_one_fact(tmp_path, name, issue_id, fact):
    """Never "this is" nor "this looks like": "possibly X", with the one fact of a machine that decides,
    and not a diagnosis (exit 1) unless --match possible."""
    log = tmp_path / "pasted.log"
    log.write_text(body(name), encoding="utf-8")
    proc = run_cli(["explain", "--log", str(log), "--format", "json"])
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    match = only(doc, issue_id)
    assert match["confidence"] == "possible" and match["assessment"] == f"possibly {issue_id}"
    assert fact in match["decided_by"]
    assert proc.returncode == 1 and doc["summary"]["possible"] >= 1 and not doc["summary"]["diagnosed"]
    possible = run_cli(["explain", "--log", str(log), "--match", "possible"])
    assert possible.returncode == 0, possible.stdout


BARE_GLIBCXX = "/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found\n"


def test_a_bare_glibcxx_line_names_the_fact_and_the_command_that_decides(tmp_path):
    text = triage_text(tmp_path, BARE_GLIBCXX)
    assert "possibly libstdcxx-too-old" in text
    assert "decided by this machine's libstdc++" in text
    assert "explain --log" in text and "--check" in text
    assert "this is libstdcxx" not in text and "looks like libstdcxx" not in text


def test_check_decides_a_possible_match_on_this_machine(tmp_path):
    """`--check` runs the issue's check here: this machine's libstdc++ and its CUDA-less torch say no,
    so the bare lines are not those issues here; the check's lines say so, and the exit is 1."""
    log = tmp_path / "pasted.log"
    bare_header = "fatal error: cuda_runtime.h: No such file or directory\n"
    bare_kernel = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    log.write_text(BARE_GLIBCXX + bare_header + bare_kernel, encoding="utf-8")
    before = json.loads(run_cli(["explain", "--log", str(log), "--format", "json"]).stdout)
    assert {r["id"]: r["confidence"] for r in before["results"]} == {
        "libstdcxx-too-old": "possible", "cuda-toolkit-missing": "possible",
        "torch-gpu-arch-missing": "possible"}
    proc = run_cli(["explain", "--log", str(log), "--check", "--format", "json"])
    doc = json.loads(proc.stdout)
    validate("triage", doc)
    statuses = {f["id"]: f["status"] for f in doc["check"]["results"]}
    assert doc["check"]["ran"]
    assert set(statuses) == {"libstdcxx-too-old", "cuda-toolkit-missing", "torch-gpu-arch-missing"}
    for issue_id, status in statuses.items():  # what this machine says decides each
        found = {r["id"]: r for r in doc["results"]}.get(issue_id)
        if status in ("ok", "not-applicable"):
            assert found is None
        elif status == "affected":
            assert found["confidence"] == "exact" and "decided on this machine" in found["note"]
    assert statuses["cuda-toolkit-missing"] == "not-applicable"  # a CPU-only torch here
    assert statuses["torch-gpu-arch-missing"] == "not-applicable"  # ... so no CUDA kernel of its failed
    assert proc.returncode == (0 if "affected" in statuses.values() else 1)
    text = run_cli(["explain", "--log", str(log), "--check"], env={"COLUMNS": "100"}).stdout
    assert "cuda-toolkit-missing on" in text and "not-applicable" in text
