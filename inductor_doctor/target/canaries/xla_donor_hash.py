"""Canary for pytorch/xla#8464 (fixed by pytorch/xla#8467, torch_xla 2.6.0).

The LazyTensor graph hash left out the buffer-donor indices: an in-place step (`t1.add_(t0)`,
which donates t1's buffer) and an IR-identical out-of-place step (`t2 = t1 + t0`) share one cached
executable, so the second donates t1's buffer too. Upstream (Neuron) printed `t1=4, t2=4` instead
of `t1=3, t2=4`; on PJRT CPU, torch_xla 2.5.1 aborts (SIGABRT) with "CopyToHostAsync() called on
deleted or donated buffer".

The steps run in a child interpreter, because the bug can abort it: once with parameter aliasing
on (torch_xla's default, set explicitly so the check judges the installed torch_xla), and, when
that shows the bug, once more with XLA_ENABLE_PARAM_ALIASING=0, the documented workaround, whose
outcome becomes part of the error. Where the user already runs with XLA_ENABLE_PARAM_ALIASING=0
(the workaround in effect), the steps run as the user's programs will: clean there is OK, saying
that the workaround is what keeps it so. PJRT_DEVICE defaults to CPU (the bug is in the
device-independent graph hash); a PJRT_DEVICE the user set is kept.

Usage: python xla_donor_hash.py xla
"""

import os
import subprocess
import sys

STEPS_FLAG = "--steps"
EXPECTED = "Results: t1=3, t2=4"
CHILD_TIMEOUT_S = 140  # two runs must fit in the doctor's 300 s for this canary


def steps():
    """The upstream reproducer (pytorch/xla test_input_output_aliases.py::test_separate_graphs)."""
    import torch
    import torch_xla.core.xla_model as xm

    device = xm.xla_device()
    t0 = torch.tensor([1], device=device)
    t1 = torch.tensor([2], device=device)
    xm.mark_step()
    t1.add_(t0)  # in place: t1's buffer is donated to the output
    xm.mark_step()
    t2 = t1 + t0  # the same IR, out of place: must not donate t1
    xm.mark_step()
    print(f"Results: t1={t1.item()}, t2={t2.item()}", flush=True)


def run_steps(device, aliasing):
    env = dict(os.environ, XLA_ENABLE_PARAM_ALIASING=aliasing)
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), device, STEPS_FLAG],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
    )
    return proc.returncode, proc.stdout + proc.stderr


def evidence(rc, out):
    """The line that shows the bug, or None when the run does not show it.

    An abort alone is not the bug: torch_xla aborts for many reasons. It is the bug when the fatal
    log line says what xla#8464 says, or when the wrong result is printed.
    """
    for line in out.splitlines():
        if "deleted or donated buffer" in line or "t1=4" in line:
            return line.strip()
    return None


def describe(rc, out):
    if rc == 0 and EXPECTED in out:
        return "clean (" + EXPECTED.split(": ", 1)[1] + ")"
    bad = evidence(rc, out)
    if bad:
        return "still fails: " + bad
    tail = [ln for ln in out.strip().splitlines() if ln.strip()][-1:] or [f"exit code {rc}"]
    return "failed otherwise: " + tail[0]


def exercised(what):
    """Tell the doctor's harness what ran in the child interpreter, where it cannot look."""
    try:
        from indoc_harness import exercised as tell
    except ImportError:  # run on its own
        tell = print
    tell(what)


def main(device):
    if device != "xla":
        raise SystemExit("SKIP: this check runs on the XLA device only")
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    if os.environ.get("XLA_ENABLE_PARAM_ALIASING") == "0":
        rc, out = run_steps(device, "0")
        if rc == 0 and EXPECTED in out:
            exercised("the xla#8464 steps ran on PJRT " + os.environ["PJRT_DEVICE"] + ": " + EXPECTED)
            raise SystemExit("OK: " + EXPECTED + " with XLA_ENABLE_PARAM_ALIASING=0 as set here (the "
                             "workaround of pytorch/xla#8464 in effect; not run without it)")
        sys.stdout.write(out[-6000:])
        raise RuntimeError("XLA_ENABLE_PARAM_ALIASING=0 is set, yet the xla#8464 steps "
                           + describe(rc, out))
    rc, out = run_steps(device, "1")
    if rc == 0 and EXPECTED in out:
        exercised("the xla#8464 steps ran on PJRT " + os.environ["PJRT_DEVICE"] + ": " + EXPECTED)
        print("OK: " + EXPECTED + " (PJRT_DEVICE=" + os.environ["PJRT_DEVICE"] + ")")
        return
    bad = evidence(rc, out)
    sys.stdout.write(out[-6000:])
    if bad is None:
        raise RuntimeError(f"the xla#8464 steps failed (exit code {rc}), not with its signature: "
                           + describe(rc, out))
    workaround = describe(*run_steps(device, "0"))
    raise AssertionError(f"{bad} [pytorch/xla#8464]; with XLA_ENABLE_PARAM_ALIASING=0: {workaround}")


if __name__ == "__main__":
    if STEPS_FLAG in sys.argv[2:]:
        steps()
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "xla")
