"""docs/docker.md's recipe built for real, with podman: opt-in (`pytest -m container`), after
`tests/envs/build_container.sh` has made podman, a local Debian bookworm base image (with g++, and
one without any compiler) and a wheelhouse with the recipe's torch, under
~/.cache/inductor-doctor-tests/container.

The Dockerfile is the page's own (tests/house/test_docker_recipe.py reads the same blocks), with what this
machine cannot have replaced, and nothing else:
  * `FROM nvidia/cuda:...` becomes the local bookworm image: no image registry is reachable here,
    and there is no GPU to use CUDA with;
  * `pip install inductor-doctor` installs the wheel built from this checkout;
  * the requirements' CUDA index line goes, and pip takes torch from the wheelhouse (a CPU build of
    the pinned release, mounted into the build) and anything else from the registry it reaches
    through this host's CA bundle (copied into the image, PIP_CERT).
Four builds: the recipe as it is passes its three gates (gate 2 compiles the canary kernels for the
fleet's GPUs, sm_80 and sm_90, with the image's Triton 3.7.1 and its ptxas); a known-bad pin stops the
build at gate 1 (`plan`), before the heavy install; an image without a compiler passes gate 1 and the
install, and stops at gate 2 (`check --static --fail-on likely`); an image for an RTX 50xx fleet
(`--gpu sm_120`) whose Triton is pointed at a CUDA 12.4 ptxas (TRITON_PTXAS_BLACKWELL_PATH, as a
base image's toolkit is) stops at gate 2 with the row that says ptxas 12.4 refuses sm_120. Each
failing step's one line from the doctor and podman's line naming the step are asserted in the build
log, and a passing image's entrypoint runs gate 3 (the full check) on the CPU. The GPU part of gate 3
needs a GPU host: not here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Sequence

import pytest
from conftest import ENVS, REPO, without_progress
from test_docker_recipe import RECIPE

pytestmark = pytest.mark.container

HERE = ENVS / "container"
PODMAN = HERE / "podman"
BASE = "localhost/indoc-test-base:bookworm"
BASE_NO_COMPILER = "localhost/indoc-test-base:nocc"
CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
#: A pin the doctor knows is broken: torch 2.5.1 has triton-constexpr-dynamic (fixed in 2.6.0).
BAD_PIN = "torch==2.5.1"


@dataclass
class Build:
    returncode: int
    log: str
    tag: str

    def step_error(self) -> str:
        """podman's line naming the step that failed, or ''."""
        found = re.findall(r'^Error: building at STEP "([^"]+)".*$', self.log, re.M)
        return found[-1] if found else ""


def _podman(*args: str, timeout: float = 600, check: bool = False) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(PODMAN), *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"podman {' '.join(args)}: {proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="module")
def podman() -> Iterator[None]:
    if not (HERE / ".ready").exists() or shutil.which("podman") is None:
        msg = f"container builds not set up at {HERE}: run tests/envs/build_container.sh"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    images = _podman("images", "--format", "{{.Repository}}:{{.Tag}}", check=True).stdout.split()
    assert BASE in images and BASE_NO_COMPILER in images, images
    yield
    # The builds' images and layers go; the base images stay, for the next run.
    tags = [t for t in _podman("images", "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
            if t.startswith("localhost/indoc-test-recipe")]
    if tags:
        _podman("rmi", "-f", *tags)
    _podman("image", "prune", "-f")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The doctor as `pip install inductor-doctor` would get it: a wheel of this checkout."""
    out = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                           str(REPO)], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (found,) = out.glob("inductor_doctor-*.whl")
    return found


def _requirements(pins: List[str]) -> str:
    """The page's requirements.txt without its index line (the CUDA index is not reachable here)."""
    lines = [ln for ln in RECIPE.files["requirements.txt"].splitlines() if not ln.startswith("--")]
    return "\n".join([*pins, *lines]) + "\n" if pins else "\n".join(lines) + "\n"


#: The gate that compiles for the fleet's GPUs, and the GPUs the page names there.
GATE2 = "inductor-doctor check --static --fail-on likely"
FLEET = re.compile(r"(?: --gpu \S+)+")
#: What an image's CUDA 12.4 toolkit gives a Triton pointed at it: its ptxas (the pip wheel of it).
OLD_PTXAS = ["RUN pip install nvidia-cuda-nvcc-cu12==12.4.131",
             "ENV TRITON_PTXAS_BLACKWELL_PATH="
             "/opt/venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas"]


def _containerfile(wheel_name: str, base: str, compiler: bool, fleet: str = "",
                   before_gate2: Sequence[str] = ()) -> str:
    """The page's Dockerfile, with only what this machine cannot have replaced (module docstring);
    `fleet` replaces the GPUs gate 2 compiles for, `before_gate2` adds lines just before it."""
    out: List[str] = []
    for instruction, args in RECIPE.dockerfile:
        if instruction == "RUN" and args.startswith(GATE2):
            out += list(before_gate2)
            if fleet:
                args = FLEET.sub(f" {fleet}", args, count=1)
        if instruction == "FROM":
            out += [f"FROM {base}",
                    "COPY ca-certificates.crt /etc/indoc-test/ca-certificates.crt",
                    "ENV PIP_CERT=/etc/indoc-test/ca-certificates.crt PIP_FIND_LINKS=/wheels"
                    " PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore"]
            continue
        if instruction == "RUN" and args == "pip install inductor-doctor":
            out += [f"COPY {wheel_name} /tmp/", f"RUN pip install /tmp/{wheel_name}"]
            continue
        if instruction == "RUN" and "apt-get install" in args and not compiler:
            args = re.sub(r"\s+g\+\+(?=\s|$)", "", args)
            assert "g++" not in args
        out.append(f"{instruction} {args}")
    return "\n".join(out) + "\n"


def _build(tmp_path: Path, wheel: Path, tag: str, requirements: str, base: str = BASE,
           compiler: bool = True, fleet: str = "", before_gate2: Sequence[str] = ()) -> Build:
    ctx = tmp_path / "context"
    ctx.mkdir()
    shutil.copy(wheel, ctx / wheel.name)
    bundle = next((b for b in CA_BUNDLES if os.path.exists(b)), None)
    assert bundle, f"no CA bundle at {CA_BUNDLES}"
    shutil.copy(bundle, ctx / "ca-certificates.crt")
    # A line of its own makes every build run its gates, never a layer cached by an earlier run.
    (ctx / "requirements.txt").write_text(f"# build {uuid.uuid4().hex}\n{requirements}")
    entry = ctx / "docker-entrypoint.sh"
    entry.write_text(RECIPE.files["docker-entrypoint.sh"])
    entry.chmod(0o755)
    (ctx / "Containerfile").write_text(_containerfile(wheel.name, base, compiler, fleet, before_gate2))
    full = f"localhost/indoc-test-recipe:{tag}"
    start = time.monotonic()
    proc = subprocess.run(
        [str(PODMAN), "build", "--network=host", "--volume", f"{HERE / 'wheels'}:/wheels:ro",
         "-f", str(ctx / "Containerfile"), "-t", full, str(ctx)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1500,
    )
    took = time.monotonic() - start
    (tmp_path.parent / f"build-{tag}.log").write_text(proc.stdout)
    build = Build(proc.returncode, proc.stdout, full)
    print(f"\nbuild {tag}: exit {proc.returncode} in {took:.0f} s; failed step: {build.step_error() or '-'}")
    return build


def _ran(build: Build, command_start: str) -> bool:
    return re.search(r"^STEP \d+/\d+: RUN " + re.escape(command_start), build.log, re.M) is not None


@pytest.fixture(scope="module")
def passing(podman, wheel: Path, tmp_path_factory) -> Build:
    return _build(tmp_path_factory.mktemp("pass"), wheel, "pass", _requirements([]))


def test_the_recipe_builds_through_its_three_gates(passing: Build):
    assert passing.returncode == 0, passing.log[-5000:]
    for gate in ("inductor-doctor plan -r requirements.txt", "pip install -r requirements.txt",
                 "inductor-doctor check --static --fail-on likely"):
        assert _ran(passing, gate), f"{gate} did not run:\n{passing.log[-3000:]}"
    # Gate 1's plan, its three answers counted apart.
    plan_line = r"^\d+ affected, 0 likely, \d+ ok; \d+ cannot be predicted; \d+ cannot arise"
    assert re.search(plan_line, passing.log, re.M), passing.log[-3000:]


def test_gate_2_compiled_the_canary_kernels_for_the_fleets_gpus(passing: Build):
    """In the build, with no GPU: the image's Triton and ptxas compiled for sm_80 and sm_90; each such
    row says it was compiled, not run, and an A100's missing fp8 is a warning, not the build's end."""
    assert passing.returncode == 0
    code = "import json; print(json.dumps(json.load(open('/app/inductor-doctor-build.json'))['results']))"
    proc = _podman("run", "--rm", "--network=host", "--entrypoint", "/opt/venv/bin/python", passing.tag,
                   "-c", code, timeout=300, check=True)
    rows = {(r["id"], r["device"]): r for r in json.loads(proc.stdout.strip().splitlines()[-1])}
    for gpu in ("sm_80", "sm_90"):
        row = rows[("ptxas-unsupported-arch", gpu)]
        assert (row["status"], row.get("proved")) == ("ok", "compiled"), row
        assert "with triton 3.7.1 and ptxas 12.8" in row["reason"], row
        assert row["reason"].endswith("loading and launching on the GPU unproven")
    fp8 = rows[("gpu-dtype-unsupported", "sm_80")]
    assert (fp8["status"], fp8["severity"], fp8.get("proved")) == ("affected", "warning", "compiled"), fp8
    assert rows[("gpu-dtype-unsupported", "sm_90")]["status"] == "ok"
    affected = [r for r in rows.values() if r["status"] == "affected"]
    assert all(r["severity"] == "warning" for r in affected), affected


def test_the_image_has_the_pinned_cpu_torch_and_keeps_the_gate_report(passing: Build):
    assert passing.returncode == 0
    code = ("import json, importlib.metadata as m; "
            "print(json.dumps([m.version('torch'), m.version('inductor-doctor'), "
            "json.load(open('/app/inductor-doctor-build.json'))['summary']]))")
    proc = _podman("run", "--rm", "--network=host", "--entrypoint", "/opt/venv/bin/python", passing.tag,
                   "-c", code, timeout=300, check=True)
    torch, doctor, summary = json.loads(proc.stdout.strip().splitlines()[-1])
    pins = re.findall(r"^torch==(\S+)", RECIPE.files["requirements.txt"], re.M)
    assert torch == f"{pins[0]}+cpu", f"the image has torch {torch}: the wheelhouse was not used"
    assert doctor == "0.1.0"
    assert summary["likely"] == 0, summary  # affected: the warnings of gate 2's GPUs (test above)


@pytest.mark.slow
def test_the_entrypoint_runs_the_check_before_the_command(passing: Build):
    """Gate 3 as `docker run IMAGE CMD` runs it, on the CPU: a real canary (the C++ compile of a
    small graph; one, to keep the stage short: the full check's canaries have tests of their own),
    then the command; a check that fails stops the start."""
    assert passing.returncode == 0
    proc = _podman("run", "--rm", "--network=host", "-e", "INDUCTOR_DOCTOR_ONLY=cxx-compiler-missing",
                   passing.tag, "sh", "-c", "echo started", timeout=900)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    assert proc.stdout.rstrip().endswith("started")
    assert proc.stdout.startswith("inductor-doctor "), proc.stdout[-2000:]  # the check's own report
    # `ok` by the canary: a static verdict would be `ok*`
    assert re.search(r"^cxx-compiler-missing\s.*\bok$", proc.stdout, re.M), proc.stdout[-2000:]
    failing = _podman("run", "--rm", "--network=host", "-e", "INDUCTOR_DOCTOR_ONLY=no-such-issue",
                      passing.tag, "sh", "-c", "echo started", timeout=300)
    assert failing.returncode == 2 and "started" not in failing.stdout, failing.stderr[-1000:]


def test_a_known_bad_pin_stops_the_build_at_the_plan_gate(passing: Build, wheel: Path, tmp_path):
    """Gate 1 fails before the heavy install: the pin is named, the install never starts."""
    pins = [BAD_PIN]
    requirements = "\n".join([*pins, *[ln for ln in _requirements([]).splitlines()
                                         if not ln.startswith("torch==")]]) + "\n"
    build = _build(tmp_path, wheel, "bad-pin", requirements)
    assert build.returncode != 0, build.log[-3000:]
    assert build.step_error() == "RUN inductor-doctor plan -r requirements.txt", build.log[-3000:]
    assert re.search(r"^AFFECTED  triton-constexpr-dynamic on cuda", build.log, re.M), build.log[-3000:]
    assert "torch==2.5.1 is in the affected range" in build.log
    assert "exit status 1" in build.log
    assert not _ran(build, "pip install -r requirements.txt"), "the heavy install ran after a failed plan"


def test_an_image_without_a_compiler_stops_the_build_at_the_static_gate(passing: Build, wheel: Path,
                                                                        tmp_path):
    """Gate 1 passes (a plan cannot see the compiler the image will lack), the install runs, and
    gate 2 finds no C++ compiler: the build stops there, and its log says so in one line."""
    build = _build(tmp_path, wheel, "no-compiler", _requirements([]), base=BASE_NO_COMPILER, compiler=False)
    assert build.returncode != 0, build.log[-3000:]
    assert _ran(build, "inductor-doctor plan -r requirements.txt")
    assert _ran(build, "pip install -r requirements.txt")
    failed = build.step_error()
    assert failed.startswith("RUN inductor-doctor check --static --fail-on likely"), build.log[-3000:]
    # The failing gate's one line; the progress lines a run over two seconds writes are not it.
    doctor_lines = [ln for ln in without_progress(build.log) if ln.startswith("inductor-doctor: ")]
    assert len(doctor_lines) == 1, doctor_lines
    # the gate's cause first; the A100's missing fp8 is a warning of gate 2's GPUs, said but not failing
    assert "2 affected: cxx-compiler-missing on cpu, gpu-dtype-unsupported on sm_80" in doctor_lines[0]
    assert doctor_lines[0].endswith("the report is in inductor-doctor-build.json")
    assert "exit status 1" in build.log



def test_an_image_whose_ptxas_is_too_old_for_its_gpus_stops_at_the_static_gate(passing: Build, wheel: Path,
                                                                              tmp_path):
    """A fleet of RTX 50xx (sm_120) and an image whose Triton runs its base image's CUDA 12.4 ptxas for
    them: gate 1 cannot know (the plan has no ptxas), the install runs, and gate 2's compile for sm_120
    fails in that ptxas. The build stops there, with the row that says so and the compiler's words."""
    build = _build(tmp_path, wheel, "old-ptxas", _requirements([]), fleet="--gpu sm_120",
                   before_gate2=OLD_PTXAS)
    assert build.returncode != 0, build.log[-3000:]
    assert _ran(build, "inductor-doctor plan -r requirements.txt")
    assert _ran(build, "pip install -r requirements.txt")
    assert build.step_error().startswith(f"RUN {GATE2} --gpu sm_120"), build.log[-3000:]
    # The failing gate's one line; the progress lines a run over two seconds writes are not it.
    doctor_lines = [ln for ln in without_progress(build.log) if ln.startswith("inductor-doctor: ")]
    assert len(doctor_lines) == 1 and "ptxas-unsupported-arch on sm_120" in doctor_lines[0], doctor_lines
    assert "exit status 1" in build.log
