"""compile-cache-stale: a half-written shared object in a real compile cache directory.

The truncated file is a real shared object cut short, where Inductor keeps its kernels; the
loader's own refusal of it ("file too short") is produced for real and triaged; a network file
system under the cache is tested on recorded facts (there is none here).
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_rules_environment import make_facts, only

from inductor_doctor.core.facts import CacheDirInfo, CacheInfo
from inductor_doctor.core.model import Status
from inductor_doctor.probe.caches import scan


def _real_so() -> str:
    found = ctypes.util.find_library("z") or ctypes.util.find_library("m")
    for d in ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"):
        if found and os.path.exists(os.path.join(d, found)):
            return os.path.join(d, found)
    pytest.skip("no shared library to copy here")


def _cache_with_a_cut_object(root: Path) -> Path:
    cache = root / "torchinductor_test"
    kernel = cache / "wg" / "cwgblozyk66h2rilkm4c4rw6syalfhi7iya2htlr7mt7ldyrukap.so"
    kernel.parent.mkdir(parents=True)
    shutil.copy(_real_so(), kernel)
    with open(kernel, "r+b") as f:  # a write cut short: the first 40 bytes only
        f.truncate(40)
    # Cut a little later, the loader says "cannot read file data"; later still, the process dies of
    # SIGBUS (the mapping runs past the end of the file). Tried by hand with glibc 2.36.
    whole = cache / "ab" / "cabwhole.so"
    whole.parent.mkdir()
    shutil.copy(_real_so(), whole)
    return cache


def test_the_loader_refuses_it_and_the_probe_finds_it(tmp_path: Path):
    cache = _cache_with_a_cut_object(tmp_path)
    [cut] = list(cache.glob("wg/*.so"))
    proc = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(cut)!r})"],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "file too short" in proc.stderr, proc.stderr[-500:]
    found = scan(str(cache))
    assert found.complete and found.objects == 2 and found.truncated == [str(cut)]


def test_check_flags_it_and_the_cleared_cache_is_ok(tmp_path: Path):
    cache = _cache_with_a_cut_object(tmp_path)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(cache), "INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "doc")}
    args = ["check", "--static", "--only", "compile-cache-stale", "--format", "json"]
    [row] = json.loads(run_cli(args, env=env).stdout)["results"]
    assert row["status"] == "affected" and "file too short" in row["reason"] and "cwgblozyk" in row["reason"]
    shutil.rmtree(cache / "wg")
    [row] = json.loads(run_cli(args, env=env).stdout)["results"]
    assert row["status"] == "ok", row


def test_the_loaders_message_is_triaged_to_it(tmp_path: Path):
    cache = _cache_with_a_cut_object(tmp_path)
    [cut] = list(cache.glob("wg/*.so"))
    proc = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(cut)!r})"],
                          capture_output=True, text=True)
    log = tmp_path / "run.log"
    log.write_text(proc.stderr)
    out = json.loads(run_cli(["explain", "--log", str(log), "--format", "json"]).stdout)
    assert out["results"][0]["id"] == "compile-cache-stale", out["results"][:2]


def test_a_network_file_system_is_likely():
    facts = make_facts()
    facts.caches = CacheInfo(dirs=[CacheDirInfo(name="inductor", path="/shared/inductor", exists=True,
                                                fs_type="nfs4", mount_point="/shared")])
    o = only("compile-cache-stale", facts)
    assert o.status is Status.LIKELY and "nfs4" in o.reason


def test_the_scan_is_bounded_however_large_the_cache(tmp_path: Path):
    for i in range(300):
        d = tmp_path / f"d{i:03d}"
        d.mkdir()
        (d / "k.so").write_bytes(b"\x7fELF" + b"\0" * 60)
    found = scan(str(tmp_path), budget_s=0.0)
    assert found.complete is False
