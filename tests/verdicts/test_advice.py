"""The first workaround can help in the state found (KnownIssue.advise), in real broken states.

Each test makes a state in which the issue's workarounds, in their written order, lead with advice
that cannot help there (install what is installed, point CXX at a g++ that is not there, apt-get
the headers of another Python), runs the real CLI, asserts what the user sees first, and then,
where the first advice is a setting, applies it and shows the issue gone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest
from conftest import run_cli, venv_python, which_or_skip

ENVS = os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests")
DEBS = Path(ENVS) / "debs"


def _check(only: str, env: Dict[str, str], python: Optional[str] = None, wrap: Sequence[str] = ()) -> dict:
    args = ["check", "--static", "--only", only, "--format", "json", "--quiet"]
    if python:
        args += ["--python", python]
    if not wrap:
        proc = run_cli(args, env=env)
    else:
        full = {**os.environ, **env}
        proc = subprocess.run([*wrap, sys.executable, "-m", "inductor_doctor", *args], capture_output=True,
                              text=True, env=full, timeout=600)
    assert proc.stdout.strip(), proc.stderr[-3000:]
    [finding] = [r for r in json.loads(proc.stdout)["results"] if r["id"] == only]
    return finding


def _commands(finding: dict) -> List[Optional[str]]:
    return [w["command"] for w in finding["workarounds"]]


def _bin(tmp_path: Path, *names: str) -> Path:
    """A PATH directory with the Python interpreter and the named programs of this machine only."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name in ("python3", "python", *names):
        real = shutil.which(name) if name not in ("python3", "python") else sys.executable
        if real and not (bindir / name).exists():
            (bindir / name).symlink_to(os.path.realpath(real))
    return bindir


def test_cxx_naming_a_missing_compiler_leads_with_the_one_installed(tmp_path):
    """CXX names a g++ that is not there, while /usr/bin/g++ is: "apt-get install g++" (the written
    first advice) installs what is installed; pointing CXX at it is what helps."""
    gxx = which_or_skip("g++")
    env = {"CXX": str(tmp_path / "gone" / "g++")}
    finding = _check("cxx-compiler-missing", env)
    assert finding["status"] == "affected", finding
    first = finding["workarounds"][0]
    assert first["command"] == f"export CXX={gxx}" and "is installed" in first["text"], first
    assert "apt-get install -y g++" not in _commands(finding)
    fixed = _check("cxx-compiler-missing", {"CXX": gxx})  # the first advice, applied
    assert fixed["status"] == "ok", fixed["reason"]


def test_a_path_without_the_installed_compiler_leads_with_its_path(tmp_path):
    """PATH (cron, a stripped environment) holds no compiler, but /usr/bin/g++ is installed:
    installing it again changes nothing; naming it does."""
    if not os.access("/usr/bin/g++", os.X_OK):
        pytest.skip("no /usr/bin/g++ here")
    finding = _check("cxx-compiler-missing", {"PATH": str(_bin(tmp_path))})
    assert finding["status"] == "affected"
    assert finding["workarounds"][0]["command"] == "export CXX=/usr/bin/g++", finding["workarounds"]
    assert "apt-get install -y g++" not in _commands(finding)
    fixed = _check("cxx-compiler-missing", {"PATH": str(_bin(tmp_path)), "CXX": "/usr/bin/g++"})
    assert fixed["status"] == "ok", fixed["reason"]


def test_clang_without_openmp_and_no_gcc_leads_with_the_libomp_install(tmp_path):
    """No g++ on PATH: "export CXX=g++" cannot help, so it is not the first advice (nor given)."""
    clang = which_or_skip("clang++-16")
    if Path("/usr/lib/llvm-16/lib/clang/16/include/omp.h").exists():
        pytest.skip("libomp-16-dev is installed here")
    bindir = _bin(tmp_path, "clang++-16", "ld", "as")
    finding = _check("openmp-headers-missing", {"PATH": str(bindir), "CXX": clang})
    assert finding["status"] == "affected", finding
    assert finding["workarounds"][0]["command"].startswith('apt-get install -y "libomp-')
    assert "export CXX=g++" not in _commands(finding) and "brew install libomp" not in _commands(finding)


def _overlay_libomp(tmp_path: Path) -> List[str]:
    """`unshare --mount` with libomp-16-dev's files laid over /usr/lib/llvm-16 (an overlay mount):
    what `apt-get install libomp-16-dev` does, in a private mount namespace."""
    which_or_skip("unshare")
    debs = sorted(DEBS.glob("libomp*16*.deb"))
    if len(debs) < 2:
        pytest.skip(f"libomp-16-dev and libomp5-16 .debs missing under {DEBS}: run tests/setup.sh")
    root = tmp_path / "deb-root"
    for deb in debs:
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    upper, work = root / "usr" / "lib" / "llvm-16", tmp_path / "work"
    work.mkdir()
    script = (f"mount -t overlay overlay -o lowerdir=/usr/lib/llvm-16,upperdir={upper},workdir={work} "
              '/usr/lib/llvm-16 && exec "$@"')
    wrap = ["unshare", "--mount", "sh", "-c", script, "sh"]
    probe = subprocess.run([*wrap, "test", "-f", "/usr/lib/llvm-16/lib/clang/16/include/omp.h"])
    if probe.returncode != 0:
        pytest.skip("cannot lay an overlay over /usr/lib/llvm-16 here")
    return wrap


def test_libomp_installed_but_not_searched_leads_with_the_clang_that_finds_it(tmp_path):
    """libomp-16-dev is installed (its omp.h in LLVM 16's resource directory), but CXX is a clang 16
    with a resource directory of its own: "install libomp-16-dev" cannot help. The reason says
    where the header is, and the first advice is the clang++-16 that searches there; applied, the
    issue is gone."""
    system_clang = which_or_skip("clang++-16")
    if Path("/usr/lib/llvm-16/lib/clang/16/include/omp.h").exists():
        pytest.skip("libomp-16-dev is installed here for real")
    wrap = _overlay_libomp(tmp_path)
    res = tmp_path / "clang-res"
    shutil.copytree("/usr/lib/llvm-16/lib/clang/16", res, symlinks=True)
    own = tmp_path / "own"
    own.mkdir()
    clang = own / "clang++"
    clang.write_text(f'#!/bin/sh\nexec {system_clang} -resource-dir {res} "$@"\n')
    clang.chmod(0o755)
    finding = _check("openmp-headers-missing", {"CXX": str(clang)}, wrap=wrap)
    assert finding["status"] == "affected", finding
    assert "libomp-16-dev is installed (/usr/lib/llvm-16/lib/clang/16/include/omp.h)" in finding["reason"]
    assert "install libomp-16-dev" not in finding["reason"]
    first = finding["workarounds"][0]
    assert first["command"] == f"export CXX={system_clang}", finding["workarounds"]
    assert not any((c or "").startswith('apt-get install -y "libomp-') for c in _commands(finding))
    fixed = _check("openmp-headers-missing", {"CXX": system_clang}, wrap=wrap)
    assert fixed["status"] == "ok", fixed["reason"]


@pytest.mark.envs
def test_a_python_that_is_not_the_systems_is_not_told_to_apt_get_its_headers():
    """catalog-noheaders is a pyenv-built Python without include/: apt-get's python3-dev installs
    the headers of /usr/bin/python3, not of this one."""
    python = venv_python("catalog-noheaders")
    finding = _check("python-headers-missing", {}, python=python)
    assert finding["status"] == "affected", finding
    commands = _commands(finding)
    assert not any((c or "").startswith(("apt-get", "dnf")) for c in commands), commands
    assert "is not the system's Python" in finding["workarounds"][0]["text"]


def test_an_old_compiler_beside_a_new_one_leads_with_the_new_one(tmp_path):
    """CXX is an 'old' g++ (a real g++ that says it is 7) while g++-12 is on PATH: installing
    g++-12 is not the first thing to do."""
    gxx12 = which_or_skip("g++-12")
    old = tmp_path / "old"
    old.mkdir()
    fake = old / "g++-7"
    fake.write_text('#!/bin/sh\ncase "$1" in -dumpfullversion|-dumpversion) echo 7.5.0; exit 0;; '
                    '--version) echo "g++-7 (Debian 7.5.0-1) 7.5.0"; '
                    'echo "Copyright (C) 2017 Free Software Foundation, Inc."; exit 0;; esac\n'
                    f'exec {gxx12} "$@"\n')
    fake.chmod(0o755)
    bindir = _bin(tmp_path, "g++-12", "gcc", "ld", "as")
    finding = _check("compiler-too-old", {"PATH": f"{old}:{bindir}", "CXX": str(fake)})
    assert finding["status"] in ("affected", "likely"), finding
    first = finding["workarounds"][0]
    assert first["command"] == f"export CXX={bindir / 'g++-12'}", finding["workarounds"]
    assert "apt-get install -y g++-12 && export CXX=g++-12" not in _commands(finding)
