"""A static `ok` never rests on a path that is not there: real states of the files a rule names.

A stale loader cache that lists a libcuda.so.1 that is gone (an ldconfig cache bound over
/etc/ld.so.cache in a private mount namespace), a file called libcuda.so.1 that is no library, and
a stale `triton` tree on PYTHONPATH in front of a real installed Triton (the catalog's CUDA torch
2.6 venv). The GPU branches are the GPU host's (tests/gpu_states.sh); here the probe's facts are
real and a GPU is added to them where the rule needs one to speak.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, venv_python, which_or_skip

HERE = Path(__file__).resolve().parents[2]

LIBCUDA_RULE = r"""
import json, os, sys
from inductor_doctor.probe import cuda, loader
from inductor_doctor.core.facts import CudaInfo, Facts, GPUInfo, PythonInfo, TritonInfo
from inductor_doctor.kb import libcuda_not_found
info = cuda.toolkit_info(CudaInfo(driver_version="580.159.04"), dict(os.environ), "x86_64")
info.gpus = [GPUInfo(0, "NVIDIA H100 80GB HBM3", sm="9.0")]
facts = Facts(PythonInfo(sys.executable, "3.11.7", platform="linux"), cuda=info,
              triton=TritonInfo(version=sys.argv[1], path="/nonexistent/triton"), env=dict(os.environ))
[o] = libcuda_not_found.rule(facts)
found = loader.find_library("libcuda.so.1", {"machine": "x86_64"})  # what libstdc++'s search uses
print(json.dumps({"status": o.status.value, "reason": o.reason, "paths": info.libcuda_paths, "found": found,
                  "missing": getattr(info, "libcuda_missing", None)}))
"""


def _fake_libcuda(where: Path) -> Path:
    """A shared library whose soname is libcuda.so.1, so that ldconfig lists it under that name."""
    gcc = which_or_skip("gcc")
    where.mkdir(parents=True)
    src = where / "empty.c"
    src.write_text("int cuInit(unsigned flags) { return 100; }\n")
    lib = where / "libcuda.so.1"
    subprocess.run([gcc, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(lib), str(src)],
                   check=True)
    return lib


def _rule(version: str, env=None, wrap=()) -> dict:
    full = {**os.environ, "PYTHONPATH": str(HERE), **(env or {})}
    proc = subprocess.run([*wrap, sys.executable, "-c", LIBCUDA_RULE, version], capture_output=True,
                          text=True, env=full, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_loader_cache_listing_a_libcuda_that_is_gone_is_not_ok(tmp_path):
    """/usr/local hidden on a GPU host leaves /etc/ld.so.cache listing its libcuda.so.1: Triton
    searches only the cache's directories and asserts. Made here with a cache of our own, built by
    ldconfig over a real library that is then removed, bound over /etc/ld.so.cache."""
    which_or_skip("unshare")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    lib = _fake_libcuda(tmp_path / "driver")
    (tmp_path / "ld.so.conf").write_text(f"{lib.parent}\n")
    cache = tmp_path / "ld.so.cache"
    subprocess.run([ldconfig, "-C", str(cache), "-f", str(tmp_path / "ld.so.conf")], check=True)
    script = f'mount --bind {cache} /etc/ld.so.cache && exec "$@"'
    wrap = ("unshare", "--mount", "sh", "-c", script, "sh")
    if subprocess.run([*wrap, "true"]).returncode != 0:
        pytest.skip("cannot bind-mount over /etc/ld.so.cache in a private namespace here")
    there = _rule("3.6.0", wrap=wrap)  # the library is there: found, and Triton 3.6 links it by soname
    assert there["status"] == "ok" and there["paths"] == [str(lib)] and there["found"] == str(lib), there
    shutil.rmtree(lib.parent)  # the cache now lists a file that is gone
    gone = _rule("3.6.0", wrap=wrap)
    assert gone["paths"] == [] and gone["missing"] == [str(lib)] and gone["found"] is None, gone
    assert gone["status"] == "affected", gone
    assert f"the ldconfig cache lists {lib}, which is not there" in gone["reason"]


def test_a_libcuda_that_is_not_a_library_is_not_ok(tmp_path):
    """TRITON_LIBCUDA_PATH naming a directory whose libcuda.so.1 is no shared library."""
    fake = tmp_path / "lib"
    fake.mkdir()
    (fake / "libcuda.so.1").write_text("not a library\n")
    got = _rule("3.6.0", env={"TRITON_LIBCUDA_PATH": str(fake)})
    assert got["status"] == "affected" and got["paths"] == [], got
    real = _fake_libcuda(tmp_path / "real")
    assert _rule("3.6.0", env={"TRITON_LIBCUDA_PATH": str(real.parent)})["status"] == "ok"


# --- a stale Triton on PYTHONPATH shadowing the installed one ---------------------------------------


def _stale_triton(tmp_path: Path) -> Path:
    """A `triton` tree of an old release, as an old checkout or an unpacked wheel on PYTHONPATH
    leaves it: its own __init__.py, no backends, no ptxas."""
    stale = tmp_path / "stale"
    (stale / "triton").mkdir(parents=True)
    (stale / "triton" / "__init__.py").write_text('__version__ = "2.1.0"\n')
    return stale


def _check_json(python: str, only: str, env) -> dict:
    args = ["check", "--static", "--python", python, "--only", only, "--format", "json", "--quiet"]
    proc = run_cli(args, env=env)
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.envs
def test_a_stale_triton_on_pythonpath_is_named_with_the_first_thing_to_do(tmp_path):
    """The catalog's CUDA torch 2.6 venv has Triton 3.2.0 installed; a stale `triton` tree on
    PYTHONPATH is what `import triton` finds. triton-missing says so (likely: no GPU here), and the
    first advice takes that directory off PYTHONPATH; installing Triton again would change nothing."""
    python = venv_python("catalog-nvjitlink-skew")
    stale = _stale_triton(tmp_path)
    only = "triton-missing,ptxas-unsupported-arch,triton-version-skew"
    clean = _check_json(python, only, {"PYTHONPATH": str(HERE)})
    [before] = [r for r in clean["results"] if r["id"] == "triton-missing"]
    assert before["status"] == "ok", before
    report = _check_json(python, only, {"PYTHONPATH": f"{HERE}{os.pathsep}{stale}"})
    [f] = [r for r in report["results"] if r["id"] == "triton-missing"]
    assert f["status"] == "likely", f
    says = f"`import triton` finds {stale}/triton (triton 2.1.0), not the installed triton 3.2.0"
    assert says in f["reason"]
    assert f["workarounds"][0]["command"] == f"export PYTHONPATH={HERE}", f["workarounds"]
    assert not any("pip install" in (w["command"] or "") for w in f["workarounds"])
    # The release that runs is the copy's: against torch 2.6's pin (3.2.0), that is a skew.
    [skew] = [r for r in report["results"] if r["id"] == "triton-version-skew"]
    assert skew["status"] == "likely", skew
    copy = f"triton 2.1.0 (the copy at {stale}/triton, not the installed 3.2.0) is older"
    assert skew["reason"].startswith(copy), skew
    assert skew["workarounds"][0]["command"] == f"export PYTHONPATH={HERE}", skew["workarounds"]
    triton = report["environment"]["triton"]
    assert (triton.get("shadowed_install") or "").endswith("site-packages/triton")
    assert triton.get("imported_version") == "2.1.0"
    # ptxas-unsupported-arch on a GPU with these very facts: the bundled ptxas of the copy that
    # imports is not there, so no release table may stand in for it.
    from inductor_doctor.core.facts import Facts, GPUInfo
    from inductor_doctor.kb import ptxas_unsupported_arch

    facts = Facts.from_dict(report["environment"])
    facts.cuda.gpus = [GPUInfo(0, "NVIDIA H100 80GB HBM3", sm="9.0")]
    [o] = ptxas_unsupported_arch.rule(facts)
    assert o.status.value == "inconclusive", o
    assert f"is not there: {stale}/triton/backends/nvidia/bin/ptxas" in o.reason
    assert "not the installed one (see triton-missing)" in o.reason


@pytest.mark.envs
def test_an_installed_triton_is_not_taken_for_a_shadow(tmp_path):
    """The installed Triton alone, and the same venv run with its own site-packages on PYTHONPATH
    (the same tree twice), is no shadow."""
    python = venv_python("catalog-nvjitlink-skew")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    report = _check_json(python, "triton-missing", {"PYTHONPATH": f"{HERE}{os.pathsep}{site}"})
    assert report["environment"]["triton"].get("shadowed_install") is None
