"""`why`'s step: one run of the user's command, for the compiler bisector and for `why --compare`.

    python why_step.py [--log DIR] [--timeout S] [--reference FILE --rtol R --atol A] -- CMD ...

It runs CMD unchanged, in its own process group's tree (the doctor kills the whole group when it
cancels), and exits as the bisector needs: 0 when CMD passed, non-zero when it failed.

* `--log DIR`: CMD's output goes to DIR/step-NNN.log and a line of facts to DIR/step-NNN.json (the
  `TORCH_BISECT_*` settings the bisector gave this step, the exit status, the time), so the doctor
  can compare every step with the baseline afterwards; without it, CMD's output is this process's.
* `--timeout S`: a step that runs longer is killed (CMD and what it started) and exits 124.
* `--reference FILE`: `why --compare`. CMD is told where to save its result
  (`INDUCTOR_DOCTOR_WHY_OUTPUT`, a path for `torch.save`); when CMD exits 0, that result is compared
  with the eager one in FILE, and a difference beyond `atol + rtol * |eager|` is a failure: one line
  `inductor_doctor.OutputMismatch: ...`, exit 1. A CMD that saved nothing exits 3.

Python 3.8 syntax, standard library only (torch is imported only to compare, after CMD has ended).
"""

import json
import math
import os
import signal
import subprocess
import sys
import time

MISMATCH = "inductor_doctor.OutputMismatch"
OUTPUT_VAR = "INDUCTOR_DOCTOR_WHY_OUTPUT"


def _children(pid):
    """Every descendant of `pid`, read from /proc (Linux); empty elsewhere."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill_tree(pid):
    for p in [pid] + _children(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _flatten(obj, path="output"):
    if isinstance(obj, dict):
        for key in sorted(obj, key=str):
            for item in _flatten(obj[key], f"{path}[{key!r}]"):
                yield item
    elif isinstance(obj, (list, tuple)):
        for n, value in enumerate(obj):
            for item in _flatten(value, f"{path}[{n}]"):
                yield item
    else:
        yield path, obj


def compare(reference, produced, rtol, atol):
    """None when `produced` matches `reference` within the tolerance, else the difference in words."""
    import torch

    ref = list(_flatten(torch.load(reference, map_location="cpu")))
    got = list(_flatten(torch.load(produced, map_location="cpu")))
    if [p for p, _ in ref] != [p for p, _ in got]:
        paths = ([p for p, _ in got][:6], [p for p, _ in ref][:6])
        return f"the structure differs from eager's: {paths[0]} vs {paths[1]}"
    for (path, a), (_, b) in zip(got, ref):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
                return f"{path}: a tensor on one side only"
            if a.shape != b.shape or a.dtype != b.dtype:
                return f"{path}: {a.dtype} {tuple(a.shape)}, eager {b.dtype} {tuple(b.shape)}"
            if a.is_floating_point() or a.is_complex():
                x, y = a.detach().cpu().to(torch.complex128 if a.is_complex() else torch.float64), \
                    b.detach().cpu().to(torch.complex128 if b.is_complex() else torch.float64)
                nan = torch.isnan(x) != torch.isnan(y)
                diff = (x - y).abs().nan_to_num(0.0)
                bad = (diff > atol + rtol * y.abs().nan_to_num(0.0)) | nan
                count = int(bad.sum())
                if count:
                    return (f"{path} differs from eager beyond rtol={rtol:g}, atol={atol:g}: {count} of "
                            f"{bad.numel()} elements, greatest |difference| {float(diff.max()):.4g}")
            elif not torch.equal(a.cpu(), b.cpu()):
                return f"{path} differs from eager ({a.dtype}, compared exactly)"
        elif isinstance(a, float) and isinstance(b, float):
            if not (math.isnan(a) and math.isnan(b)) and not abs(a - b) <= atol + rtol * abs(b):
                return f"{path}: {a!r}, eager {b!r}"
        elif a != b:
            return f"{path}: {a!r}, eager {b!r}"
    return None


def main(argv):
    if "--" not in argv:
        sys.stderr.write(__doc__)
        return 2
    at = argv.index("--")
    opts, cmd = argv[:at], argv[at + 1:]
    args = dict(zip(opts[::2], opts[1::2]))
    log, reference = args.get("--log"), args.get("--reference")
    timeout = float(args["--timeout"]) if "--timeout" in args else None
    env = dict(os.environ)
    n, out = 0, None
    if log:
        os.makedirs(log, exist_ok=True)
        n = sum(1 for f in os.listdir(log) if f.endswith(".json"))
    produced = None
    if reference:
        produced = os.path.join(log or os.path.dirname(os.path.abspath(reference)),
                                f"step-{n:03d}-{os.getpid()}.pt")
        env[OUTPUT_VAR] = produced
    if log:
        out = open(os.path.join(log, f"step-{n:03d}.log"), "wb")
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT if out else None)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        proc.wait()
        code = 124
        sys.stderr.write(f"inductor-doctor why: the step ran past {timeout:g}s and was killed\n")
    took = time.monotonic() - start
    mismatch = None
    if code == 0 and reference:
        if not os.path.exists(produced):
            mismatch, code = f"the command saved nothing to ${OUTPUT_VAR}", 3
        else:
            mismatch = compare(reference, produced, float(args.get("--rtol", "1e-3")),
                               float(args.get("--atol", "1e-3")))
            code = 1 if mismatch else 0
        if mismatch:
            line = f"{MISMATCH}: {mismatch}\n"
            (out.write(line.encode()) if out else sys.stderr.write(line))
    if out:
        out.close()
        facts = {"n": n, "exit_code": code, "duration_s": round(took, 2), "mismatch": mismatch,
                 "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_BISECT_")
                         or k == "TORCH_COMPILE_BACKEND"}}
        with open(os.path.join(log, f"step-{n:03d}.json"), "w") as fh:
            json.dump(facts, fh)
    if produced and os.path.exists(produced):
        os.unlink(produced)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
