"""Rebuild the release snapshot from PyPI: every torch and Triton release from 2.0 on.

For each release, one Linux x86_64 wheel is read (the one pip would pick for CPython 3.12, else
3.11, else the newest): its METADATA, the source files in `torch_facts.FILES` /
`triton_facts.FILES`, and every bundled ptxas, which is run. The snapshot keeps the facts, the
wheel's sha256 (from the index) and the sha256 of every file the facts came from.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from audit import ptxas_run, remote, torch_facts, triton_facts, wheel_facts

FIRST = {"torch": Version("2.0"), "triton": Version("2.0")}
LISTED = ("torch", "triton", "torch-xla")
PREFERRED_PYTHONS = ("cp312", "cp311", "cp313", "cp314", "cp310", "cp315")
#: Bump when an extractor changes what it records, so cached per-wheel facts are redone.
EXTRACTOR_VERSION = 3


class RefreshError(Exception):
    """A release the audit cannot read: one line naming the release and what to update."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def final_versions(index: Dict[str, Any]) -> List[str]:
    """Final releases with at least one file that is not yanked, oldest first."""
    live = set()
    for f in index["files"]:
        if f.get("yanked"):
            continue
        try:
            _, ver, _, _ = parse_wheel_filename(f["filename"])
        except InvalidWheelFilename:
            continue  # sdists: torch has none; Triton's carry no extra version
        live.add(str(ver))
    out = []
    for v in index["versions"]:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not (parsed.is_prerelease or parsed.is_devrelease or parsed.is_postrelease) and v in live:
            out.append(v)
    return sorted(out, key=Version)


def linux_wheels(index: Dict[str, Any], version: str) -> List[Tuple[Any, Any, Dict[str, Any]]]:
    out = []
    for f in index["files"]:
        if f.get("yanked") or not f["filename"].endswith(".whl"):
            continue
        try:
            _, ver, build, tags = parse_wheel_filename(f["filename"])
        except InvalidWheelFilename:
            continue
        if str(ver) == version and any("linux" in t.platform and t.platform.endswith("x86_64") for t in tags):
            out.append((build, tags, f))
    return out


def pick_wheel(index: Dict[str, Any], version: str) -> Dict[str, Any]:
    wheels = linux_wheels(index, version)
    if not wheels:
        raise RuntimeError(f"no Linux x86_64 wheel for {version}")

    def rank(item: Tuple[Any, Any, Dict[str, Any]]) -> Tuple[int, Any, str]:
        build, tags, f = item
        interps = {t.interpreter for t in tags if not t.abi.endswith("t")}
        pref = min((PREFERRED_PYTHONS.index(i) for i in interps if i in PREFERRED_PYTHONS), default=99)
        return (-pref, build, f["filename"])

    return max(wheels, key=rank)[2]


def pythons(index: Dict[str, Any], version: str) -> List[str]:
    """The CPython versions with a Linux x86_64 wheel: "3.12", and "3.13t" for free-threaded."""
    seen = set()
    for _, tags, _ in linux_wheels(index, version):
        for t in tags:
            if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit():
                digits = t.interpreter[2:]
                name = f"{digits[0]}.{digits[1:]}"
                seen.add(name + ("t" if t.abi.endswith("t") else ""))
    return sorted(seen, key=lambda s: (Version(s.rstrip("t")), s.endswith("t")))


def _cached(kind: str, key: str, compute: Any) -> Any:
    path = remote.cache_root() / "facts" / f"{kind}-{key}-v{EXTRACTOR_VERSION}.json"
    if path.exists():
        return json.loads(path.read_text())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, sort_keys=True))
    return value


def audit_torch(index: Dict[str, Any], version: str) -> Dict[str, Any]:
    wheel = remote.Wheel(pick_wheel(index, version))

    def compute() -> Dict[str, Any]:
        meta_name = next(n for n in wheel.names() if n.endswith(".dist-info/METADATA"))
        meta = wheel.text(meta_name) or ""
        facts = torch_facts.extract(wheel.text, meta)
        facts["files"] = {n: remote.sha256_of(p) for n in (*torch_facts.FILES, meta_name)
                          if (p := wheel.member(n)) is not None}
        return facts

    facts = _cached("torch", wheel.sha256, compute)
    return {"wheel": wheel.filename, "sha256": wheel.sha256, "pythons": pythons(index, version), **facts}


def audit_triton(index: Dict[str, Any], version: str, ptxas: Dict[str, Any]) -> Dict[str, Any]:
    wheel = remote.Wheel(pick_wheel(index, version))

    def compute() -> Dict[str, Any]:
        meta_name = next(n for n in wheel.names() if n.endswith(".dist-info/METADATA"))
        facts = triton_facts.extract(wheel.text, wheel.text(meta_name) or "", wheel.names())
        facts["files"] = {n: remote.sha256_of(p) for n in (*triton_facts.FILES, meta_name)
                          if (p := wheel.member(n)) is not None}
        for key in ("ptxas", "ptxas_blackwell"):
            if facts[key] is not None:
                binary = wheel.member(facts[key]["member"])
                assert binary is not None
                facts[key]["sha256"] = remote.sha256_of(binary)
        return facts

    facts = _cached("triton", wheel.sha256, compute)
    for key in ("ptxas", "ptxas_blackwell"):
        if facts[key] is not None:
            sha = facts[key]["sha256"]
            if sha not in ptxas:
                binary = wheel.member(facts[key]["member"])
                assert binary is not None
                log(f"  ptxas {facts[key]['member']} ({sha[:12]})")
                ptxas[sha] = _cached("ptxas", sha, lambda b=binary: ptxas_run.facts(b))
    return {"wheel": wheel.filename, "sha256": wheel.sha256, **facts}


def build(offline: bool = False) -> Dict[str, Any]:
    indexes = {name: remote.index(name, refresh=not offline) for name in LISTED}
    listed = {name: final_versions(idx) for name, idx in indexes.items()}
    snapshot: Dict[str, Any] = {
        "schema": 1,
        "as_of": time.strftime("%Y-%m-%d", time.gmtime()),
        "source": "https://pypi.org/simple/ (PEP 691 JSON); Linux x86_64 wheels",
        "releases": listed,
        "torch": {},
        "triton": {},
        "ptxas": {},
    }
    for v in listed["torch"]:
        if Version(v) >= FIRST["torch"]:
            log(f"torch {v}")
            try:
                snapshot["torch"][v] = audit_torch(indexes["torch"], v)
            except torch_facts.Unreadable as exc:
                raise RefreshError(f"torch {v}: {exc}; update tools/audit/torch_facts.py") from None
    for v in listed["triton"]:
        if Version(v) >= FIRST["triton"]:
            log(f"triton {v}")
            try:
                snapshot["triton"][v] = audit_triton(indexes["triton"], v, snapshot["ptxas"])
            except triton_facts.Unreadable as exc:
                raise RefreshError(f"triton {v}: {exc}; update tools/audit/triton_facts.py") from None
    snapshot["ptxas"] = dict(sorted(snapshot["ptxas"].items(), key=lambda kv: Version(kv[1]["version"])))
    add_wheel_facts(snapshot, indexes["torch"])
    return snapshot


#: Which platforms' wheels get their GPU architectures read (the others: build and tags only).
KERNELS = ("linux_x86_64", "linux_aarch64")


def wheel_facts_of(index: Dict[str, Any], version: str) -> Dict[str, Any]:
    """Per platform, what PyPI's wheel of torch `version` is built for (`wheel_facts.platform_facts`)."""
    out: Dict[str, Any] = {}
    for key in wheel_facts.PLATFORMS:
        wheels = wheel_facts.platform_wheels(index, version, key)
        if not wheels:
            continue
        sha = wheel_facts.pick(wheels)["hashes"]["sha256"]
        try:
            facts = _cached("wheel", f"{sha}-{key}-w{wheel_facts.VERSION}",
                            lambda k=key: wheel_facts.platform_facts(index, version, k, k in KERNELS))
        except wheel_facts.Unreadable as exc:
            raise RefreshError(f"torch {version} ({key}): {exc}; update tools/audit/wheel_facts.py") from None
        if facts is not None:
            out[key] = facts
    return out


def add_wheel_facts(snapshot: Dict[str, Any], index: Dict[str, Any]) -> None:
    """Every torch release's `pypi` entry: the build, CUDA, GPU architectures and tags per platform."""
    for v in snapshot["torch"]:
        log(f"torch {v}: wheel facts")
        snapshot["torch"][v]["pypi"] = wheel_facts_of(index, v)


def dumps(snapshot: Dict[str, Any]) -> str:
    """Compact JSON with one release per line, so that a refresh reads as a short diff."""
    lines = ["{"]
    keys = list(snapshot)
    for i, key in enumerate(keys):
        value = snapshot[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, dict) and key in ("releases", "torch", "triton", "ptxas"):
            lines.append(f"{json.dumps(key)}: {{")
            items = list(value.items())
            for j, (k, v) in enumerate(items):
                tail = "," if j < len(items) - 1 else ""
                body = json.dumps(v, separators=(",", ":"), sort_keys=True)
                lines.append(f"  {json.dumps(k)}: {body}{tail}")
            lines.append("}" + comma)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(snapshot: Dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(dumps(snapshot), encoding="utf-8")
    tmp.replace(path)
