"""Every workaround works as written, on the releases it is offered for.

Each command the knowledge base offers is valid shell and names real packages; where it can run
here it runs for real (the directory, the compiler flag through a real extension build, the apt
package for the clang that needs it, the pip resolution); where it cannot, its release range is
checked against the release facts. A test puts the old wording back where that shows it failing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from conftest import which_or_skip

from inductor_doctor.core.model import Workaround
from inductor_doctor.kb import registry

HERE = Path(__file__).resolve().parents[1]  # tests/


def builtin() -> List[Tuple[str, Workaround]]:
    return [
        (i.id, w) for i in registry() if not i.id.startswith(("fault-", "recipe-")) for w in i.workarounds
    ]


def command(issue_id: str, needle: str) -> str:
    [found] = [w.command for i, w in builtin() if i == issue_id and w.command and needle in w.command]
    return found


def bash(script: str, env: Dict[str, str], cwd: Path = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )


# --- every command ---------------------------------------------------------------------------------


def test_every_runnable_workaround_is_valid_shell():
    bad = []
    for issue_id, w in builtin():
        if w.command:
            proc = subprocess.run(["bash", "-n", "-c", w.command], capture_output=True, text=True)
            if proc.returncode:
                bad.append(f"{issue_id}: {w.command}: {proc.stderr.strip()}")
    assert not bad, bad


_INSTALLERS = {
    "pip": re.compile(r"\bpip install\s+(.*?)(?:&&|;|$)"),
    "apt": re.compile(r"\bapt-get install\s+(.*?)(?:&&|;|$)"),
}


def named_packages(kind: str) -> List[Tuple[str, str]]:
    """(issue, requirement) for every package a workaround installs with `kind`, as bash sees it.
    A name computed by the command itself (`pip install "$(python -c ...)"`) is run, not read: see
    the tests of its issue."""
    out = []
    for issue_id, w in builtin():
        if "$(python" in (w.command or ""):
            continue
        for m in _INSTALLERS[kind].finditer(w.command or ""):
            split = shlex.split(m.group(1))
            valued = {"--index-url", "--extra-index-url", "--no-binary", "--only-binary", "-c", "-r"}
            values = {i + 1 for i, x in enumerate(split) if x in valued}  # an option's value, not a package
            words = [x for i, x in enumerate(split) if not x.startswith("-") and i not in values]
            out += [(issue_id, x) for x in words if "$(" not in x]
    return out


def test_every_apt_package_exists_here():
    """Debian package names, asked of apt itself (the test machine is Debian, like most images)."""
    apt_cache = shutil.which("apt-cache")
    if apt_cache is None:
        pytest.skip("no apt-cache here")
    names = sorted({name for _, name in named_packages("apt")})
    assert {"g++", "gcc", "python3-dev"} <= set(names), names
    proc = subprocess.run([apt_cache, "show", *names], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.envs  # asks the package index
def test_every_pip_requirement_resolves_on_the_index():
    from packaging.requirements import Requirement
    from packaging.version import Version

    reqs = sorted({r for _, r in named_packages("pip")})
    assert any(r.startswith("triton-windows") for r in reqs)
    bad = []
    for text in reqs:
        req = Requirement(text)
        platform = (
            ["--platform", "win_amd64", "--python-version", "3.12", "--only-binary=:all:"]
            if req.name == "triton-windows"
            else []
        )
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", req.name, *platform],
            capture_output=True,
            text=True,
            timeout=120,
        )
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("Available versions:")), "")
        versions = [Version(v.strip()) for v in line.split(":", 1)[-1].split(",") if v.strip()]
        if not any(req.specifier.contains(v, prereleases=True) for v in versions):
            bad.append(f"{text}: nothing on the index satisfies it ({proc.stderr.strip()[-200:]})")
    assert not bad, bad


# --- 1. cache-dir-noexec: TMPDIR must exist -------------------------------------------------------


def test_tmpdir_workaround_moves_python_and_inductor(tmp_path: Path):
    cmd = command("cache-dir-noexec", "TMPDIR")
    probe = (
        f'{shlex.quote(sys.executable)} -c "import tempfile; '
        "from torch._inductor.runtime.cache_dir_utils import default_cache_dir; "
        'print(tempfile.gettempdir()); print(default_cache_dir())"'
    )
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("TMPDIR", None)
    out = bash(f"{cmd}\n{probe}", env)
    assert out.returncode == 0, out.stderr
    tmp, inductor = out.stdout.split()
    assert tmp == str(tmp_path / "tmp") and inductor.startswith(str(tmp_path / "tmp") + "/torchinductor_")
    # The old advice, without the mkdir: Python ignores the missing directory.
    old = bash(f'export TMPDIR="$HOME/tmp2"\n{probe}', env)
    assert old.stdout.split()[0] != str(tmp_path / "tmp2")


# --- 2. const-data-ptr-abi: CFLAGS reaches the compile line, CXXFLAGS does not ---------------------


def _build_ext(tmp_path: Path, env: Dict[str, str]) -> str:
    """torch's BuildExtension (ninja) on a one-line source; the compile rule it wrote."""
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "m.cpp").write_text("int answer() { return 42; }\n")
    (src / "setup.py").write_text(
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CppExtension\n"
        "setup(name='m', ext_modules=[CppExtension('m', ['m.cpp'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )
    shutil.rmtree(src / "build", ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext"],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [ninja] = (src / "build").glob("temp*/build.ninja")
    return next(ln for ln in ninja.read_text().splitlines() if ln.startswith("cflags ="))


@pytest.mark.slow
def test_the_abi_flag_reaches_the_extension_compile_through_cflags_only(tmp_path: Path):
    which_or_skip("ninja")
    clang = which_or_skip("clang++-19")
    cmd = command("const-data-ptr-abi", 'export CFLAGS')
    env = {k: v for k, v in os.environ.items() if k not in ("CFLAGS", "CXXFLAGS", "CPPFLAGS")}
    env["CXX"] = clang
    applied = bash(f"{cmd}\nenv -0", env)
    env_after = dict(x.split("=", 1) for x in applied.stdout.split("\0") if "=" in x)
    assert "-fclang-abi-compat=17" in _build_ext(tmp_path, env_after)
    # The old advice: CXXFLAGS lands on the link line, never on the compile line.
    old = {**env, "CXXFLAGS": "-fclang-abi-compat=17"}
    assert "-fclang-abi-compat=17" not in _build_ext(tmp_path, old)


@pytest.mark.slow
def test_jit_load_reads_extra_cflags_not_the_environment(tmp_path: Path):
    which_or_skip("ninja")
    clang = which_or_skip("clang++-19")
    (tmp_path / "m.cpp").write_text("int answer() { return 42; }\n")
    code = (
        "import sys; from torch.utils.cpp_extension import load; "
        "load('m', ['m.cpp'], build_directory=sys.argv[1], is_python_module=False, "
        "extra_cflags=sys.argv[2:])"
    )
    seen = {}
    for name, extra, env_flags in (
        ("env", [], "-fclang-abi-compat=17"),
        ("arg", ["-fclang-abi-compat=17"], ""),
    ):
        build = tmp_path / name
        build.mkdir()
        env = {**os.environ, "CXX": clang, "CFLAGS": env_flags, "CXXFLAGS": env_flags}
        proc = subprocess.run(
            [sys.executable, "-c", code, str(build), *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        seen[name] = "-fclang-abi-compat=17" in (build / "build.ninja").read_text().split("\nrule", 1)[0]
    assert seen == {"env": False, "arg": True}
    text = next(
        w.text for i, w in builtin() if i == "const-data-ptr-abi" and w.command and "CFLAGS" in w.command
    )
    assert "extra_cflags=['-fclang-abi-compat=17']" in text


# --- 3. libstdcxx-too-old: the directory torch uses, whoever $USER is -----------------------------


def test_the_cache_clearing_command_finds_torchs_own_directory(tmp_path: Path):
    cmd = command("libstdcxx-too-old", "rm -rf")
    env = {k: v for k, v in os.environ.items() if k not in ("USER", "TORCHINDUCTOR_CACHE_DIR")}
    env["TMPDIR"] = str(tmp_path)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    import getpass

    target = tmp_path / f"torchinductor_{getpass.getuser()}"
    (target / "xy").mkdir(parents=True)
    (target / "xy" / "kernel.so").write_text("stale")
    out = bash(cmd.replace("python ", f"{shlex.quote(sys.executable)} ", 1), env)
    assert out.returncode == 0, out.stderr
    assert not target.exists()
    # And TORCHINDUCTOR_CACHE_DIR, when set, is the one cleared.
    own = tmp_path / "own"
    (own / "ab").mkdir(parents=True)
    out = bash(
        cmd.replace("python ", f"{shlex.quote(sys.executable)} ", 1),
        {**env, "TORCHINDUCTOR_CACHE_DIR": str(own)},
    )
    assert out.returncode == 0 and not (own / "ab").exists()
    # The old command, with USER unset, aims at /tmp/torchinductor_ (nobody's directory).
    assert bash('echo "/tmp/torchinductor_$USER"', env).stdout.strip() == "/tmp/torchinductor_"


# --- 4. openmp-headers-missing: the libomp of the clang in use -------------------------------------


def test_the_libomp_package_follows_the_clang_major(tmp_path: Path):
    clang16 = which_or_skip("clang++-16")
    cmd = command("openmp-headers-missing", "apt-get")
    shown = bash(f"echo {cmd}", {**os.environ, "CXX": clang16}).stdout.split()
    assert shown[-1] == "libomp-16-dev", shown
    apt_cache = shutil.which("apt-cache")
    if apt_cache:
        assert subprocess.run([apt_cache, "show", "libomp-16-dev"], capture_output=True).returncode == 0
        # The old advice: libomp-dev is the distribution's LLVM, not clang 16's.
        depends = subprocess.run([apt_cache, "depends", "libomp-dev"], capture_output=True, text=True).stdout
        assert "libomp-16-dev" not in depends


# --- 8. xla-donor-hash: an exact pair --------------------------------------------------------------


@pytest.mark.envs  # resolves against the package index
def test_the_xla_upgrade_resolves_to_one_release_of_both(tmp_path: Path):
    def resolve(reqs: List[str]) -> Dict[str, str]:
        report = tmp_path / "report.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--ignore-installed",
                "-q",
                "--report",
                str(report),
                *reqs,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        got = {
            i["metadata"]["name"].lower().replace("_", "-"): i["metadata"]["version"]
            for i in json.loads(report.read_text())["install"]
        }
        return {k: got[k] for k in ("torch", "torch-xla")}

    cmd = command("xla-donor-hash", "torch_xla")
    pair = resolve(shlex.split(cmd)[2:])
    assert pair["torch"] == pair["torch-xla"], pair
    old = resolve(["torch_xla>=2.6", "torch>=2.6"])
    assert old["torch"].split(".")[:2] != old["torch-xla"].split(".")[:2], old


# --- 7. triton-missing: triton-windows pinned to torch's pair -----------------------------------


def test_triton_windows_pins_follow_torchs_triton():
    from inductor_doctor.core.releases import TORCH_TRITON_PIN
    from inductor_doctor.kb.triton_missing import WINDOWS_TRITON

    for torch_minor, triton_minor in WINDOWS_TRITON.items():
        pins = {p.lstrip("=~") for v, p in TORCH_TRITON_PIN.items() if v.startswith(torch_minor + ".")}
        assert pins and all(p.startswith(triton_minor + ".") for p in pins), (torch_minor, pins)
    offered = {
        w.command
        for i, w in builtin()
        if i == "triton-missing"
        and w.applies_to({"torch": ["2.9.1"]})
        and "triton-windows" in (w.command or "")
    }
    assert offered == {'pip install "triton-windows==3.5.*"'}
    assert not any(w.command == "pip install triton-windows" for _, w in builtin())


# --- 10. version caveats ------------------------------------------------------------------------


@pytest.mark.parametrize("issue_id", ["compiler-too-old", "cxx-compiler-missing", "clang-on-linux"])
def test_cxx_is_not_offered_to_torch_2_0_which_ignores_it(issue_id: str):
    issue = registry().find(issue_id)
    for version, expect_export in (("2.0.1", False), ("2.1.0", True), ("2.13.0", True)):
        offered = [w for w in issue.workarounds if w.applies_to({"torch": [version]})]
        assert any("export CXX=" in (w.command or "") for w in offered) is expect_export, (issue_id, version)
        assert any("cpp.cxx" in w.text for w in offered) is (not expect_export)


def test_libcuda_link_stops_when_the_loader_cache_lists_none(tmp_path: Path):
    cmd = command("libcuda-not-found", "ln -s")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ldconfig").write_text("#!/bin/sh\necho '1 libs found in cache'\n")
    (fake / "ldconfig").chmod(0o755)
    work = tmp_path / "cwd"
    work.mkdir()
    out = bash(cmd, {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}, cwd=work)
    assert out.returncode != 0 and not any(work.iterdir())  # no ./libcuda.so made out of nothing
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libcuda.so.1").write_text("")
    (fake / "ldconfig").write_text(f"#!/bin/sh\necho '\tlibcuda.so.1 (libc6,x86-64) => {lib}/libcuda.so.1'\n")
    out = bash(cmd, {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}, cwd=work)
    assert out.returncode == 0, out.stderr
    assert os.readlink(lib / "libcuda.so") == "libcuda.so.1"
    issue = registry().find("libcuda-not-found")
    for triton, offered in (("3.5.1", True), ("3.6.0", False)):
        assert (
            any("ln -s" in (w.command or "") for w in issue.workarounds if w.applies_to({"triton": [triton]}))
            is offered
        )
    assert not any(
        "TRITON_LIBCUDA_PATH" in (w.command or "")
        for w in issue.workarounds
        if w.applies_to({"triton": ["2.1.0"]})
    )


def test_aten_cpu_capability_leaves_march_native():
    """What the block-mask-cpu text now says: the vector ISA changes, the compile target does not."""
    code = "from torch._inductor.cpp_builder import _get_cpu_arch_cflags; print(_get_cpu_arch_cflags('g++'))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ATEN_CPU_CAPABILITY": "default"},
    )
    if proc.returncode != 0 and "cannot import name" in proc.stderr:
        pytest.skip("this torch has no _get_cpu_arch_cflags")
    assert "march=native" in proc.stdout, proc.stdout + proc.stderr[-1000:]
    text = next(w.text for i, w in builtin() if i == "block-mask-cpu" and w.command and "ATEN" in w.command)
    assert "-march=native" in text
