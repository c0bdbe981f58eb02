"""The loop a doctor is used in: check, apply the workaround, check again — and get the new truth.

Each test breaks this machine for real, runs a plain `check` (no `--no-cache`: the loop as users run
it, sharing one cache directory between the two runs), applies the workaround the doctor offers the
way a user would (install the package's files, drop a compiler onto PATH, remount a cache directory,
unset a variable, move TMPDIR), and checks again. The second verdict must be the machine's, not the
first run's remembered one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from conftest import ENVS, run_cli, see_this_python, which_or_skip

pytestmark = pytest.mark.slow

DEBS = ENVS / "debs"  # tests/setup.sh downloads them (apt-get download), never installs them


def check(only: str, cache: Path, env: Optional[Dict[str, str]] = None) -> Dict[str, dict]:
    """A plain `check --only ID` with a cache directory of its own: {device: finding}."""
    proc = run_cli(["check", "--only", only, "--format", "json", "--quiet"],
                   env={"INDUCTOR_DOCTOR_CACHE_DIR": str(cache), **(env or {})}, timeout=600)
    assert proc.stdout.strip(), f"rc={proc.returncode} {proc.stderr[-2000:]}"
    return {r["device"]: r for r in json.loads(proc.stdout)["results"]}


def statuses(found: Dict[str, dict]) -> Dict[str, str]:
    return {d: r["status"] for d, r in found.items()}


def commands(finding: dict) -> List[str]:
    return [w["command"] for w in finding["workarounds"] if w["command"]]


# --- install a header: the compiler binary stays the same, as `apt-get install` leaves it ----------


def _private_clang(tmp_path: Path) -> Path:
    """A clang++ of our own: clang-16 with a copy of its resource directory and a library directory,
    so that installing libomp's files touches nothing outside the test."""
    clang = which_or_skip("clang++-16")
    res = tmp_path / "clang-res"
    shutil.copytree("/usr/lib/llvm-16/lib/clang/16", res, symlinks=True)
    for name in ("omp.h", "ompx.h", "omp-tools.h"):
        (res / "include" / name).unlink(missing_ok=True)
    lib = tmp_path / "lib"
    lib.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "clang++"
    wrapper.write_text(f'#!/bin/sh\nexec {clang} -resource-dir {res} -L{lib} -Wl,-rpath,{lib} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def _install_libomp(wrapper: Path) -> None:
    """What `apt-get install libomp-16-dev` puts where this clang looks: the header and the library."""
    debs = sorted(DEBS.glob("libomp*16*.deb"))
    if len(debs) < 2:
        pytest.fail(f"libomp-16-dev and libomp5-16 .debs missing under {DEBS}: run tests/setup.sh")
    root = wrapper.parent.parent / "deb-root"
    for deb in debs:
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    shutil.copy(root / "usr/lib/llvm-16/lib/clang/16/include/omp.h", wrapper.parent.parent / "clang-res" /
                "include" / "omp.h")
    for so in (root / "usr/lib/llvm-16/lib").glob("libomp.so*"):
        shutil.copy(so, wrapper.parent.parent / "lib" / so.name, follow_symlinks=True)


def test_installing_the_openmp_headers_is_seen_by_the_next_plain_check(tmp_path):
    wrapper = _private_clang(tmp_path)
    env = {"CXX": str(wrapper)}
    before = check("openmp-headers-missing", tmp_path / "cache", env)
    assert statuses(before) == {"cpu": "affected"}, before["cpu"]["reason"]
    assert "omp.h" in before["cpu"]["reason"]
    _install_libomp(wrapper)
    after = check("openmp-headers-missing", tmp_path / "cache", env)
    assert statuses(after) == {"cpu": "ok"}, after["cpu"]["reason"]


def test_installing_python_headers_is_seen_by_the_next_plain_check(tmp_path):
    """A Python without its development headers (as without python3-dev), then with them."""
    base = Path(sys.base_prefix)
    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    prefix = tmp_path / "py"
    (prefix / "bin").mkdir(parents=True)
    stdlib = prefix / "lib" / minor
    stdlib.mkdir(parents=True)
    shutil.copy(base / "bin" / minor, prefix / "bin" / minor)  # a copy: its prefix is where it lies
    (prefix / "bin" / "python").symlink_to(minor)
    for entry in (base / "lib" / minor).iterdir():  # the standard library, linked
        if entry.name != "site-packages":
            (stdlib / entry.name).symlink_to(entry)
    # Its own site-packages sees the running interpreter's (a venv's, when the tests run in one):
    # torch must be there for the issue to apply, whatever the base interpreter has.
    (stdlib / "site-packages").mkdir()
    see_this_python(stdlib / "site-packages")
    python = str(prefix / "bin" / "python")
    proc = run_cli(["check", "--python", python, "--only", "python-headers-missing", "--format", "json",
                    "--quiet"], env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    found = {r["id"]: r for r in json.loads(proc.stdout)["results"]}
    assert found["python-headers-missing"]["status"] == "affected", found
    shutil.copytree(base / "include", prefix / "include", symlinks=True)  # what python3-dev installs
    proc = run_cli(["check", "--python", python, "--only", "python-headers-missing", "--format", "json",
                    "--quiet"], env={"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    found = {r["id"]: r for r in json.loads(proc.stdout)["results"]}
    assert found["python-headers-missing"]["status"] == "ok", found["python-headers-missing"]["reason"]


# --- drop a compiler onto PATH, into a directory already on it --------------------------------------


def test_a_compiler_dropped_onto_path_is_seen_by_the_next_plain_check(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("python3", "python"):
        (bindir / name).symlink_to(os.path.realpath(sys.executable))
    env = {"PATH": str(bindir)}
    before = check("cxx-compiler-missing", tmp_path / "cache", env)
    assert statuses(before) == {"cpu": "affected"}, before
    first = "export CXX=/usr/bin/g++" if os.access("/usr/bin/g++", os.X_OK) else "apt-get install -y g++"
    assert commands(before["cpu"])[0] == first  # what is installed is named before installing anything
    for name in ("g++", "gcc", "c++", "cc", "as", "ld"):  # a compiler, as a package would add it
        real = shutil.which(name)
        if real:
            (bindir / name).symlink_to(os.path.realpath(real))
    after = check("cxx-compiler-missing", tmp_path / "cache", env)  # PATH itself did not change
    assert statuses(after) == {"cpu": "ok"}, after["cpu"]["reason"]


# --- set or unset an environment variable ---------------------------------------------------------


def test_unsetting_cxx_is_seen_by_the_next_plain_check(tmp_path):
    which_or_skip("clang++-16")
    if Path("/usr/lib/llvm-16/lib/clang/16/include/omp.h").exists():
        pytest.skip("libomp headers are installed here: clang-16 has OpenMP")
    before = check("openmp-headers-missing", tmp_path / "cache", {"CXX": "clang++-16"})
    assert statuses(before) == {"cpu": "affected"}
    assert "export CXX=g++" in commands(before["cpu"])
    after = check("openmp-headers-missing", tmp_path / "cache", {"CXX": "g++"})
    assert statuses(after) == {"cpu": "ok"}, after["cpu"]["reason"]


# --- a cache directory's mount fixed, and TMPDIR moved: each loop in one mount namespace -----------


def _in_namespace(tmp_path: Path, script: str) -> List[Dict[str, dict]]:
    """Runs `script` (which prints JSON reports, one per line) in a private mount namespace."""
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare or "unshare", "--mount", "true"], capture_output=True, text=True)
    if unshare is None or probe.returncode != 0:
        pytest.skip(f"cannot make a private mount namespace here ({probe.stderr.strip()[:200]})")
    env = dict(os.environ, INDUCTOR_DOCTOR_CACHE_DIR=str(tmp_path / "cache"), PY=sys.executable)
    proc = subprocess.run([unshare, "--mount", "sh", "-ec", script], capture_output=True, text=True, env=env,
                          timeout=900, cwd=str(tmp_path))
    reports = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert reports, f"rc={proc.returncode} {proc.stderr[-2000:]}"
    return [{r["device"]: r for r in rep["results"]} for rep in reports]


CHECK = '"$PY" -m inductor_doctor check --only {id} --format json --quiet | tr -d "\\n"; echo'


def test_remounting_a_read_only_cache_directory_is_seen_by_the_next_plain_check(tmp_path):
    (tmp_path / "mnt").mkdir()
    script = f"""
mount -t tmpfs -o ro tmpfs mnt
export TORCHINDUCTOR_CACHE_DIR="$PWD/mnt/inductor"
{CHECK.format(id="cache-dir-unwritable")}
mount -o remount,rw mnt
{CHECK.format(id="cache-dir-unwritable")}
"""
    before, after = _in_namespace(tmp_path, script)
    assert statuses(before) == {"toolchain": "affected"}, before
    assert statuses(after) == {"toolchain": "ok"}, after["toolchain"]["reason"]


def test_moving_tmpdir_off_a_noexec_mount_is_seen_by_the_next_plain_check(tmp_path):
    """Inductor's default cache lies under TMPDIR: the doctor's advice is to move TMPDIR."""
    (tmp_path / "mnt").mkdir()
    (tmp_path / "exec-tmp").mkdir()
    script = f"""
mount -t tmpfs -o noexec tmpfs mnt
unset TORCHINDUCTOR_CACHE_DIR
export TMPDIR="$PWD/mnt"
{CHECK.format(id="cache-dir-noexec")}
export TMPDIR="$PWD/exec-tmp"
{CHECK.format(id="cache-dir-noexec")}
"""
    before, after = _in_namespace(tmp_path, script)
    assert statuses(before) == {"toolchain": "affected"}, before
    assert "TMPDIR" in " ".join(commands(before["toolchain"]))
    assert statuses(after) == {"toolchain": "ok"}, after["toolchain"]["reason"]
