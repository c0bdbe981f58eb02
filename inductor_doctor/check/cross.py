"""Cross-target canaries: the GPU rows of a GPU that is not here, earned by compiling for it.

`check --gpu sm_80` (and `plan --suggest --verify` for the GPUs it is asked about) adds a column per
target GPU. One canary process per target (`target/cross_compile.py`, run by the harness like every
canary: its own process group, fresh caches, a timeout, killed whole) compiles the canary kernels for
that GPU with the Triton and the assembler under test, down to the cubin or hsaco, and says for each
kernel whether it compiled, how much shared memory it needs, and which assembler Triton ran. The
targets' processes run side by side with the other canaries, so a target costs about one Triton
import and five small compiles (about two seconds here).

Each issue that declares how a described GPU is judged (`[cross]` in its data file: `kernels`,
`partial`, `backends`) gets a cell per target: its rule on the described GPU (`described_facts`), and
the compile of its kernels (`outcome`). A failure whose text is another issue's exact signature is
that issue's (the ROCm linker missing is rocm-toolchain-layout's): it gets a row of its own on that
target (`matched_elsewhere`) even if it declares no kernels. What a compile cannot show is loading
and launching; the verdict table says so on every `ok` it gives (`Proof.COMPILED`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.check.classify import match_signature, signal_name, telling_line
from inductor_doctor.check.runner import CanaryJob, CanaryRun
from inductor_doctor.check.verdict import CanaryOutcome, Decision, decide
from inductor_doctor.core.facts import Facts, GPUInfo
from inductor_doctor.core.gpu_target import GpuTarget
from inductor_doctor.core.model import KnownIssue, Proof, RuleOutcome, Status
from inductor_doctor.target import marker, script

_PTXAS_SAYS = re.compile(r"\bptxas\b[^\n]*\b(?:fatal|error)\s*:")
SCRIPT = script("cross_compile.py")
MARKER = marker("cross_compile.py")
#: A Triton import and five small compiles take 2-5 s here; a first compile of LLVM's caches more.
TIMEOUT_S = 180.0


def _order() -> List[str]:
    """The canary's kernels in the order it compiles them (its KERNELS table), read from the script:
    a process the compiler killed died on the first kernel asked for that had not answered."""
    text = SCRIPT.read_text(encoding="utf-8")
    table = text[text.index("\nKERNELS = {"):]
    table = table[: table.index("\n}\n")]
    return re.findall(r'^    "(\w+)": \(', table, re.M)


ORDER = _order()


@dataclass(frozen=True)
class Tool:
    """A program Triton ran to build the binary: its assembler (`ptxas`, `ptxas-blackwell`) or linker."""

    tool: str
    path: str
    release: Optional[str]
    args: Tuple[str, ...] = ()

    def says(self) -> str:
        """`ptxas 12.9 (Triton's own)`, or with the path of one Triton was pointed at."""
        where = "Triton's own" if "/triton/backends/" in self.path.replace("\\", "/") else self.path
        return f"{self.tool} {self.release or '(release unknown)'} ({where})"


@dataclass(frozen=True)
class Kernel:
    """One kernel's compile for the target, as the canary reported it."""

    name: str
    status: str  # compiled | failed | skipped | lost (the process died before it answered)
    what: str = ""
    binary: Optional[str] = None  # cubin | hsaco
    size: int = 0
    shared: Optional[int] = None
    ptx: Optional[Tuple[Optional[str], Optional[str]]] = None  # (.version, .target)
    tools: Tuple[Tool, ...] = ()
    exc_type: str = ""
    error: str = ""

    @property
    def failure(self) -> str:
        """The line of the error that names the cause: ptxas's own where it speaks (Triton wraps it in a
        CalledProcessError naming the command), else the last line of the message and its causes."""
        said = next((ln.strip() for ln in self.error.splitlines() if _PTXAS_SAYS.search(ln)), "")
        return (said or telling_line(self.error) or self.exc_type)[:300]


@dataclass
class CrossRun:
    """What one target's canary process reported: each kernel, the Triton that compiled them, and
    how the process ended when it did not end well."""

    target: GpuTarget
    run: CanaryRun
    kernels: Dict[str, Kernel] = field(default_factory=dict)
    triton: Optional[str] = None
    #: Why nothing (or not everything) could be compiled: the canary could not run, timed out,
    #: found no Triton, or the compiler killed the process (then: on which kernel, with its last words).
    trouble: Optional[str] = None
    #: The kernel the compiler was on when the process died, with the end of its stderr.
    lost: Optional[Tuple[str, str]] = None
    #: Why nothing can be compiled here at all: no Triton, or one too old to compile for another GPU.
    absent: Optional[str] = None

    def assembler(self) -> Optional[Tool]:
        """The assembler Triton ran for the target (the first seen)."""
        return next((t for k in self.kernels.values() for t in k.tools), None)


#: What the canary is told: the target, its kernels, and the shared memory one block may have there.
TARGET_ENV = "INDUCTOR_DOCTOR_XTARGET"
KERNELS_ENV = "INDUCTOR_DOCTOR_XTARGET_KERNELS"
SMEM_ENV = "INDUCTOR_DOCTOR_XTARGET_SMEM"
#: The kernels whose shared memory is held to the target's limit (the script raises OutOfResources).
SHARED_KERNELS = ("smem_a100",)


def kernels_of(job: CanaryJob) -> List[str]:
    """The kernels a target's canary was asked to compile."""
    return [k for k in (job.env.get(KERNELS_ENV) or "").split(",") if k]


def job(target: GpuTarget, python: str, kernels: Sequence[str], smem_limit: Optional[int],
        timeout_s: Optional[float] = None, env: Optional[Mapping[str, str]] = None) -> CanaryJob:
    """The canary process for one target: the harness runs `cross_compile.py` for it."""
    extra = {**(env or {}), TARGET_ENV: target.spec, KERNELS_ENV: ",".join(kernels)}
    if smem_limit:
        extra[SMEM_ENV] = str(smem_limit)
    return CanaryJob(key=f"cross@{target.name}", script=SCRIPT, device=target.name, python=python,
                     timeout_s=timeout_s or TIMEOUT_S, needs=("triton",), env=extra)


def _lines(stdout: str) -> List[Dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            try:
                value = json.loads(line[len(MARKER):].strip())
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def _kernel(d: Mapping[str, Any]) -> Kernel:
    ptx = d.get("ptx") or None
    tools = tuple(Tool(str(t.get("tool", "?")), str(t.get("path", "?")), t.get("release"),
                       tuple(str(a) for a in t.get("args") or ())) for t in d.get("tools") or ())
    return Kernel(name=str(d.get("kernel")), status=str(d.get("status", "failed")),
                  what=str(d.get("what", "")),
                  binary=d.get("binary"), size=int(d.get("bytes") or 0),
                  shared=int(d["shared"]) if isinstance(d.get("shared"), int) else None,
                  ptx=(ptx.get("version"), ptx.get("target")) if isinstance(ptx, dict) else None,
                  tools=tools, exc_type=str(d.get("exc_type") or "").replace("builtins.", ""),
                  error=str(d.get("error") or ""))


def read(target: GpuTarget, run: CanaryRun, kernels: Sequence[str]) -> CrossRun:
    """A target's canary run, read: its kernels' lines, and what went wrong with the process."""
    out = CrossRun(target, run)
    for d in _lines(run.stdout):
        if d.get("done"):
            out.triton = str(d.get("triton") or "") or None
        elif d.get("kernel"):
            k = _kernel(d)
            out.kernels[k.name] = k
    result = run.result or {}
    out.triton = out.triton or (result.get("versions") or {}).get("triton")
    if run.error:
        out.trouble = f"the cross-target canary could not run: {run.error}"
    elif run.timed_out:
        where = f" (it was at {run.last_seen})" if run.last_seen else ""
        out.trouble = f"the cross-target canary timed out after {run.job.timeout_s:g}s{where}"
    elif run.interrupted:
        out.trouble = "interrupted before the cross-target canary finished"
    elif result.get("status") in ("missing", "skip"):
        out.absent = out.trouble = str(result.get("message") or "the cross-target canary does not apply here")
    elif result.get("status") == "error":
        out.trouble = (f"the cross-target canary failed: {result.get('exc_type', 'error')}: "
                       f"{telling_line(str(result.get('message', '')))}")
    elif not result:  # the process died: the compiler killed it (an assertion, a segfault)
        how = signal_name(run.signal) if run.signal else f"exit code {run.returncode}"
        last = telling_line(run.stderr[-4000:])
        missing = [k for k in ORDER if k in kernels and k not in out.kernels]
        if missing:
            out.lost = (missing[0], last)
        out.trouble = (f"the compiler killed the canary ({how}) compiling "
                       f"{missing[0] if missing else 'a kernel'} for {target.name}: {last}")
    if out.lost is not None:
        out.kernels[out.lost[0]] = Kernel(out.lost[0], "lost", error=out.lost[1], exc_type="the process died")
    return out


def _with(cross: CrossRun) -> str:
    tool = cross.assembler()
    triton = f"triton {cross.triton}" if cross.triton else "Triton"
    return f"{triton} and {tool.says()}" if tool else triton


def _compiled(cross: CrossRun, kernels: Sequence[Kernel]) -> str:
    binary = next((k.binary for k in kernels if k.binary), None) or "binary"
    what = ", ".join(k.what or k.name for k in kernels)
    return f"compiled {what} for {cross.target.name} with {_with(cross)}, to a {binary}"


def outcome(issue: KnownIssue, cross: CrossRun, others: Sequence[KnownIssue]) -> Optional[CanaryOutcome]:
    """What the compile for the target says about one issue; None when the issue declares no kernel
    and no failure carries its signature (its rule alone then judges the described GPU)."""
    spec = issue.cross
    names = list(spec.kernels) if spec else []
    own = [k for k in cross.kernels.values() if k.status in ("failed", "lost") and match_signature(
        issue, f"{k.error}\n{k.exc_type}")]
    if own:  # the compiler reproduced this issue's failure, on whichever kernel
        k = own[0]
        line, _ = match_signature(issue, f"{k.error}\n{k.exc_type}") or (k.failure, "")
        compiled = [c for c in (cross.kernels.get(n) for n in names)
                    if c is not None and c.status == "compiled"]
        tail = f"; {_compiled(cross, compiled)}" if compiled else ""
        reason = (f"compiling {k.what or k.name} for {cross.target.name} with {_with(cross)} failed: "
                  f"{line}{tail}")
        return CanaryOutcome(Status.AFFECTED, reason, (line,), reach=Proof.COMPILED)
    if not names:
        return None
    if cross.absent:  # no Triton (or none that compiles for another GPU): nothing of Triton's to judge
        return CanaryOutcome(Status.NOT_APPLICABLE, f"{cross.absent}: nothing compiles for "
                             f"{cross.target.name} here", reach=Proof.COMPILED)
    if cross.trouble and not any(n in cross.kernels for n in names):
        return CanaryOutcome(Status.INCONCLUSIVE, cross.trouble, reach=Proof.COMPILED)
    done: List[Kernel] = []
    for name in names:
        k = cross.kernels.get(name)
        if k is None:
            return CanaryOutcome(Status.INCONCLUSIVE, cross.trouble or f"the canary did not compile {name}",
                                 reach=Proof.COMPILED)
        if k.status == "compiled":
            done.append(k)
            continue
        if k.status == "skipped":
            return CanaryOutcome(Status.INCONCLUSIVE, f"{name}: {k.error}", reach=Proof.COMPILED)
        what = f"compiling {k.what or k.name} for {cross.target.name}"
        for other in others:
            hit = match_signature(other, f"{k.error}\n{k.exc_type}") if other.id != issue.id else None
            if hit:
                return CanaryOutcome(Status.INCONCLUSIVE, f"{what} failed with the error of {other.id}, "
                                     f"found on this target: fix that first ({hit[0]})"[:500], (hit[0],),
                                     reach=Proof.COMPILED)
        how = "the compiler died" if k.status == "lost" else k.exc_type
        return CanaryOutcome(Status.INCONCLUSIVE, f"{what} failed, but not with this issue's signature: "
                             f"{how}: {k.failure}"[:500], (k.failure,), reach=Proof.COMPILED)
    proof = f"{len(done)} {done[0].binary or 'binary'}{'s' if len(done) > 1 else ''} for {cross.target.name}"
    limit = cross.run.job.env.get(SMEM_ENV)
    shared = [f"{k.shared} bytes of shared memory per block, within the {limit} {cross.target.name} allows"
              for k in done if k.shared and limit and k.name in SHARED_KERNELS]
    reason = _compiled(cross, done) + (f": {'; '.join(shared)}" if shared else "")
    return CanaryOutcome(Status.OK, reason, partial=bool(spec and spec.partial), proof=proof,
                         reach=Proof.COMPILED)


def matched_elsewhere(cross: CrossRun, issues: Sequence[KnownIssue]) -> List[KnownIssue]:
    """Issues declaring no cross kernels whose exact signature a compile failure on this target
    carries (the ROCm linker missing, a Triton too old for the CUDA it is pointed at): each gets a
    row on the target, earned by that failure."""
    failed = [k for k in cross.kernels.values() if k.status in ("failed", "lost")]
    return [i for i in issues if (i.cross is None or not i.cross.kernels) and any(
        match_signature(i, f"{k.error}\n{k.exc_type}") for k in failed)]


# --- the rule's half: the issue's own rule, on a GPU described rather than found ---------------------


def described_facts(facts: Facts, target: GpuTarget, driver: Optional[str] = None) -> Facts:
    """This machine's facts with the target as its one GPU (`cuda:0`, capability from the name; what
    only a live GPU tells, such as its SM count, unknown) and, with `--driver`, that NVIDIA driver:
    what an issue's rule reads to judge a GPU that is not here."""
    gpu = GPUInfo(index=0, name="the described GPU", sm=target.capability)
    cuda = replace(facts.cuda, gpus=[gpu], driver_gpus=[gpu], visible_devices=None, visibility=[],
                   driver_version=driver or None, driver_cuda_version=None, torch_device_count=None)
    return replace(facts, cuda=cuda)


def rule_for(issue: KnownIssue, facts: Facts, target: GpuTarget,
             driver: Optional[str] = None) -> Optional[RuleOutcome]:
    """The issue's rule on the described GPU (NVIDIA targets; an AMD target has no rule of CUDA's to
    read), relabelled to the target; None where the rule says nothing of it."""
    if issue.rule is None or target.backend != "cuda":
        return None
    outcomes = list(issue.rule(described_facts(facts, target, driver)))
    found = next((o for o in outcomes if o.device == "cuda:0"), None) or next(
        (o for o in outcomes if o.device is None), None)
    if found is None:
        return None
    reason = found.reason.replace("cuda:0", target.name)
    return replace(found, device=target.name, reason=reason)


# --- without the engine: `plan --gpu`, which compiles with the Triton installed here ------------------


def kernels_for(issues: Sequence[KnownIssue], target: GpuTarget) -> List[str]:
    """The kernels the issues that judge this target by compiling ask for."""
    return sorted({k for i in issues if i.cross is not None and target.backend in i.cross.backends
                   for k in i.cross.kernels})


def run_targets(targets: Sequence[GpuTarget], python: str, issues: Sequence[KnownIssue],
                timeout_s: Optional[float] = None) -> Dict[str, CrossRun]:
    """Each target's canary, side by side (its own process group, fresh caches, a timeout): by name."""
    from inductor_doctor.check.runner import run_all
    from inductor_doctor.kb.triton_shared_memory import target_limit

    jobs = {t.name: job(t, python, kernels_for(issues, t), target_limit(t)[0], timeout_s)
            for t in targets if kernels_for(issues, t)}
    runs = run_all(list(jobs.values()), max(1, len(jobs)))
    by_name = {t.name: t for t in targets}
    return {r.job.device: read(by_name[r.job.device], r, kernels_of(r.job)) for r in runs}


def judge(issue: KnownIssue, rule: Optional[RuleOutcome], cross: CrossRun,
          others: Sequence[KnownIssue]) -> Optional[Decision]:
    """The verdict table on a prediction and what the compile for the target said; None when the
    compile says nothing of the issue."""
    found = outcome(issue, cross, others)
    return decide(rule, True, found, kinds=cross.target.name) if found is not None else None
