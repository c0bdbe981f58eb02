"""`run`, the exception hook and `why`, with real processes: what a user sees, byte for byte.

The fast tests here use small real programs (no torch): `run` must pass stdin, binary stdout, the
exit status and signals through exactly, and add nothing while the command succeeds; the hook must
attach its note to a compile-stack exception and leave everything else alone; `why`'s order of
judgement is checked on programs whose failure depends on one thing of their environment. The real
torch programs made from the project's broken states are in tests/commands/test_atfailure_states.py (slow).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import run_dir, sigint_as_a_terminal_leaves_it

from inductor_doctor.run.capture import Capture

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
ENV.pop("NO_COLOR", None)
DOCTOR = [sys.executable, "-m", "inductor_doctor"]
OMP_LINE = ("/usr/lib/python3/site-packages/torch/include/torch/csrc/inductor/cpp_prefix.h:4:10: "
            "fatal error: 'omp.h' file not found")


def doctor(*args: str, env=None, **kw) -> subprocess.CompletedProcess:
    full = dict(ENV, INDUCTOR_DOCTOR_CACHE_DIR=str(run_dir("af")))
    full.update(env or {})
    return subprocess.run([*DOCTOR, *args], env=full, capture_output=True, timeout=600, **kw)


def program(tmp_path: Path, text: str, name: str = "prog.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# --- run: the command unchanged ------------------------------------------------------------------


def test_run_passes_stdin_binary_stdout_and_the_exit_status(tmp_path):
    prog = program(tmp_path, """
        import sys
        data = sys.stdin.buffer.read()
        sys.stdout.buffer.write(bytes(range(256)) * 3 + data[::-1])
        sys.exit(7)
    """)
    stdin = bytes(range(256)) + b"\x00\xff end"
    bare = subprocess.run([sys.executable, prog], input=stdin, capture_output=True)
    wrapped = doctor("run", "--no-check", "--", sys.executable, prog, input=stdin)
    assert bare.returncode == wrapped.returncode == 7
    assert wrapped.stdout == bare.stdout  # every byte, nothing added
    assert wrapped.stderr.startswith(b"\ninductor-doctor: the command exited with status 7")
    assert b"inductor-doctor why -- " in wrapped.stderr


def test_run_adds_nothing_while_the_command_succeeds(tmp_path):
    prog = program(tmp_path, """
        import sys
        sys.stdout.write("out\\n"); sys.stderr.write("a warning, not a failure\\n")
    """)
    bare = subprocess.run([sys.executable, prog], capture_output=True)
    wrapped = doctor("run", "--", sys.executable, prog)
    assert (wrapped.returncode, wrapped.stdout, wrapped.stderr) == (0, bare.stdout, bare.stderr)


FAST_PATH = """
import json, sys
before = set(sys.modules)
from inductor_doctor._entry import main
code = main(["run", "--", "true"])
print(json.dumps([code, sorted(set(sys.modules) - before)]))
"""


def test_run_of_a_command_that_succeeds_imports_only_what_it_needs():
    """`run` is paid on every run of the wrapped command: no click, rich, typing, subprocess, re,
    pathlib or dataclasses, and nothing of the diagnosis (knowledge base, triage, CLI) on success."""
    out = subprocess.run([sys.executable, "-S", "-c", FAST_PATH], env=ENV, capture_output=True, text=True,
                         timeout=120)
    code, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert code == 0, out.stderr
    heavy = {"click", "rich", "typing", "subprocess", "re", "pathlib", "dataclasses", "enum", "selectors"}
    assert not heavy & set(loaded), sorted(heavy & set(loaded))
    ours = sorted(m for m in loaded if m.startswith("inductor_doctor"))
    assert ours == ["inductor_doctor", "inductor_doctor._entry", "inductor_doctor._run",
                    "inductor_doctor.core", "inductor_doctor.core.version", "inductor_doctor.run",
                    "inductor_doctor.run.capture", "inductor_doctor.run.process"], ours


def test_run_gives_the_command_none_of_the_doctors_descriptors_and_pipe_its_default(tmp_path):
    """An inherited descriptor (fd 5 from the shell here) is closed as close_fds=True did, and
    SIGPIPE, which Python ignores for itself, is the command's default again: `yes | head -1`
    ends `yes` by SIGPIPE, as in a shell."""
    script = tmp_path / "probe.sh"
    script.write_text("for fd in 3 4 5 6; do [ -e /proc/$$/fd/$fd ] && echo -n \"$fd \"; done; echo\n"
                      "yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}\n")
    env = dict(ENV, INDUCTOR_DOCTOR_CACHE_DIR=str(run_dir("af")))
    for redirect in ("", "5</dev/null"):
        shell = f"exec {redirect} {' '.join(DOCTOR)} run --no-check -- bash {script}"
        out = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        fds, pipe_status = out.stdout.splitlines()
        assert fds.strip() == "", (redirect, fds)
        assert pipe_status == "141", (redirect, out.stdout)  # 128 + SIGPIPE


def test_run_dies_of_the_signal_that_killed_the_command():
    proc = doctor("run", "--no-check", "--", sys.executable, "-c",
                  "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert proc.returncode == -signal.SIGTERM  # the same signal, re-raised: a shell prints "Terminated"
    assert b"killed by signal 15" in proc.stderr


def test_run_forwards_sigterm_to_the_command_and_keeps_its_status(tmp_path):
    prog = program(tmp_path, """
        import signal, sys, time
        def bye(signum, frame):
            sys.stdout.write(f"got {signum}\\n"); sys.stdout.flush(); sys.exit(42)
        signal.signal(signal.SIGTERM, bye)
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        time.sleep(60)
    """)
    proc = subprocess.Popen([*DOCTOR, "run", "--", sys.executable, prog], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 42 and out == b"got 15\n"
    assert b"inductor-doctor" not in err  # asked to stop: not a failure to diagnose


def test_run_passes_sigint_on_and_dies_of_it_too(tmp_path):
    prog = program(tmp_path, """
        import sys, time
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        time.sleep(60)
    """)
    # A runner that started the tests in the background (`cmd &` in a script) left SIGINT ignored,
    # and an ignored signal is inherited: start the doctor as a terminal would, with its default.
    proc = subprocess.Popen([*DOCTOR, "run", "--", sys.executable, prog], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=sigint_as_a_terminal_leaves_it)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGINT)  # the doctor's, not the command's: it must pass it on
    out, err = proc.communicate(timeout=60)
    assert b"KeyboardInterrupt" in err and b"inductor-doctor" not in err
    assert proc.returncode == -signal.SIGINT  # Python died of SIGINT; so does the doctor


def test_run_hands_the_terminal_to_the_command(tmp_path):
    """On a terminal the command's group is the foreground one (it reads the tty, gets Ctrl-C)."""
    import pty

    prog = program(tmp_path, """
        import os, sys
        print("tty", os.isatty(0), "foreground", os.tcgetpgrp(0) == os.getpgrp(), flush=True)
    """)
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child: the doctor on a terminal, in its foreground
        os.execve(sys.executable, [*DOCTOR, "run", "--", sys.executable, prog], ENV)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert b"tty True foreground True" in out


def test_run_of_a_missing_command_is_the_shells_127():
    proc = doctor("run", "--", "/nonexistent/program")
    assert proc.returncode == 127 and b"No such file" in proc.stderr


def test_run_triages_a_known_failure_after_the_programs_output(tmp_path):
    prog = program(tmp_path, f"""
        import sys
        print("step 1")
        sys.stderr.write("Traceback (most recent call last):\\n")
        sys.stderr.write({OMP_LINE!r} + "\\n")
        sys.stderr.write("torch._inductor.exc.InductorError: CppCompileError: C++ compile error\\n")
        sys.exit(1)
    """)
    out = tmp_path / "diag.json"
    proc = doctor("run", "--no-check", "--output", str(out), "--", sys.executable, prog)
    assert proc.returncode == 1 and proc.stdout == b"step 1\n"
    err = proc.stderr.decode()
    assert err.index("C++ compile error") < err.index("inductor-doctor: the command exited with status 1")
    assert "this is openmp-headers-missing (exact match)" in err
    assert "workaround: Use GCC for Inductor" in err and "$ export CXX=g++" in err
    from inductor_doctor.schemas import validate

    document = json.loads(out.read_text())
    validate("run", document)
    assert document["triage"]["id"] == "openmp-headers-missing"


def test_run_report_writes_the_report_block_with_the_triage(tmp_path):
    prog = program(tmp_path, f"""
        import sys
        sys.stderr.write({OMP_LINE!r} + "\\n"); sys.exit(3)
    """)
    report = tmp_path / "report.md"
    proc = doctor("run", "--no-check", "--report", str(report), "--", sys.executable, prog)
    assert proc.returncode == 3
    text = report.read_text()
    assert "<details>" in text and "openmp-headers-missing" in text


def test_capture_keeps_head_tail_and_the_error_lines_in_bounded_memory():
    cap = Capture(head=1024, tail=4096, kept=2048)
    filler = b"loss=0.123 step ok\n" * 1000
    cap.feed(b"torch 2.13.0 starting\n")
    for i in range(2000):
        cap.feed(filler)
        if i == 1000:
            cap.feed(b"ld: undefined symbol: _ZN3c10 in the middle\n")
    cap.feed(b"RuntimeError: the end\n")
    data = cap.data()
    assert len(data) < 1024 + 4096 + 2048 + 200 and cap.total > 30_000_000
    assert data.startswith(b"torch 2.13.0") and data.endswith(b"RuntimeError: the end\n")
    assert b"undefined symbol: _ZN3c10 in the middle" in data and b"bytes of the output not kept" in data
    assert len(cap.head) == 1024 and len(cap.tail) <= 2 * 4096


# --- the exception hook --------------------------------------------------------------------------

FAKE_COMPILE_ERROR = f"""
import inductor_doctor.hook, sys
inductor_doctor.hook.install()
assert not any(m.startswith(("inductor_doctor.kb", "inductor_doctor.triage", "click", "rich"))
               for m in sys.modules), sorted(sys.modules)
class InductorError(RuntimeError):
    pass
InductorError.__module__ = "torch._inductor.exc"
raise InductorError("CppCompileError: C++ compile error\\n" + {OMP_LINE!r})
"""


def test_hook_notes_a_compile_stack_exception_and_changes_nothing_else(tmp_path):
    proc = subprocess.run([sys.executable, program(tmp_path, FAKE_COMPILE_ERROR)], env=ENV,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    exc = next(i for i, ln in enumerate(lines) if ln.startswith("torch._inductor.exc.InductorError"))
    said = "inductor-doctor: this is openmp-headers-missing"
    note = next(i for i, ln in enumerate(lines) if ln.startswith(said))
    assert note > exc  # after the exception line: a PEP 678 note, printed by Python's own hook
    assert "export CXX=g++" in proc.stderr and "check --only openmp-headers-missing" in proc.stderr


def test_hook_install_loads_no_typing_re_or_knowledge_base():
    """Installing the hook is paid by every program of an interpreter with the .pth line."""
    code = ("import sys; before = set(sys.modules); import inductor_doctor.hook as h; h.install(); "
            "loaded = sorted(set(sys.modules) - before); import json; print(json.dumps(loaded))")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not loaded & {"typing", "re", "enum", "subprocess", "json"}, sorted(loaded)
    assert sorted(m for m in loaded if m.startswith("inductor_doctor")) == [
        "inductor_doctor", "inductor_doctor.core", "inductor_doctor.core.version", "inductor_doctor.hook"]


def test_hook_leaves_other_exceptions_alone(tmp_path):
    prog = program(tmp_path, """
        import inductor_doctor.hook
        inductor_doctor.hook.install()
        raise KeyError("omp.h file not found, but not from the compiler")
    """)
    proc = subprocess.run([sys.executable, prog], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 1 and "inductor-doctor" not in proc.stderr and "KeyError" in proc.stderr


def test_hook_prints_the_note_after_the_traceback_where_notes_are_refused(tmp_path):
    """Python 3.9/3.10 have no add_note; an exception that refuses one takes the same path."""
    prog = program(tmp_path, FAKE_COMPILE_ERROR.replace(
        "class InductorError(RuntimeError):\n    pass",
        "class InductorError(RuntimeError):\n    def add_note(self, note):\n        raise TypeError('no')"))
    proc = subprocess.run([sys.executable, prog], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-3].startswith("inductor-doctor: this is openmp-headers-missing")


def test_hook_in_a_thread_and_unknown_errors_offer_why(tmp_path):
    prog = program(tmp_path, """
        import threading, inductor_doctor.hook
        inductor_doctor.hook.install()
        class BackendCompilerFailed(Exception):
            pass
        BackendCompilerFailed.__module__ = "torch._dynamo.exc"
        def work():
            raise BackendCompilerFailed("something new went wrong")
        t = threading.Thread(target=work); t.start(); t.join()
        print("main goes on")
    """)
    proc = subprocess.run([sys.executable, prog], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "main goes on\n"
    assert "no known issue matches this compile-stack error" in proc.stderr
    assert f"inductor-doctor why -- {sys.executable} {prog}" in proc.stderr


def test_hook_install_pth_opts_an_interpreter_in_and_out(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    status = json.loads(doctor("hook", "--python", py, "--format", "json").stdout)
    assert status["action"] == "absent"
    installed = json.loads(doctor("hook", "--install-pth", "--python", py, "--format", "json").stdout)
    assert installed["action"] == "installed"
    assert Path(installed["pth"]).parent == Path(status["site_packages"])
    ask = "import sys; print(getattr(sys.excepthook, '_inductor_doctor_hook', False))"
    alone = subprocess.run([py, "-c", ask], capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
    assert (alone.returncode, alone.stdout, alone.stderr) == (0, "False\n", "")  # no inductor-doctor there
    on = subprocess.run([py, "-c", ask], capture_output=True, text=True, env=dict(ENV))
    assert on.stdout == "True\n"
    off = subprocess.run([py, "-c", ask], capture_output=True, text=True,
                         env=dict(ENV, INDUCTOR_DOCTOR_HOOK="0"))
    assert off.stdout == "False\n"
    removed = json.loads(doctor("hook", "--remove-pth", "--python", py, "--format", "json").stdout)
    assert removed["action"] == "removed" and not Path(installed["pth"]).exists()


# --- why: the order of judgement, on programs whose failure hangs on one thing ------------------


def why(*args: str, env=None) -> dict:
    proc = doctor("why", "--quiet", "--jobs", "2", "--format", "json", *args, env=env)
    assert proc.stdout, proc.stderr[-2000:]
    from inductor_doctor.schemas import validate

    document = json.loads(proc.stdout)
    validate("why", document)
    document["exit_code"] = proc.returncode
    return document


def test_why_says_a_plain_program_error_is_not_the_compilers(tmp_path):
    doc = why("--", sys.executable, "-c", "raise ValueError('shapes 3 and 4 do not match')")
    assert doc["exit_code"] == 0 and doc["conclusion"]["kind"] == "program"
    assert "fails the same way with torch.compile disabled" in doc["conclusion"]["sentence"]
    assert doc["meta"]["runs"] < doc["meta"]["variations"] + 1  # it stopped once decided


def test_why_names_the_one_setting_that_breaks_it(tmp_path):
    prog = program(tmp_path, """
        import os, sys
        sys.exit(3 if os.environ.get("TORCHINDUCTOR_BREAK") else 0)
    """)
    doc = why("--", sys.executable, prog, env={"TORCHINDUCTOR_BREAK": "1", "TORCHINDUCTOR_HARMLESS": "1"})
    c = doc["conclusion"]
    assert doc["exit_code"] == 0 and c["kind"] == "environment"
    assert c["unset"] == ["TORCHINDUCTOR_BREAK"] and c["workaround"] == "unset TORCHINDUCTOR_BREAK"


def test_why_blames_a_stale_cache_before_anything_else(tmp_path):
    cache = tmp_path / "inductor"
    (cache / "ab").mkdir(parents=True)
    (cache / "ab" / "stale.so").write_bytes(b"\x7fELF")
    prog = program(tmp_path, """
        import os, sys
        cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        sys.exit(1 if os.path.exists(os.path.join(cache, "ab", "stale.so")) else 0)
    """)
    doc = why("--all", "--", sys.executable, prog, env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    c = doc["conclusion"]
    assert c["kind"] == "environment" and c["variation"] == "fresh-caches"
    assert c["workaround"] == f"rm -rf {cache}"
    assert all(v["status"] == "passed" for v in doc["variations"] if v["kind"] == "environment")
    assert (cache / "ab" / "stale.so").exists()  # the user's cache is left as it was


def test_why_says_a_compiler_bisector_state_left_in_the_users_cache(tmp_path):
    """pytorch#143453: `<inductor cache>/bisect/` makes every compile run the bisector's backend; why
    says so whatever its answer, and leaves it where it is (the user's cache is the user's)."""
    from inductor_doctor.kb import registry

    cache = tmp_path / "inductor"
    (cache / "bisect").mkdir(parents=True)
    (cache / "bisect" / "bisect_status.txt").write_text("backend=eager\nsubsystem=\n")
    doc = why("--", sys.executable, "-c", "raise ValueError('a bug of the program')",
              env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    notes = doc["conclusion"]["notes"]
    assert len(notes) == 1 and str(cache / "bisect") in notes[0] and "pytorch#143453" in notes[0], notes
    if any(i.id == "bisect-state-leftover" for i in registry()):
        assert "inductor-doctor explain bisect-state-leftover" in notes[0]
    assert (cache / "bisect" / "bisect_status.txt").exists()


def test_why_compare_says_how_when_the_command_saves_no_output():
    proc = doctor("why", "--compare", "--", sys.executable, "-c", "print(42)", text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("inductor-doctor: --compare: the eager run of the command gave no output")
    assert "torch.save to $INDUCTOR_DOCTOR_WHY_OUTPUT" in last and "Traceback" not in proc.stderr


def test_why_a_command_that_succeeds_has_nothing_to_diagnose():
    doc = why("--", sys.executable, "-c", "pass")
    assert doc["exit_code"] == 2 and doc["conclusion"]["kind"] == "baseline-passed"


def test_why_kills_a_hanging_run_whole(tmp_path):
    marker = tmp_path / "child.pid"
    prog = program(tmp_path, f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        open({str(marker)!r}, "w").write(str(child.pid))
        time.sleep(300)
    """)
    start = time.monotonic()
    doc = why("--timeout", "2", "--", sys.executable, prog)
    assert time.monotonic() - start < 120
    assert doc["baseline"]["timed_out"] and doc["conclusion"]["kind"] == "none"
    pid = int(marker.read_text())
    time.sleep(0.5)
    assert _dead(pid)


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for a container's init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_why_versions_are_tried_only_when_the_cause_is_in_the_compiler():
    doc = why("--versions", "--", sys.executable, "-c", "raise ValueError('a bug of the program')")
    assert doc["conclusion"]["kind"] == "program"
    assert doc["conclusion"]["versions"].startswith("not tried: the cause is found")
    assert not [v for v in doc["variations"] if v["kind"] == "release"]


def test_why_versions_picks_the_newest_and_the_previous_minor_of_the_same_build():
    from inductor_doctor.why import versions as R

    releases = ("2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0rc1", "2.14.1", "2.15.0")
    assert R.candidates("2.13.0+cpu", releases) == [("2.15.0", "newest"), ("2.12.1", "previous")]
    assert R.candidates("2.15.0", releases) == [("2.14.1", "previous")]
    assert R.index_for("2.13.0+cpu") == "https://download.pytorch.org/whl/cpu"
    assert R.index_for("2.13.0") is None and R.requirement("2.15.0", "2.13.0") == "torch==2.15.0"
    assert R.requirement("2.15.0", "2.13.0+cu124") == "torch==2.15.0+cu124"
    assert R.interpreter_of([sys.executable, "x.py"], os.environ.get("PATH")) == sys.executable
    assert R.interpreter_of(["bash", "-c", "python x.py"], os.environ.get("PATH")) is None


PIP_CAPPED = """Looking in links: /opt/wheels
WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError()': /whl/cpu/torch/
ERROR: Cannot install torch==2.15.0 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested torch==2.15.0
    The user requested (constraint) torch<=2.14.1

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""


def test_why_versions_says_plainly_that_a_release_cannot_be_installed_here():
    """pip's own reason (its first ERROR line and the constraint behind it, not its help link nor a
    retry warning) in one sentence of the conclusion; the previous release's answer still stands."""
    from types import SimpleNamespace

    from inductor_doctor.why import runs as W
    from inductor_doctor.why import variations as V
    from inductor_doctor.why import versions as R
    from inductor_doctor.why.attempt import Attempt
    from inductor_doctor.why.conclude import Conclusion, Kind, with_releases

    reason = R.pip_error(SimpleNamespace(stderr=PIP_CAPPED, stdout="", why=lambda: "?"))
    assert reason == ("its index could not be reached, and pip then says: Cannot install torch==2.15.0 "
                      "because these package versions have conflicting dependencies (a pip constraint: "
                      "torch<=2.14.1)")
    reached = PIP_CAPPED.replace("NewConnectionError()", "ReadTimeoutError()")
    said = R.pip_error(SimpleNamespace(stderr=reached, stdout="", why=lambda: "?"))
    assert said.startswith("Cannot install")
    newest = W.Tried(V.Variation("torch:2.15.0", "torch 2.15.0", V.RELEASE, cause="newest"),
                     Attempt(None, 0.0, b"", 0, error=f"could not install torch==2.15.0: {reason}"))
    previous = W.Tried(V.Variation("torch:2.12.1", "torch 2.12.1", V.RELEASE, cause="previous"),
                       Attempt(1, 9.0, b"ValueError: x\n", 15), status=W.SAME)
    base = Conclusion(Kind.LAYER, "The failure is in Inductor.")
    c = with_releases(base, [newest, previous], "2.13.0+cpu").to_dict()
    assert c["sentence"] == ("The failure is in Inductor. torch 2.15.0 (newest release) could not be tried "
                             f"here: could not install torch==2.15.0: {reason}. torch 2.12.1 fails too: it "
                             "is not new in this release.")
    assert "upstream" not in c  # the newest was not tried: no claim that it is present there
