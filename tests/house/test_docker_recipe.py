"""The Docker recipe in docs/docker.md, run command for command without a Docker engine.

The commands come from the page itself (fenced blocks tagged `recipe`, `recipe-file=NAME` and
`console exit=N`), so the page and this test cannot drift apart. The image is emulated by a
sandbox directory (absolute paths in ENV, WORKDIR and COPY are rooted there) and a venv that has
nothing: the doctor is installed from this checkout as `pip install inductor-doctor` would, its
dependencies resolved from the registry, and then the recipe's torch pin (the CPU build of the same
release: the recipe's CUDA index is not reachable from a test). The test checks that the pin is the
torch this machine has, so the after-install gate checks the stack the recipe installs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from inductor_doctor.schemas import validate

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "docker.md"
FENCE = re.compile(r"^```(\S+)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)


@dataclass
class Recipe:
    dockerfile: List[Tuple[str, str]]  # (instruction, arguments)
    files: Dict[str, str]
    examples: List[Tuple[str, int]]  # (command, expected exit code)


@dataclass
class Sandbox:
    root: Path
    env: Dict[str, str]
    workdir: Path
    gates: List[Tuple[str, Dict[str, str], Path]] = field(default_factory=list)  # doctor RUN lines
    copied: Dict[str, Path] = field(default_factory=dict)  # file name -> where COPY put it
    entrypoint: List[str] = field(default_factory=list)
    log: List[str] = field(default_factory=list)

    def path(self, p: str) -> Path:
        return self.root / p.lstrip("/") if p.startswith("/") else self.workdir / p

    def run(self, command: str, timeout: float = 900, env=None, cwd=None) -> subprocess.CompletedProcess:
        cwd = cwd or self.workdir
        cwd.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.log.append(f"$ {command} -> {proc.returncode}\n{proc.stderr[-1500:]}")
        return proc


def parse_page() -> Recipe:
    text = PAGE.read_text(encoding="utf-8")
    dockerfile: List[Tuple[str, str]] = []
    files: Dict[str, str] = {}
    examples: List[Tuple[str, int]] = []
    for m in FENCE.finditer(text):
        lang, info, body = m.group(1), m.group(2).split(), m.group(3)
        for token in info:
            if token.startswith("recipe-file="):
                files[token.split("=", 1)[1]] = body
        if lang == "dockerfile" and "recipe" in info:
            dockerfile = _instructions(body)
        if lang == "console":
            expected = [int(t.split("=", 1)[1]) for t in info if t.startswith("exit=")]
            assert expected, f"a console block names its exit code: {body[:60]!r}"
            examples += [(line[2:], expected[0]) for line in body.splitlines() if line.startswith("$ ")]
    assert dockerfile and files and examples, "docs/docker.md lost its tagged recipe blocks"
    return Recipe(dockerfile, files, examples)


def _instructions(body: str) -> List[Tuple[str, str]]:
    out, pending = [], ""
    for raw in body.splitlines():
        line = raw.rstrip()
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, args = full.partition(" ")
        out.append((word.upper(), args.strip()))
    return out


def _sandboxed(value: str, root: Path) -> str:
    """The recipe's own absolute paths (each entry of a PATH-like list) are rooted in the sandbox;
    `$VAR` references are expanded afterwards, so what they bring in (the host PATH) is not."""
    parts = value.split(":") if ":" in value and value.startswith("/") else [value]
    return ":".join(str(root / p.lstrip("/")) if p.startswith("/") else p for p in parts)


def _apply_env(args: str, sandbox: Sandbox) -> None:
    for item in shlex.split(args):
        key, _, value = item.partition("=")
        value = _sandboxed(value, sandbox.root)
        value = re.sub(r"\$\{?(\w+)\}?", lambda m: sandbox.env.get(m.group(1), ""), value)
        if key == "PATH":  # the venv standing in for the image's Python comes first
            value = os.pathsep.join([sandbox.env["VENV_BIN"], value])
        sandbox.env[key] = value


RECIPE = parse_page()


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Iterator[Path]:
    """The image's venv: nothing in it but what the recipe installs (the doctor, then torch);
    removed after the module (a torch install: 900 MB)."""
    path = tmp_path_factory.mktemp("image") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    py = str(path / "bin" / "python")
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([*pip, str(REPO)], capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (path / "bin" / "inductor-doctor").exists()
    pins = re.findall(r"^torch==(\S+)", RECIPE.files["requirements.txt"], re.M)
    proc = subprocess.run([*pip, f"torch=={pins[0]}"], capture_output=True, text=True, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    yield path
    shutil.rmtree(path.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def image(venv: Path, tmp_path_factory) -> Iterator[Sandbox]:
    """Walk the Dockerfile: ENV, WORKDIR and COPY applied; RUN lines that call the doctor kept.
    Removed after the module: the image's result cache holds Inductor's precompiled header (150 MB)."""
    root = tmp_path_factory.mktemp("rootfs")
    context = tmp_path_factory.mktemp("context")
    for name, body in RECIPE.files.items():
        (context / name).write_text(body)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_DOCTOR_") and k != "PYTHONPATH"}
    env["VENV_BIN"] = str(venv / "bin")
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env.pop("NO_COLOR", None)
    sandbox = Sandbox(root, env, root)
    for instruction, args in RECIPE.dockerfile:
        if instruction == "ENV":
            _apply_env(args, sandbox)
        elif instruction == "WORKDIR":
            sandbox.workdir = sandbox.path(args)
            sandbox.workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            src, dest = shlex.split(args)
            target = sandbox.path(dest)
            if dest.endswith("/") or dest == ".":
                target = target / Path(src).name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(context / src, target)
            target.chmod(0o755)
            sandbox.copied[target.name] = target
        elif instruction == "RUN" and args.startswith("inductor-doctor "):
            sandbox.gates.append((args, dict(sandbox.env), sandbox.workdir))
        elif instruction == "ENTRYPOINT":
            sandbox.entrypoint = json.loads(args)
    yield sandbox
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(context, ignore_errors=True)


def test_the_page_has_the_three_gates():
    runs = [a for i, a in RECIPE.dockerfile if i == "RUN"]
    assert any(a.startswith("inductor-doctor plan -r requirements.txt") for a in runs)
    assert any(a.startswith("inductor-doctor check --static --fail-on likely") for a in runs)
    assert "inductor-doctor check" in RECIPE.files["docker-entrypoint.sh"]
    install = [i for i, a in enumerate(runs) if a.startswith("pip install -r requirements.txt")]
    doctor = [i for i, a in enumerate(runs) if a.startswith("pip install inductor-doctor")]
    plan = [i for i, a in enumerate(runs) if a.startswith("inductor-doctor plan")]
    static = [i for i, a in enumerate(runs) if "check --static" in a]
    assert doctor[0] < plan[0] < install[0] < static[0], "doctor, plan, heavy install, static check"


@pytest.mark.heavy
def test_the_recipe_pins_the_torch_this_machine_has(venv: Path):
    """The pin is this machine's torch release, and the image's venv got exactly it."""
    pins = re.findall(r"^torch==(\S+)", RECIPE.files["requirements.txt"], re.M)
    code = "import importlib.metadata as m; print(m.version('torch'))"
    image = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60
    ).stdout.strip()
    assert pins and image.split("+")[0] == pins[0], f"the image has torch {image}, the recipe pins {pins}"
    installed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    ).stdout.strip()
    if not installed:
        pytest.skip("torch is not installed here")
    assert pins and installed.split("+")[0] == pins[0], (
        f"recipe pins torch {pins}, this machine has {installed}"
    )


@pytest.mark.heavy
def test_build_time_gates_pass_and_keep_their_report(image: Sandbox):
    assert len(image.gates) == 2
    for command, env, workdir in image.gates:
        proc = image.run(command, env=env, cwd=workdir)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    report = image.path("inductor-doctor-build.json")
    assert report.is_file(), "gate 2 keeps its JSON report in the image"
    doc = json.loads(report.read_text())
    validate("check", doc)
    assert doc["meta"].get("static") is True


# Heavy with the rest of the image's tests: the image's venv (a torch install) is built once, in the
# heavy stage, instead of once there and once more in the default run.
@pytest.mark.heavy
@pytest.mark.parametrize("command, expected", RECIPE.examples, ids=[c for c, _ in RECIPE.examples])
def test_page_examples_exit_as_documented(image: Sandbox, command: str, expected: int):
    proc = image.run(command, timeout=300)
    assert proc.returncode == expected, (
        f"{command}: {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
    )
    if expected == 2:
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


@pytest.mark.heavy
@pytest.mark.slow
def test_container_start_gate_runs_the_full_check(image: Sandbox):
    """The entrypoint as `docker run IMAGE true` runs it: the full check, then the command."""
    entry = image.copied[Path(image.entrypoint[0]).name]  # found on PATH in the image
    proc = image.run(f"{shlex.quote(str(entry))} sh -c 'echo started'", timeout=1200)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    assert proc.stdout.rstrip().endswith("started"), "the command runs after a clean check"
    failing = image.run(
        f"INDUCTOR_DOCTOR_ONLY=no-such-issue {shlex.quote(str(entry))} sh -c 'echo started'", timeout=300
    )
    assert failing.returncode == 2 and "started" not in failing.stdout, "a failing check stops the start"
