"""Install the checkout as a user would, into a venv that has nothing, and use it.

    python tests/pristine.py newest   # dependencies as the registry resolves them today
    python tests/pristine.py lowest   # every dependency at the lowest version pyproject.toml allows

No system site packages, no `--no-deps`, nothing pre-installed: pip resolves the doctor's
dependencies from the registry, so a dependency the code imports but does not declare fails here
exactly as it fails for a new user. The smoke run then checks what a user sees first: `--version`,
`--help` (every option with a help line, no library-internal wording), `list`, `explain`, `plan`,
`check --static`, one-line usage errors, and every example of docs/docker.md with its documented
exit code. Exit status: 0 when everything behaved, 1 otherwise (each failure is printed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
#: Wording that means a CLI library leaked its internals into --help or an error.
LEAKS = ("<bool>", "<float range>", "x>=1", "Value error,", "Input should be", "pydantic")


def lower_bounds() -> List[str]:
    """`name==X` for every `name>=X` dependency of pyproject.toml that applies to this Python."""
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    from packaging.requirements import Requirement

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = []
    for text in deps:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate():
            continue
        lows = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not lows:
            raise SystemExit(f"pyproject.toml: {text!r} has no lower bound to test")
        pins.append(f"{req.name}=={lows[0]}")
    return pins


def make_venv(where: Path, which: str) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    py = where / "bin" / "python"
    cmd = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(REPO)]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if which == "lowest":
        constraints = where / "constraints.txt"
        constraints.write_text("\n".join(lower_bounds()) + "\n")
        cmd += ["-c", str(constraints)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"pip install failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return py


Check = Tuple[List[str], int, Optional[Callable[[subprocess.CompletedProcess], Optional[str]]]]


def _one_line(p: subprocess.CompletedProcess) -> Optional[str]:
    lines = p.stderr.strip().splitlines()
    if len(lines) != 1 or "Traceback" in p.stderr:
        return f"a usage error must be one line, got {len(lines)}: {p.stderr[-600:]}"
    return None


def _no_leaks(p: subprocess.CompletedProcess) -> Optional[str]:
    text = p.stdout + p.stderr
    found = [w for w in LEAKS if w in text]
    return f"library wording leaked: {found}" if found else None


def _help_lines(p: subprocess.CompletedProcess) -> Optional[str]:
    """Every option has a help line: no option line ends bare, unless its help follows, indented."""
    lines = p.stdout.splitlines()
    bad = []
    for i, ln in enumerate(lines):
        if re.match(r"^\s{2}(-\w, )?--[\w-]+( [A-Z\[][^ ]*)?\s*$", ln):
            follows = lines[i + 1] if i + 1 < len(lines) else ""
            if not re.match(r"^\s{8,}\S", follows):
                bad.append(ln.strip())
    return f"options without a help line: {bad}" if bad else _no_leaks(p)


def _json(p: subprocess.CompletedProcess) -> Optional[str]:
    try:
        json.loads(p.stdout)
    except ValueError as exc:
        return f"not JSON: {exc}"
    return None


def _says_nothing_to_check(p: subprocess.CompletedProcess) -> Optional[str]:
    """No torch in a fresh venv: said first, before any matrix."""
    head = p.stdout.split("issue", 1)[0]
    return None if "torch is not installed" in head else f"not said first: {p.stdout[-800:]}"


def checks() -> List[Check]:
    out: List[Check] = [
        (["--version"], 0, lambda p: None if p.stdout.startswith("inductor-doctor ") else p.stdout),
        (["--help"], 0, _no_leaks),
        (["list"], 0, None),
        (["list", "--format", "json"], 0, _json),
        (["explain", "block-mask-cpu"], 0, None),
        (["explain", "no-such-issue"], 2, _one_line),
        (["check", "--format", "xml"], 2, lambda p: _one_line(p) or _no_leaks(p)),
        (["check", "--timeout", "0"], 2, lambda p: _one_line(p) or _no_leaks(p)),
        (["plan", "torch==2.5.1", "torch_xla==2.5.1"], 1, None),
        (["plan", "torch==2.13.0"], 0, None),
        (["check", "--static"], 0, _says_nothing_to_check),
        (["check", "--static", "--fail-on", "inconclusive"], 1, None),
        (["check", "--static", "--format", "json"], 0, _json),
    ]
    for command in ("check", "probe", "explain", "plan", "merge", "list"):
        out.append(([command, "--help"], 0, _help_lines))
    return out


def docker_examples() -> List[Tuple[List[str], int]]:
    """The `console exit=N` examples of docs/docker.md."""
    import shlex

    text = (REPO / "docs" / "docker.md").read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"^```console exit=(\d+)\n(.*?)^```", text, re.M | re.S):
        for line in m.group(2).splitlines():
            if line.startswith("$ inductor-doctor "):
                found.append((shlex.split(line[2:])[1:], int(m.group(1))))
    return found


def smoke(py: Path, workdir: Path) -> List[str]:
    script = py.parent / "inductor-doctor"
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_DOCTOR_") and k != "PYTHONPATH"}
    env.update(INDUCTOR_DOCTOR_CACHE_DIR=str(workdir / "cache"), COLUMNS="100", NO_COLOR="1")
    failures = []
    runs = [(c, rc, f, {}) for c, rc, f in checks()]
    runs += [(c, rc, None, {}) for c, rc in docker_examples()]
    runs.append((["probe"], 0, None, {"INDUCTOR_DOCTOR_FORMAT": "markdown"}))  # ignored where it cannot apply
    for args, expected, extra, more_env in runs:
        p = subprocess.run([str(script), *args], capture_output=True, text=True, timeout=600,
                           env={**env, **more_env}, cwd=str(workdir))
        why = None if p.returncode == expected else f"exit {p.returncode}, expected {expected}"
        why = why or (extra(p) if extra else None)
        if why:
            failures.append(f"inductor-doctor {' '.join(args)}: {why}\n  {p.stderr.strip()[-600:]}")
    p = subprocess.run([str(py), "-m", "inductor_doctor", "--version"], capture_output=True, text=True,
                       env=env, timeout=60)
    if p.returncode != 0:
        failures.append(f"python -m inductor_doctor --version: exit {p.returncode}")
    return failures


def broken_dependency(py: Path, workdir: Path) -> List[str]:
    """A dependency of the doctor removed for real: the doctor's own failure, exit 3, one line that
    says how to repair it, from the console script and from `python -m` alike."""
    subprocess.run([str(py), "-m", "pip", "uninstall", "--quiet", "-y", "click"], check=True, timeout=300)
    failures = []
    for argv in ([str(py.parent / "inductor-doctor"), "list"], [str(py), "-m", "inductor_doctor", "check"]):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=str(workdir))
        lines = p.stderr.strip().splitlines()
        if p.returncode != 3 or len(lines) != 1 or "--force-reinstall inductor-doctor" not in p.stderr:
            failures.append(f"{' '.join(argv[-2:])} without click: exit {p.returncode}, "
                            f"stderr {p.stderr[-600:]!r}")
    return failures


def versions(py: Path) -> Dict[str, str]:
    code = ("import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version "
            "for d in m.distributions()}))")
    return json.loads(subprocess.run([str(py), "-c", code], capture_output=True, text=True).stdout)


def main(argv: List[str]) -> int:
    which = argv[0] if argv else "newest"
    if which not in ("newest", "lowest"):
        print("usage: pristine.py newest|lowest", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix=f"indoc-pristine-{which}-"))
    try:
        py = make_venv(tmp / "venv", which)
        installed = versions(py)
        shown = ", ".join(f"{k} {v}" for k, v in sorted(installed.items()) if k.lower() != "pip")
        print(f"{which}: {shown}")
        failures = smoke(py, tmp)
        failures += broken_dependency(py, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print(f"{which}: {'ok' if not failures else f'{len(failures)} failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
