"""The hand-off to PyTorch's compiler bisector: from "the failure is in Inductor" to the op or pass.

When no change of the environment flips a failure and the backend step-down puts it in Inductor,
`why` runs `python -m torch._inductor.compiler_bisector run CMD` (torch's own tool) on the same
command. The bisector walks the backends (eager, aot_eager, aot_eager_decomp_partition, ...,
inductor), switches the failing backend's subsystems off one at a time (pre-, joint- and post-grad
passes, config flips, CUDA graphs, lowerings; decompositions and CSE below Inductor) and bisects a
counted subsystem to the one application that breaks it. `why` then proves what it says: the
`TORCH_BISECT_*` line that reproduces it is run once (it must fail the same way; the doctor's
`sitecustomize` records which op or pass that application was), and a config flag that works
around it (`TORCHINDUCTOR_DISABLED_PASSES=NAME` for a graph pass) is run once (it must pass).

The bisector keeps its state under the Inductor cache directory (`<cache>/bisect/`; a leftover one
makes every later compile on the host bisect, pytorch#143453), and its `run` mode deletes that whole
cache directory when it ends: it only ever runs here with the doctor's own scratch cache, never
the user's. Each bisection step goes through `target/why_step.py` (a per-step timeout, the step's
output kept to compare with the baseline, the comparison of `--compare`); the bisector runs in its
own process group with a time limit and is killed whole, like every run of `why`.

What the installed torch offers is read from its files, never assumed from its version:
`torch/_inductor/compiler_bisector.py` (first in torch 2.6.0), its `run` mode (2.11.0,
pytorch#170717), the op named across processes (2.13.0: earlier `run` modes say "Debug info: not
found", and the doctor's own record names it), and `TORCHINDUCTOR_DISABLED_PASSES` in
`torch/_inductor/config.py` (2.11.0).
"""

from __future__ import annotations

import ast
import glob
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from inductor_doctor.why import variations as V
from inductor_doctor.why.attempt import Launch, run_attempt
from inductor_doctor.why.runs import OTHER, PASSED, SAME, Session, Tried, run_plan
from inductor_doctor.why.signature import read

#: Steps a bisection can take: the backends, Inductor's subsystems, then a binary search.
MAX_STEPS = 48
_RESULT = re.compile(r"^Bisection complete: (.*)$", re.M)
#: The bisector's names, in words.
SUBSYSTEMS = {
    "pre_grad_passes": "Inductor's pre-grad passes",
    "joint_graph_passes": "Inductor's joint-graph passes",
    "post_grad_passes": "Inductor's post-grad passes",
    "lowerings": "Inductor's lowerings",
    "cudagraphs": "CUDA graphs",
    "decomposition": "the decompositions Inductor applies (in AOTAutograd's tracing)",
    "pre_grad_graph": "the pre-grad graph",
}
BACKENDS = {
    "eager": "Dynamo (backend eager)",
    "aot_eager": "AOTAutograd (backend aot_eager)",
    "aot_eager_decomp_partition": "AOTAutograd with Inductor's decompositions and partitioner "
                                  "(backend aot_eager_decomp_partition)",
    "aot_eager_decomp_partition_crossref": "the cross-reference check of the decompositions",
    "inductor": "Inductor",
}
PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")
_ENV_CONFIG = 'os.environ.get("'


@dataclass
class Offer:
    """What the command's torch offers, read from its files."""

    python: str
    version: Optional[str] = None
    torch_dir: Optional[str] = None
    has_bisector: bool = False
    has_run: bool = False
    names_op: bool = False
    disabled_passes: bool = False
    config_text: str = ""
    minify_in_process: bool = False  # the after-AOT minifier's `--no-isolate`

    def missing(self) -> Optional[str]:
        """Why the hand-off cannot happen here, in one clause; None when it can."""
        which = f"torch {self.version}" if self.version else "this torch"
        if self.torch_dir is None:
            return f"{self.python} has no torch to run the compiler bisector with"
        if not self.has_bisector:
            return (f"{which} has no compiler bisector (torch._inductor.compiler_bisector is in torch 2.6 "
                    "and later)")
        if not self.has_run:
            return (f"{which}'s compiler bisector has no `run` mode, which runs a command by itself (torch "
                    "2.11 and later, pytorch#170717); by hand: `python -m torch._inductor.compiler_bisector "
                    "start`, then run the command and say `good` or `bad` after each run")
        return None

    def config_env(self, name: str) -> Optional[str]:
        """The environment variable torch's config.py reads for config `name`, if any."""
        pattern = rf"^\s*{re.escape(name)}\b[^\n]*(?:\n[^\n]*)?{re.escape(_ENV_CONFIG)}([A-Z0-9_]+)\""
        found = re.search(pattern, self.config_text, re.M)
        return found.group(1) if found else None


@dataclass
class Bisection:
    """The bisector's run and what it found."""

    ran: bool = False
    backend: Optional[str] = None
    subsystem: Optional[str] = None
    number: Optional[int] = None
    debug_info: Optional[str] = None
    steps: List[Dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0
    trouble: Optional[str] = None  # the bisector did not finish, in words
    config: Optional[str] = None  # a config change that fixes it: "inductor.layout_optimization=False"


def offer(python: str, env: Dict[str, str]) -> Offer:
    """Where the interpreter's torch is and what its bisector can do (torch is not imported)."""
    code = ("import importlib.util as u, importlib.metadata as m\n"
            "s = u.find_spec('torch')\n"
            "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')\n"
            "print(m.version('torch') if s else '')")
    found = Offer(python)
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return found
    lines = proc.stdout.splitlines() + ["", ""]
    if proc.returncode != 0 or not lines[0]:
        return found
    found.torch_dir, found.version = lines[0], lines[1] or None
    source = _text(os.path.join(lines[0], "_inductor", "compiler_bisector.py"))
    found.has_bisector = bool(source)
    found.has_run = 'command == "run"' in source
    found.names_op = "add_call_counter_debug_info" in source
    found.config_text = _text(os.path.join(lines[0], "_inductor", "config.py"))
    found.disabled_passes = "TORCHINDUCTOR_DISABLED_PASSES" in found.config_text
    after_aot = _text(os.path.join(lines[0], "_dynamo", "repro", "after_aot.py"))
    found.minify_in_process = "--no-isolate" in after_aot
    return found


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def bisector_env(session: Session, root: str) -> Dict[str, str]:
    """The user's environment with the doctor's scratch caches, and no bisection of the user's own."""
    env = {k: v for k, v in session.user_env.items()
           if not k.startswith("TORCH_BISECT_") and k != "TORCH_COMPILE_BACKEND"}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor-cache")
    env["TRITON_CACHE_DIR"] = os.path.join(root, "triton-cache")
    return env


def bisect(session: Session, python: str, step_argv: Sequence[str]) -> Bisection:
    """Run the bisector on the command (through the step wrapper) in a scratch cache; read its answer
    and each step it took."""
    from inductor_doctor.target import script

    root = os.path.join(session.root, "bisect")
    steps = os.path.join(root, "steps")
    os.makedirs(steps, exist_ok=True)
    argv = [python, "-m", "torch._inductor.compiler_bisector", "run", python, str(script("why_step.py")),
            "--log", steps, "--timeout", str(int(session.timeout)), *step_argv]
    session.say("the compiler bisector: torch._inductor.compiler_bisector run (in a scratch cache)")
    attempt = run_attempt(Launch(argv, bisector_env(session, root), root, session.timeout * MAX_STEPS),
                          session.stop)
    out = Bisection(ran=True, duration_s=attempt.duration_s, steps=_steps(steps, session))
    text = attempt.output.decode("utf-8", errors="replace")
    found = _RESULT.findall(text)
    if attempt.timed_out:
        out.trouble = f"it ran past its time limit ({session.timeout * MAX_STEPS:.0f}s) and was stopped"
    elif not found:
        out.trouble = f"it stopped without an answer ({attempt.fingerprint(session.scrub)})"
    elif found[-1].strip() == "no issue found":
        out.trouble = "it found no failing backend: every step passed under bisection"
    else:
        fields = parse_result(found[-1])
        out.backend, out.subsystem = fields.get("backend"), fields.get("subsystem")
        out.number, out.debug_info = fields.get("bisect_number"), fields.get("debug_info")
        config = re.findall(r"^Setting config (\S+) field (\S+) to (.+) fixed the issue$", text, re.M)
        if config:
            out.config = f"{config[-1][0]}.{config[-1][1]}={config[-1][2].strip()}"
        if out.debug_info == "not found":
            out.debug_info = None
        out.debug_info = op_name(out.debug_info)
    return out


def parse_result(text: str) -> Dict[str, Any]:
    """`BisectionResult(backend='inductor', subsystem='lowerings', bisect_number=0, debug_info='sin')`."""
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return {}
    if not isinstance(call, ast.Call):
        return {}
    out: Dict[str, Any] = {}
    names = ("backend", "subsystem", "bisect_number", "debug_info")
    for n, arg in enumerate(call.args[:4]):
        out[names[n]] = _literal(arg)
    for kw in call.keywords:
        out[kw.arg or ""] = _literal(kw.value)
    return out


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _steps(where: str, session: Session) -> List[Dict[str, Any]]:
    """Each step the bisector ran, as the step wrapper recorded it, judged against the baseline."""
    base = session.baseline.signature(session.scrub)
    out = []
    for path in sorted(glob.glob(os.path.join(where, "step-*.json"))):
        try:
            with open(path, encoding="utf-8") as fh:
                facts = json.load(fh)
            with open(path[:-len(".json")] + ".log", "rb") as fh:
                fh.seek(max(0, os.path.getsize(fh.name) - 256 * 1024))
                output = fh.read()
        except (OSError, ValueError):
            continue
        code = facts.get("exit_code")
        sig = read(output, code, session.scrub)
        same = "fails the same way" if base.same_as(sig) else "fails differently"
        facts["status"] = "passed" if code == 0 else "timed out" if code == 124 else same
        facts["error_line"] = None if code == 0 else sig.line
        out.append(facts)
    return out


# --- proving it: the repro line and the workaround, run once each -------------------------------------


def repro_env(found: Bisection) -> Dict[str, str]:
    """The `TORCH_BISECT_*` settings that reproduce the failure; {} for a config change."""
    if not found.backend or found.config:
        return {}
    env = {"TORCH_BISECT_BACKEND": found.backend}
    if found.subsystem:
        env["TORCH_BISECT_SUBSYSTEM"] = found.subsystem
        if found.number is not None:
            env["TORCH_BISECT_MAX"] = str(found.number)
    return env


def workaround_of(found: Bisection, have: Offer) -> Optional[str]:
    """The config flag that works around it, where torch has one: a graph pass by name, a config
    change through its environment variable (or the config line where it has none)."""
    if found.config:
        section, _, assignment = found.config.partition(".")
        name, _, value = assignment.partition("=")
        var = have.config_env(name) if section == "inductor" else None
        if var:
            return f"export {var}={'1' if value.strip() == 'True' else '0'}"
        module = "torch._inductor.config" if section == "inductor" else "torch._functorch.config"
        return f"{module}.{name} = {value}"
    if found.subsystem in PASS_SUBSYSTEMS and found.debug_info and have.disabled_passes:
        return f"export TORCHINDUCTOR_DISABLED_PASSES={found.debug_info.upper()}"
    return None


def prove(session: Session, found: Bisection, have: Offer) -> List[Tried]:
    """The repro line (must fail the same way; records the op) and the workaround (must pass)."""
    plan: List[V.Variation] = []
    env = repro_env(found)
    if env:  # the whole line is in the sentence; the row's label stays short
        label = f"the bisector's TORCH_BISECT_* line ({found.subsystem or found.backend}" + (
            f" #{found.number})" if "TORCH_BISECT_MAX" in env else ")")
        plan.append(V.Variation("bisect:repro", label, V.BISECT, dict(env), record_ops=True))
    fix = workaround_of(found, have)
    if fix and fix.startswith("export "):
        var, _, value = fix[len("export "):].partition("=")
        plan.append(V.Variation("bisect:workaround", fix, V.BISECT, {var: value}, workaround=fix))
    return run_plan(session, plan, offset=70, run_all=True) if plan else []


def op_of(tried: List[Tried], found: Bisection) -> Optional[str]:
    """The op (or pass) of the failing application, from the doctor's record in the repro run: the
    node's target for a lowering (`aten.sin.default`), the pass's or decomposition's name."""
    for t in tried:
        record = t.attempt.extra.get("ops") if t.variation.key == "bisect:repro" and t.attempt else None
        if not record:
            continue
        for line in record.splitlines():
            n, _, rest = line.partition("\t")
            if n == str(found.number):
                info, _, target = rest.partition("\t")
                return op_name(target or info or None)
    return None


_OVERLOAD = re.compile(r"^<OpOverload\(op='([^']+)', overload='([^']+)'\)>$")


def op_name(said: Optional[str]) -> Optional[str]:
    """`aten.silu.default` for the `<OpOverload(op='aten.silu', overload='default')>` some releases print."""
    found = _OVERLOAD.match(said.strip()) if said else None
    return f"{found.group(1)}.{found.group(2)}" if found else said


def sentence(found: Bisection, have: Offer, tried: List[Tried], argv: Sequence[str]) -> Dict[str, Any]:
    """The bisector's answer in one sentence, with the line that reproduces it and the workaround."""
    by = {t.variation.key: t for t in tried}
    repro, fix = by.get("bisect:repro"), by.get("bisect:workaround")
    op = op_of(tried, found) or found.debug_info
    node = found.debug_info if op and found.debug_info and op != found.debug_info else None
    where = SUBSYSTEMS.get(found.subsystem or "", found.subsystem) if found.subsystem else None
    runs = f"{len(found.steps)} runs in {found.duration_s:.0f}s, in a scratch cache"
    text = f"The compiler bisector (torch._inductor.compiler_bisector, {runs}) narrows it to "
    if found.config:
        text += f"{BACKENDS.get(found.backend or '', found.backend)}: setting {found.config} makes it pass"
    elif where:
        text += f"{where} (backend {found.backend})"
        if found.number is not None and found.subsystem not in ("cudagraphs",):
            text += f": the first failing application is #{found.number}"
            if op:
                text += f", {op}" + (f" (node {node})" if node else "")
    else:
        text += f"{BACKENDS.get(found.backend or '', found.backend)}, without a subsystem it can switch off"
    env = repro_env(found)
    line = " ".join([*(f"{k}={v}" for k, v in env.items()), shlex.join(argv)]) if env else None
    if line:
        checked = _checked(repro, SAME, "fails the same way here", "it")
        text += f". It reproduces with `{line}` ({checked})"
    workaround = workaround_of(found, have)
    if workaround:
        proved = _checked(fix, PASSED, "the command passes with it here", "it") if fix else \
            "the bisector's own run passed with it"
        text += f"; the flag that works around it: `{workaround}` ({proved})"
    elif found.subsystem == "lowerings":
        text += "; no config flag turns off one lowering"
    elif found.subsystem == "decomposition":
        text += "; no config flag turns off one decomposition"
    counted = found.number is not None and not found.config and found.subsystem not in ("cudagraphs",)
    if counted and op is None:
        text += (f"; torch {have.version} does not name the op of application #{found.number}"
                 if not have.names_op else "")
    different = [s for s in found.steps if s.get("status") == "fails differently"]
    if different:
        text += (f". {len(different)} of its runs failed differently from the baseline "
                 f"({different[0]['error_line']}); the bisector counts any failure as failing")
    return {"sentence": text + ".", "repro_line": line, "workaround": workaround, "op": op,
            "confirmed": bool(repro is not None and repro.status == SAME),
            "workaround_proved": bool(fix is not None and fix.status == PASSED)}


def _checked(t: Optional[Tried], want: str, ok: str, it: str) -> str:
    if t is None or t.attempt is None:
        return "not run"
    if t.status == want:
        return ok
    if t.status == OTHER:
        return f"but here {it} fails differently: {t.attempt.fingerprint()}"
    return f"but here {it} {t.status}"


def to_dict(found: Optional[Bisection], have: Optional[Offer], said: Optional[Dict[str, Any]],
            missing: Optional[str]) -> Dict[str, Any]:
    """The conclusion's `bisect` object."""
    out: Dict[str, Any] = {"available": missing is None, "reason": missing,
                           "torch": have.version if have else None}
    if found is not None:
        out.update({"ran": found.ran, "backend": found.backend, "subsystem": found.subsystem,
                    "number": found.number, "debug_info": found.debug_info, "config": found.config,
                    "trouble": found.trouble, "duration_s": round(found.duration_s, 2), "steps": found.steps})
    if said:
        out.update({k: v for k, v in said.items() if k != "sentence"})
    return out


def leftover_state(env: Dict[str, str]) -> Optional[str]:
    """A compiler-bisector state left in the user's Inductor cache (`<cache>/bisect/`,
    pytorch#143453): every compile of this user then runs under the bisector."""
    from inductor_doctor.probe.compiler import _inductor_cache_dir

    status = os.path.join(_inductor_cache_dir(env), "bisect", "bisect_status.txt")
    return os.path.dirname(status) if os.path.isfile(status) else None
