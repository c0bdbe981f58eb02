"""Every wording of every known issue's error, read from the releases that raise it.

A known issue's `[[signatures]]` match the words a log carries; those words come from raise sites in
torch, Triton (and triton-windows), Transformers, vLLM, FlashInfer, xformers. Each issue's data file
says once where its error is raised (`[[wording_sources]]`: the package, the files, an anchor regex
that picks the message); this reads those files from every release of the package (the wheel's own
sources through HTTP range requests, or the sdist where a wheel ships a message only compiled), takes
each message template the anchor finds (`raise_sites.py`: blanks kept as `{expr}`), and writes the
table `inductor_doctor/core/_data/wordings.json`: per issue, each wording with the releases it
belongs to and its source file and line. `tests/known_issues/test_wordings.py` renders every
template and checks triage finds its issue; a new release is a regenerated table, not a pattern
typed from one log.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from audit import raise_sites, remote
from inductor_doctor.triage.scan import required_literals

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "inductor_doctor" / "core" / "_data" / "wordings.json"
#: Bump when the extractor changes what it records, so cached per-release sites are redone.
EXTRACTOR_VERSION = 2


@dataclass(frozen=True)
class Package:
    """Which releases of a package are read: from `first` on, every final release ("release"), the
    newest post-release of each (triton-windows numbers its builds as post-releases: "base"), or the
    newest patch of each minor release ("minor": libraries with hundreds of releases)."""

    first: str
    each: str = "release"


PACKAGES: Dict[str, Package] = {
    "torch": Package("2.0"),
    "triton": Package("2.0"),
    "triton-windows": Package("3.0", each="base"),
    "transformers": Package("4.30", each="minor"),
    "vllm": Package("0.4", each="minor"),
    "flashinfer-python": Package("0.2"),
    "xformers": Package("0.0.22"),
}
#: Which wheel of a release is read: the sources are the same in every wheel of one release, so the
#: first of these platforms there is, for the newest CPython.
PLATFORMS = ("linux_x86_64", "any", "win_amd64", "linux", "macosx")
PYTHONS = ("cp312", "cp311", "cp313", "cp310", "cp39", "py3")


class WordingError(Exception):
    """A release or a declaration the tool cannot read: one line naming it."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- the declarations ------------------------------------------------------------------------------


def declared(only: Optional[Iterable[str]] = None) -> Dict[str, List[Dict[str, Any]]]:
    """Each issue's `[[wording_sources]]`, read from its data file, by issue id."""
    from inductor_doctor.kb import _issue_files

    out: Dict[str, List[Dict[str, Any]]] = {}
    wanted = set(only or ())
    for path in _issue_files.paths():
        data = _issue_files.read(path)
        if data.get("wording_sources") and (not wanted or data["id"] in wanted):
            for src in data["wording_sources"]:
                if src["package"] not in PACKAGES:
                    raise WordingError(f"{path.name}: package {src['package']!r} is not one the tool reads "
                                       f"(tools/audit/wordings.py PACKAGES: {', '.join(PACKAGES)})")
                re.compile(src["anchor"])
            out[data["id"]] = [dict(s) for s in data["wording_sources"]]
    return out


def fingerprint(sources: List[Dict[str, Any]]) -> str:
    """A short hash of one issue's declarations: the table says which declarations it was read with."""
    return hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()[:16]


# --- the releases ----------------------------------------------------------------------------------


def releases(name: str, index: Dict[str, Any]) -> List[str]:
    """The releases of `name` the policy reads, oldest first (each with a file that is not yanked)."""
    policy = PACKAGES[name]
    live = set()
    for f in index["files"]:
        if f.get("yanked"):
            continue
        version = _file_version(f["filename"])
        if version is not None:
            live.add(version)
    picked: Dict[Any, Version] = {}
    for v in live:
        if v.is_prerelease or v.is_devrelease or v.local or v < Version(policy.first):
            continue
        if v.is_postrelease and policy.each != "base":
            continue
        key = {"release": v, "base": v.base_version, "minor": v.release[:2]}[policy.each]
        if key not in picked or v > picked[key]:
            picked[key] = v
    return [str(v) for v in sorted(picked.values())]


def _file_version(filename: str) -> Optional[Version]:
    try:
        if filename.endswith(".whl"):
            return Version(str(parse_wheel_filename(filename)[1]))
        return Version(str(parse_sdist_filename(filename)[1]))
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def pick(index: Dict[str, Any], version: str, sdist: bool) -> Optional[Dict[str, Any]]:
    """The file of a release that is read: its sdist, or its wheel for the first platform and Python
    of `PLATFORMS` and `PYTHONS` (None: the release has no such file)."""
    want = Version(version)
    best: Optional[Tuple[Tuple[int, int], Dict[str, Any]]] = None
    for f in index["files"]:
        name = f["filename"]
        if f.get("yanked") or _file_version(name) != want:
            continue
        if sdist:
            if name.endswith((".tar.gz", ".zip")):
                return f
            continue
        if not name.endswith(".whl"):
            continue
        tags = parse_wheel_filename(name)[3]
        plat = min((i for t in tags for i, p in enumerate(PLATFORMS) if _platform(t.platform, p)),
                   default=len(PLATFORMS))
        py = min((i for t in tags for i, p in enumerate(PYTHONS)
                  if t.interpreter == p and not t.abi.endswith("t")), default=len(PYTHONS))
        rank = (plat, py)
        if best is None or rank < best[0]:
            best = (rank, f)
    return best[1] if best else None


def _platform(tag: str, want: str) -> bool:
    if want == "linux_x86_64":
        return "linux" in tag and tag.endswith("x86_64")
    return tag == want if want in ("any", "win_amd64") else tag.startswith(want)


# --- one release -----------------------------------------------------------------------------------


def read_release(name: str, index: Dict[str, Any], version: str,
                 sources: List[Tuple[str, int, Dict[str, Any]]], sdist: bool) -> Dict[str, Any]:
    """The sites of every declaration of `sources` (issue, position, table) in one release's file."""
    f = pick(index, version, sdist)
    if f is None:
        return {"file": None, "sites": []}
    key = hashlib.sha256(json.dumps([s for _, _, s in sources], sort_keys=True).encode()).hexdigest()[:12]
    sha = f["hashes"]["sha256"]
    cache = remote.cache_root() / "facts" / f"wordings-{sha}-{key}-v{EXTRACTOR_VERSION}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    archive: Any = remote.Sdist(f) if sdist else remote.Wheel(f)
    globs = sorted({g for _, _, s in sources for g in s["files"]})
    names = [n for n in archive.names() if any(fnmatch.fnmatchcase(n, g) for g in globs)]
    archive.prefetch(names)
    found: List[Dict[str, Any]] = []
    for member in names:
        text = archive.text(member)
        if text is None:
            continue
        lower = text.lower()
        wanted = [(issue, position, re.compile(src["anchor"], re.IGNORECASE))
                  for issue, position, src in sources
                  if any(fnmatch.fnmatchcase(member, g) for g in src["files"])
                  and _may_hold(lower, src["anchor"])]
        if not wanted:
            continue
        for site in raise_sites.sites(member, text):  # parsed once, whatever the number of anchors
            for issue, position, anchor in wanted:
                if anchor.search(site.template):
                    found.append({"issue": issue, "source": position, "template": site.template,
                                  "kind": site.kind, "path": member, "line": site.line})
    out = {"file": {"filename": f["filename"], "sha256": f["hashes"]["sha256"]}, "sites": found}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out, sort_keys=True))
    return out


def _may_hold(lower: str, anchor: str) -> bool:
    """Whether a source (lower-cased) can hold a message the anchor finds: one word of every branch's
    required literal is in it (a word is never split across concatenated literals, a phrase may be).
    Parsing only such files keeps a release's read to seconds."""
    literals = required_literals(anchor, re.IGNORECASE)
    if not literals:
        return True
    words = [max(re.findall(r"[a-z0-9_]+", lit) or [""], key=len) for lit in literals]
    return any(w == "" or w in lower for w in words)


# --- the table -------------------------------------------------------------------------------------


def build(only: Optional[Iterable[str]] = None, offline: bool = False,
          previous: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Read every declared source from every release its package's policy names; the table.

    With `only`, the other issues' entries are kept from `previous` as they were."""
    decl = declared(only)
    by_package: Dict[Tuple[str, bool], List[Tuple[str, int, Dict[str, Any]]]] = {}
    for issue, sources in decl.items():
        for position, src in enumerate(sources):
            by_package.setdefault((src["package"], bool(src.get("sdist"))), []).append((issue, position, src))
    packages: Dict[str, Any] = dict((previous or {}).get("packages", {})) if only else {}
    seen: Dict[Tuple[str, int, str], List[Tuple[str, Dict[str, Any]]]] = {}
    for (name, sdist), sources in sorted(by_package.items()):
        index = remote.index(name, refresh=not offline)
        listed = releases(name, index)
        entry = packages.setdefault(name, {"read": {}, "unread": {}})
        for version in listed:
            log(f"{name} {version}{' (sdist)' if sdist else ''}")
            try:
                got = read_release(name, index, version, sources, sdist)
            except (RuntimeError, OSError, KeyError, ValueError) as exc:
                entry["unread"][version] = f"{type(exc).__name__}: {exc}"[:200]
                continue
            if got["file"] is None:
                entry["unread"].setdefault(version, "no wheel" if not sdist else "no sdist")
                continue
            entry["read"][version if not sdist else f"{version} (sdist)"] = got["file"]["filename"]
            for site in got["sites"]:
                seen.setdefault((site["issue"], site["source"], site["template"]), []).append((version, site))
        entry["releases"] = listed
    issues: Dict[str, Any] = {}
    if only and previous:
        issues.update({k: v for k, v in previous.get("issues", {}).items() if k not in decl})
    for issue, sources in decl.items():
        wordings = []
        for position, src in enumerate(sources):
            listed = releases(src["package"], remote.index(src["package"], refresh=False))
            for (i, p, template), hits in seen.items():
                if i == issue and p == position:
                    wordings.append(_wording(src["package"], template, hits, listed))
        wordings.sort(key=lambda w: (w["package"], Version(w["first"]), w["template"]))
        issues[issue] = {"sources": fingerprint(sources), "wordings": wordings}
        fills = {k: v for src in sources for k, v in src.get("fill", {}).items()}
        if fills:  # the issue's own examples for blanks, which the test renders the templates with
            issues[issue]["fill"] = dict(sorted(fills.items()))
    return {
        "schema": 1,
        "as_of": time.strftime("%Y-%m-%d", time.gmtime()),
        "source": "https://pypi.org/simple/ (PEP 691 JSON): each release's own sources, read by "
                  "tools/release_audit.py wordings from the files each issue's [[wording_sources]] names",
        "packages": dict(sorted(packages.items())),
        "issues": dict(sorted(issues.items())),
    }


def _wording(package: str, template: str, hits: List[Tuple[str, Dict[str, Any]]],
             listed: List[str]) -> Dict[str, Any]:
    """One template: the releases it is in (as ranges of consecutive read releases, and a PEP 440
    specifier), and where it is raised in the first and the last of them."""
    versions = sorted({v for v, _ in hits}, key=Version)
    order = {v: n for n, v in enumerate(listed)}
    ranges: List[List[str]] = []
    for v in versions:
        if ranges and order.get(v, -2) == order.get(ranges[-1][1], -9) + 1:
            ranges[-1][1] = v
        else:
            ranges.append([v, v])
    clauses = []
    for first, last in ranges:
        after = order.get(last, -1) + 1
        upper = f",<{listed[after]}" if after < len(listed) else ""
        clauses.append(f">={first}{upper}")
    by_version = {v: s for v, s in hits}
    first_site, last_site = by_version[versions[0]], by_version[versions[-1]]
    return {
        "package": package,
        "template": template,
        "kind": last_site["kind"],
        "first": versions[0],
        "last": versions[-1],
        "releases": " or ".join(clauses),
        "count": len(versions),
        "at": {versions[0]: f"{first_site['path']}:{first_site['line']}",
               versions[-1]: f"{last_site['path']}:{last_site['line']}"},
    }


def dumps(table: Dict[str, Any]) -> str:
    """One wording per line, so that a regenerated table reads as a short diff."""
    lines = ["{"]
    for key in ("schema", "as_of", "source"):
        lines.append(f"{json.dumps(key)}: {json.dumps(table[key])},")
    lines.append('"packages": {')
    pkgs = list(table["packages"].items())
    for n, (name, entry) in enumerate(pkgs):
        lines.append(f"  {json.dumps(name)}: {json.dumps(entry, sort_keys=True, separators=(',', ':'))}"
                     + ("," if n < len(pkgs) - 1 else ""))
    lines.append("},")
    lines.append('"issues": {')
    items = list(table["issues"].items())
    for n, (issue, entry) in enumerate(items):
        fills = f", \"fill\": {json.dumps(entry['fill'])}" if entry.get("fill") else ""
        head = f"{{\"sources\": {json.dumps(entry['sources'])}{fills}, \"wordings\": ["
        lines.append(f"  {json.dumps(issue)}: {head}")
        ws = entry["wordings"]
        for m, w in enumerate(ws):
            lines.append("    " + json.dumps(w, separators=(",", ":")) + ("," if m < len(ws) - 1 else ""))
        lines.append("  ]}" + ("," if n < len(items) - 1 else ""))
    lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(table: Dict[str, Any], path: Path = TABLE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(dumps(table), encoding="utf-8")
    tmp.replace(path)


def load(path: Path = TABLE) -> Dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def stale(table: Dict[str, Any]) -> List[str]:
    """What the table no longer says of the declarations: an issue whose sources changed since it was
    read, one declared and not read, one read and no longer declared, a source that found nothing."""
    decl = declared()
    problems = []
    for issue, sources in decl.items():
        entry = table["issues"].get(issue)
        if entry is None:
            problems.append(f"{issue}: declares wording sources the table has not read")
        elif entry["sources"] != fingerprint(sources):
            problems.append(f"{issue}: its wording sources changed since the table was read")
        else:
            for src in sources:
                if not any(w["package"] == src["package"] and re.search(src["anchor"], w["template"], re.I)
                           for w in entry["wordings"]):
                    problems.append(f"{issue}: the source {src['package']} {src['anchor']!r} found no "
                                    "wording")
    for issue in table["issues"]:
        if issue not in decl:
            problems.append(f"{issue}: in the table, but its data file declares no wording source")
    return problems
