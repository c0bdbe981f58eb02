"""One interpreter, however it is spelled, has one set of records; a venv never shares its base's.

Before, `preflight('cpu')` from a script run as `python` re-ran every canary (13 s; 55 s on this
busy machine) right after a `check` run as `python3`, which answered from the record (0.18 s): the
canary cache was keyed by the path as spelled. And the last report was keyed by `realpath`, which
follows a venv's `bin/python3` to its base interpreter: a venv and its base shared one. Records are
now kept under the canonical path (`core/interpreter.py`): links followed
(`python` -> `python3` -> `python3.11`), but never out of a venv (its `pyvenv.cfg` says where one
starts, as Python decides it). Tried here on real interpreters: this one's own spellings, a real
venv (links), a real venv made with `--copies`, and the records themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from conftest import run_cli

from inductor_doctor.check import cache, record
from inductor_doctor.check.runner import CanaryJob
from inductor_doctor.core.interpreter import canonical_interpreter, same_interpreter
from inductor_doctor.probe.target import resolve_python
from inductor_doctor.target import canary_path


def spellings_of_this_one(tmp_path: Path) -> List[str]:
    """This interpreter under three names in one directory (`python3.11`, `python3` -> it, `python`
    -> `python3`), as a base install lays them out: real links, a real interpreter behind them."""
    bin_dir = tmp_path / "base" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python3.11").symlink_to(os.path.realpath(sys.executable))
    (bin_dir / "python3").symlink_to("python3.11")
    (bin_dir / "python").symlink_to("python3")
    return [str(bin_dir / n) for n in ("python", "python3", "python3.11")]


@pytest.fixture(scope="module")
def venvs(tmp_path_factory) -> dict:
    """Two real venvs of this interpreter: one of links (the default), one of copies."""
    root = tmp_path_factory.mktemp("venvs")
    made = {}
    for kind, extra in (("links", []), ("copies", ["--copies"])):
        path = root / kind
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", *extra, str(path)], check=True,
                       timeout=120)
        made[kind] = [str(path / "bin" / n) for n in ("python", "python3", f"python3.{sys.version_info[1]}")]
    return made


# --- the canonical path ---------------------------------------------------------------------------


def test_the_spellings_of_one_install_are_one_interpreter(tmp_path: Path) -> None:
    """Outside a venv, a path is the interpreter it resolves to, as Python finds its prefix there. (The
    spellings are of the base interpreter: where the tests run in a venv, the venv is another one.)"""
    names = spellings_of_this_one(tmp_path) + [os.path.realpath(sys.executable)]
    assert {canonical_interpreter(n) for n in names} == {os.path.realpath(sys.executable)}
    same = [subprocess.run([n, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                           check=True).stdout for n in names]
    assert len(set(same)) == 1, "and they are one interpreter for Python too"


@pytest.mark.parametrize("kind", ["links", "copies"])
def test_a_venv_is_one_interpreter_and_never_its_base(venvs, kind: str) -> None:
    names = venvs[kind]
    assert len({canonical_interpreter(n) for n in names}) == 1, names
    canonical = canonical_interpreter(names[0])
    assert canonical == os.path.join(os.path.dirname(names[0]), "python3")
    assert not same_interpreter(canonical, sys.executable)
    prefix = subprocess.run([canonical, "-c", "import sys; print(sys.prefix)"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert os.path.realpath(prefix) == os.path.realpath(os.path.dirname(os.path.dirname(names[0]))), \
        "running the canonical path is running the venv"


def test_resolve_python_answers_the_canonical_path(venvs) -> None:
    assert resolve_python(None) == canonical_interpreter(sys.executable)
    assert resolve_python(venvs["links"][0]) == venvs["links"][1]  # bin/python -> bin/python3


# --- the records ----------------------------------------------------------------------------------


def test_the_last_report_is_one_per_interpreter(tmp_path: Path, venvs, monkeypatch) -> None:
    """Kept as `python3`, found as `python`; a venv's is its own, its base's never found there."""
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    names = spellings_of_this_one(tmp_path)
    assert cache.save_last(names[1], {"results": [], "meta": {"who": "base"}}) is None
    assert [cache.last_report(n)["meta"]["who"] for n in names] == ["base"] * 3
    venv = venvs["links"]
    assert all(cache.last_report(n) is None for n in venv), "a venv is not its base"
    assert cache.save_last(venv[0], {"results": [], "meta": {"who": "venv"}}) is None
    assert [cache.last_report(n)["meta"]["who"] for n in venv] == ["venv"] * 3
    assert cache.last_report(names[0])["meta"]["who"] == "base"


def test_a_canary_outcome_is_one_per_interpreter(tmp_path: Path, venvs, monkeypatch) -> None:
    monkeypatch.setenv("INDUCTOR_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    store = cache.CanaryStore()
    script = canary_path("cxx_compiler_missing.py")

    def key(python: str) -> str:
        job = CanaryJob("cxx-compiler-missing@cpu", script, "cpu", python, 60.0)
        made = store.key(job, canary_path("../harness.py"))
        assert made is not None
        return made

    names = spellings_of_this_one(tmp_path)
    assert len({key(n) for n in names}) == 1
    assert len({key(n) for n in venvs["links"]}) == 1
    assert key(venvs["links"][0]) != key(names[0])


def test_preflight_s_record_is_one_per_interpreter(tmp_path: Path, venvs) -> None:
    names = spellings_of_this_one(tmp_path)
    assert len({record.fingerprint("cpu", n) for n in names}) == 1
    assert record.fingerprint("cpu", names[0]) == record.fingerprint("cpu", os.path.realpath(sys.executable))
    assert len({record.fingerprint("cpu", n) for n in venvs["links"]}) == 1
    assert record.fingerprint("cpu", venvs["links"][0]) != record.fingerprint("cpu", names[0])


# --- for real: a check run as one spelling, its canary reused by another -------------------------


@pytest.mark.heavy
def test_a_check_as_python3_serves_a_check_as_python(tmp_path: Path) -> None:
    """The reproduction, with a real canary: checked once as `python3`, then as `python` and as
    `python3.11`: the canary's outcome is reused, not run again."""
    names = spellings_of_this_one(tmp_path)
    cache_dir = {"INDUCTOR_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    metas = []
    for name in (names[1], names[0], names[2]):
        proc = run_cli(["check", "--only", "cxx-compiler-missing", "--python", name, "--format", "json"],
                       env=cache_dir, timeout=600)
        assert proc.returncode in (0, 1), proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["environment"]["python"]["executable"] == os.path.realpath(sys.executable)
        metas.append(doc["meta"])
    assert metas[0].get("canaries_run") == 1
    assert [m.get("canaries_cached") for m in metas[1:]] == [1, 1], metas
