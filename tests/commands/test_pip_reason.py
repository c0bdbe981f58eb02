"""A failed install says why in one line, from pip's final error (suggest --verify, why --versions).

Before, `plan --suggest --verify` with PyTorch's index unreachable exited 1 showing pip's first
retry warning cut mid-word ("WARNING: Retrying (Retry(total=4, ...)) after connection broken by
'ProxyError(... [Errno 111] "), and a suggestion above this machine's pip constraint said only
"ERROR: Cannot install torch==2.15.0 because these package versions have conflicting dependencies."
Every case here is a real pip run in a real scratch venv: against a local index (a directory of
wheels, `local_torch_index`), an index on a closed local port, a proxy on a closed local port, and
a constraint file; never the network.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Dict, Iterator

import pytest
from conftest import local_torch_index, run_cli

from inductor_doctor.schemas import validate
from inductor_doctor.scratch.pip_reason import cut, pip_error
from inductor_doctor.scratch.venv import ScratchVenv

MACHINE_CONSTRAINTS = Path("/etc/xdg/pip/constraints.txt")


def closed_port() -> int:
    """A local port nothing listens on: connecting is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pip_env(**extra: str) -> Dict[str, str]:
    """This environment without any pip setting of this machine's (find-links, extra indexes, a
    constraint), one retry, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_RETRIES="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Iterator[ScratchVenv]:
    """One scratch venv with pip for every failing install (nothing gets installed into it)."""
    made = ScratchVenv.create(parent=str(tmp_path_factory.mktemp("scratch")))
    try:
        yield made
    finally:
        made.remove(force=True)


@pytest.fixture(scope="module")
def house() -> Dict[str, str]:
    return local_torch_index("2.13.0")


def one_line(reason: str) -> str:
    assert "\n" not in reason and not reason.startswith("WARNING") and "Retry(total=" not in reason, reason
    return reason


# --- an index that cannot be reached -------------------------------------------------------------


def test_an_index_on_a_closed_port_is_said_unreachable_with_pip_s_conclusion(venv: ScratchVenv) -> None:
    url = f"http://127.0.0.1:{closed_port()}/simple"
    done = venv.install(["torch==2.13.0"], index_url=url, env=pip_env())
    assert not done.ok
    assert one_line(pip_error(done)) == (
        f"its index {url} could not be reached ([Errno 111] Connection refused), and pip then says: "
        "No matching distribution found for torch==2.13.0 (from versions: none)")


def test_a_proxy_on_a_closed_port_is_said_as_the_way_the_index_was_not_reached(venv: ScratchVenv) -> None:
    proxy = f"http://127.0.0.1:{closed_port()}"
    done = venv.install(["torch==2.13.0"], index_url="https://download.pytorch.org/whl/cpu",
                        env=pip_env(HTTPS_PROXY=proxy, https_proxy=proxy, NO_PROXY="", no_proxy=""))
    assert not done.ok
    assert one_line(pip_error(done)) == (
        "its index https://download.pytorch.org/whl/cpu could not be reached (a proxy it was told to use: "
        "[Errno 111] Connection refused), and pip then says: No matching distribution found for "
        "torch==2.13.0 (from versions: none)")


# --- an index that answers, and what it cannot give ---------------------------------------------


def test_a_constraint_file_is_named_with_what_it_allows(venv: ScratchVenv, house, tmp_path: Path) -> None:
    caps = tmp_path / "constraints.txt"
    caps.write_text("torch<2.13\n")
    done = venv.install(["torch==2.13.0"], env=pip_env(PIP_CONSTRAINT=str(caps), **house))
    assert not done.ok
    reason = one_line(pip_error(done))
    assert reason.startswith("Cannot install torch==2.13.0"), reason
    assert reason.endswith("(a pip constraint: torch<2.13)"), reason


def test_a_release_the_index_does_not_have_says_what_it_has(venv: ScratchVenv, house) -> None:
    done = venv.install(["torch==2.99.0"], env=pip_env(**house))
    assert not done.ok
    reason = one_line(pip_error(done))
    assert reason.startswith("No matching distribution found for torch==2.99.0 (from versions: 2.13.0"), \
        reason


def test_a_long_reason_is_cut_between_words_never_mid_word() -> None:
    long = "word " * 200
    said = cut(long, 60)
    assert len(said) <= 60 and said.endswith("word…") and "  " not in said


# --- through the command a user runs -------------------------------------------------------------


@pytest.mark.heavy
def test_suggest_verify_says_this_machine_s_constraint_and_where_it_is_set(house, tmp_path: Path) -> None:
    """`plan --suggest --verify` from a local index: the suggestion (the newest release) against this
    machine's pip configuration, which caps torch below it (the constraint pip.conf names)."""
    if not MACHINE_CONSTRAINTS.exists():
        pytest.skip("this machine's pip has no constraint file")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = run_cli(["plan", "--suggest", "--verify", "--format", "json"],
                   env={"TMPDIR": str(scratch), "PIP_RETRIES": "1", **house}, timeout=900)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    validate("suggest", doc)
    v = doc["verify"]
    assert not v["installed"] and not v["ok"]
    reason = one_line(v["reason"])
    cap = next(line for line in MACHINE_CONSTRAINTS.read_text().splitlines() if line.startswith("torch"))
    assert reason.startswith("pip install failed: Cannot install torch=="), reason
    assert f"(a pip constraint: {cap.replace(' ', '')})" in reason, reason
    assert f"set by {MACHINE_CONSTRAINTS} (pip's configuration) on this machine, not by the plan" in reason
    assert list(scratch.iterdir()) == [], "the scratch venv is removed"


@pytest.mark.heavy
def test_suggest_verify_says_pytorch_s_index_could_not_be_reached(tmp_path: Path) -> None:
    """PyTorch's index behind a proxy that refuses (a closed local port): pip's retries, then its
    conclusion, said in one line with the index and how it was not reached."""
    proxy = f"http://127.0.0.1:{closed_port()}"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {name: None for name in os.environ if name.startswith("PIP_")}
    env.update({"TMPDIR": str(scratch), "PIP_CONFIG_FILE": os.devnull, "PIP_RETRIES": "1",
                "HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": "", "no_proxy": ""})
    proc = run_cli(["plan", "--suggest", "--verify", "--format", "json"], env=env, timeout=900)
    assert proc.returncode == 1, proc.stderr
    v = json.loads(proc.stdout)["verify"]
    reason = one_line(v["reason"])
    assert reason.startswith("pip install failed: its index https://download.pytorch.org/whl/cpu could not "
                             "be reached (a proxy it was told to use: [Errno 111] Connection refused), and "
                             "pip then says: No matching distribution found for torch=="), reason
