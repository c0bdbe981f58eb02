"""Reading what a user plans to install: specs, requirements files and pyproject.toml.

`plan` must read the same files pip reads, and fail the way a linter fails: one line saying
`<file>:<line>: <what is wrong> — <what to do>`, before anything is printed. It follows pip's own
rules where they matter for versions: joined `\\` continuation lines, `#` comments, `${VAR}`
expansion, nested `-r` and `-c` files relative to the including file, environment markers, and
per-requirement options (`--hash`). Index and install options (`-i`, `--extra-index-url`,
`--find-links`, ...) say nothing about versions and are skipped. Requirements whose version cannot
be known without installing (editable installs, VCS URLs, local directories) are recorded as such,
never guessed.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple
from urllib.parse import unquote, urlparse

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from inductor_doctor.core.model import UsageError

COMMAND_LINE = "command line"

#: pip's requirements-file options that say nothing about versions: skipped.
_SKIPPED_OPTIONS = {
    "-i": True, "--index-url": True, "--extra-index-url": True, "-f": True, "--find-links": True,
    "--trusted-host": True, "--use-feature": True, "--only-binary": True, "--no-binary": True,
    "--no-index": False, "--prefer-binary": False, "--require-hashes": False, "--pre": False,
}  # fmt: skip  # option -> takes a value
#: Options that may trail a requirement on its line.
_PER_REQUIREMENT_OPTIONS = ("--hash", "--config-settings", "--global-option", "--install-option")

_ENV_VAR = re.compile(r"\$\{([A-Z0-9_]+)\}")
_COMMENT = re.compile(r"(^|\s+)#.*$")
_PYTHON_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?t?$")  # 3.13t: a free-threaded build
#: `name OP version`, loose enough to explain what packaging rejects.
_PEP508_URL = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_LOOSE_SPEC = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(===|==|~=|!=|<=|>=|<|>|=)?\s*(\S*)"
)


@dataclass(frozen=True)
class PlannedRequirement:
    """One requirement as written, with where it came from.

    `specifier` is what it allows; `version_known` is False when pip would find out the version
    only by building or cloning (VCS URLs, local directories, editable installs).
    """

    name: str  # canonical (PEP 503)
    text: str  # as written, for messages
    where: str  # "requirements.txt:3" or "command line"
    specifier: SpecifierSet = field(default_factory=SpecifierSet)
    version_known: bool = True
    constraint: bool = False  # from a `-c` file: narrows, never adds


@dataclass
class ReadResult:
    requirements: List[PlannedRequirement] = field(default_factory=list)
    ignored: List[str] = field(default_factory=list)  # "where: what (why)"
    files: List[str] = field(default_factory=list)
    #: `-i`/`--index-url`/`--extra-index-url` values, in order: they decide which torch build pip
    #: installs (the CPU index, a CUDA one), not which version.
    index_urls: List[str] = field(default_factory=list)


def marker_environment(python_version: Optional[str]) -> Dict[str, str]:
    """The marker environment of the target: this host, with the planned Python version."""
    from packaging.markers import default_environment

    env = dict(default_environment())
    if python_version:
        parts = python_version.split(".")
        env["python_version"] = ".".join(parts[:2])
        env["python_full_version"] = python_version if len(parts) == 3 else f"{parts[0]}.{parts[1]}.0"
    return env


def check_python_version(text: Optional[str]) -> str:
    """`3.12`, `3.12.4` or `3.13t` (free-threaded); the running interpreter's when not given."""
    if text is None:
        return f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    text = text.strip()
    if not _PYTHON_VERSION.match(text):
        raise UsageError(f"--python-version {text!r}: expected MAJOR.MINOR, e.g. 3.12 (3.13t: free-threaded)")
    return text


def parse_spec(
    text: str, where: str, env: Dict[str, str], ignored: List[str]
) -> Optional[PlannedRequirement]:
    """One requirement (PEP 508, a wheel/sdist URL or path, or a VCS URL with `#egg=`).

    Returns None when its environment marker excludes the target, or when it names no package
    (a local directory); the reason then goes to `ignored`.
    """
    text = text.strip()
    url_req = _from_url(text, where, env, ignored)
    if url_req is not False:
        return url_req  # type: ignore[return-value]
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise UsageError(f"{where}: {_explain_invalid(text, exc)}") from None
    if req.marker is not None and not _marker_holds(req.marker, env, where):
        ignored.append(f"{where}: {text} (its marker excludes Python {env['python_full_version']})")
        return None
    name = canonicalize_name(req.name)
    if req.url:
        version = _version_from_url(req.url)
        if version is None:
            return PlannedRequirement(name, text, where, version_known=False)
        return PlannedRequirement(name, text, where, SpecifierSet(f"=={version}"))
    _check_versions(req.specifier, text, where)
    return PlannedRequirement(name, text, where, req.specifier)


def _from_url(text: str, where: str, env: Dict[str, str], ignored: List[str]):
    """A bare URL or path (what pip accepts besides PEP 508); False when `text` is not one."""
    if _PEP508_URL.match(text):
        return False
    # pip: a URL's marker follows " ;" (a URL may itself contain ';'); a path's follows ';'.
    link, _, marker = text.partition(" ;") if "://" in text else text.partition(";")
    link = link.strip()
    looks_like_url = "://" in link or link.startswith(("git+", "hg+", "svn+", "bzr+"))
    looks_like_path = link.startswith((".", "/", "~")) or link.endswith((".whl", ".tar.gz", ".zip"))
    if not (looks_like_url or looks_like_path):
        return False
    if marker.strip():
        try:
            m = Marker(marker.strip())
        except InvalidMarker as exc:
            raise UsageError(
                f"{where}: invalid environment marker ({exc}) — fix the marker after ';'"
            ) from None
        if not _marker_holds(m, env, where):
            ignored.append(f"{where}: {text} (its marker excludes Python {env['python_full_version']})")
            return None
    egg = _EGG.search(link)
    filename = unquote(Path(urlparse(link).path if "://" in link else link).name)
    parsed = _parse_dist_filename(filename)
    if parsed is not None:
        name, version = parsed
        return PlannedRequirement(name, text, where, SpecifierSet(f"=={version}"))
    if egg:
        return PlannedRequirement(canonicalize_name(egg.group(1)), text, where, version_known=False)
    ignored.append(f"{where}: {link} (names no package; its version is known only once built)")
    return None


def _parse_dist_filename(filename: str) -> Optional[Tuple[str, str]]:
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return str(name), str(version)
        if filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            return str(name), str(version)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


def _version_from_url(url: str) -> Optional[str]:
    filename = unquote(Path(urlparse(url).path).name)
    parsed = _parse_dist_filename(filename)
    return parsed[1] if parsed else None


def _marker_holds(marker: Marker, env: Dict[str, str], where: str) -> bool:
    try:
        return bool(marker.evaluate(env))
    except (UndefinedComparison, UndefinedEnvironmentName) as exc:
        raise UsageError(f"{where}: cannot evaluate marker '{marker}' ({exc}) — fix the marker") from None


def _check_versions(spec: SpecifierSet, text: str, where: str) -> None:
    for s in spec:
        if s.operator == "===":
            raise UsageError(
                f"{where}: {text!r}: arbitrary equality '===' cannot be compared with release versions "
                "— pin with '==' instead"
            )


def _explain_invalid(text: str, exc: Exception) -> str:
    m = _LOOSE_SPEC.match(text)
    if m:
        name, op, version = m.group(1), m.group(2), m.group(3).rstrip(",;")
        if op == "=":
            return f"invalid requirement {text!r}: a single '=' — write {name}=={version}"
        if op is None and version and version[0].isdigit():
            return f"invalid requirement {text!r}: no comparison operator — write {name}=={version}"
        if op and version:
            try:
                Version(version.replace("*", "0"))
            except InvalidVersion:
                return (
                    f"invalid requirement {text!r}: cannot parse version {version!r} — "
                    "use a PEP 440 version such as 2.5.1"
                )
        if op and not version:
            return f"invalid requirement {text!r}: '{op}' needs a version — e.g. {name}{op}2.5.1"
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"invalid requirement {text!r} ({detail}) — write it as NAME[==VERSION], e.g. torch==2.5.1"


# --- requirements files ------------------------------------------------------------------------


def read_requirements_file(
    path: Path,
    env: Dict[str, str],
    result: ReadResult,
    constraint: bool = False,
    seen: Optional[Set[Path]] = None,
    included_from: Optional[str] = None,
) -> None:
    """pip's requirements format, nested files included; a pyproject.toml is read as such."""
    seen = set() if seen is None else seen
    base, extras = _split_extras(path)
    if base.name == "pyproject.toml" or base.suffix == ".toml":
        read_pyproject(base, extras, env, result, included_from)
        return
    text = _read_text(path, included_from)
    resolved = path.resolve()
    if resolved in seen:  # a cycle of -r includes: pip would recurse forever; read it once
        return
    seen.add(resolved)
    result.files.append(str(path))
    for lineno, line in _logical_lines(text):
        where = f"{path}:{lineno}"
        if line.startswith("-"):
            _option_line(line, where, path, env, result, seen)
            continue
        spec, options = _split_options(line)
        for opt in options:
            if not opt.startswith(_PER_REQUIREMENT_OPTIONS):
                raise UsageError(
                    f"{where}: unknown option {opt.split('=')[0]!r} after a requirement — "
                    "remove it (pip accepts only --hash, --config-settings and --global-option there)"
                )
        req = parse_spec(spec, where, env, result.ignored)
        if req is not None:
            if constraint:
                req = PlannedRequirement(
                    req.name, req.text, req.where, req.specifier, req.version_known, True
                )
            result.requirements.append(req)


#: pip's own files are kilobytes; anything this big is a wrong path (or `-r /dev/zero`).
MAX_FILE_BYTES = 16 * 2**20


def _read_text(path: Path, included_from: Optional[str]) -> str:
    prefix = f"{included_from}: " if included_from else ""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise UsageError(f"{prefix}{path}: is a directory — pass a requirements file") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{prefix}{path}: cannot read ({reason}) — check the path") from None
    if b"\x00" in data[:8192]:
        raise UsageError(f"{prefix}{path}: is a binary file, not a requirements file — check the path")
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(
            f"{prefix}{path}: larger than {MAX_FILE_BYTES // 2**20} MiB, "
            "not a requirements file — check the path"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{prefix}{path}: not UTF-8 text (byte {exc.start}) — save it as UTF-8") from None


def _logical_lines(text: str) -> List[Tuple[int, str]]:
    """pip's preprocessing: join `\\` continuations, drop comments, expand `${VAR}`."""
    out: List[Tuple[int, str]] = []
    pending: List[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\") and not _COMMENT.search(raw):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        line = "".join(pending)
        pending = []
        line = _COMMENT.sub("", line).strip()
        if line:
            out.append((start, _ENV_VAR.sub(lambda m: os.environ.get(m.group(1), m.group(0)), line)))
    if pending:
        line = _COMMENT.sub("", "".join(pending)).strip()
        if line:
            out.append((start, line))
    return out


def _split_options(line: str) -> Tuple[str, List[str]]:
    """pip's `break_args_options`: the requirement, then the options that trail it."""
    tokens = line.split(" ")
    for i, tok in enumerate(tokens):
        if tok.startswith("-") and i > 0:
            return " ".join(tokens[:i]), [t for t in " ".join(tokens[i:]).split() if t.startswith("-")]
    return line, []


def _option_line(
    line: str, where: str, path: Path, env: Dict[str, str], result: ReadResult, seen: Set[Path]
) -> None:
    try:
        tokens = shlex.split(line, comments=False)
    except ValueError as exc:
        raise UsageError(f"{where}: cannot parse option line ({exc}) — check the quoting") from None
    opt, value = _option_and_value(tokens)
    if opt in ("-r", "--requirement", "-c", "--constraint"):
        if not value:
            raise UsageError(f"{where}: {opt} needs a file name — e.g. {opt} base.txt")
        if "://" in value:
            result.ignored.append(f"{where}: {opt} {value} (remote files are not fetched)")
            return
        nested = Path(value).expanduser()
        if not nested.is_absolute():
            nested = path.parent / nested
        read_requirements_file(
            nested, env, result, constraint=opt in ("-c", "--constraint"), seen=seen, included_from=where
        )
    elif opt in ("-e", "--editable"):
        if not value:
            raise UsageError(f"{where}: {opt} needs a path or URL")
        egg = _EGG.search(value)
        if egg:
            name = canonicalize_name(egg.group(1))
            result.requirements.append(PlannedRequirement(name, line, where, version_known=False))
        else:
            result.ignored.append(f"{where}: {line} (editable install: its version is known only once built)")
    elif opt in _SKIPPED_OPTIONS:
        if _SKIPPED_OPTIONS[opt] and not value:
            raise UsageError(f"{where}: {opt} needs a value")
        if opt in ("-i", "--index-url", "--extra-index-url") and value:
            result.index_urls.append(value)
    else:
        raise UsageError(
            f"{where}: unknown option {opt!r} — remove it, or check the spelling against `pip install --help`"
        )


def _option_and_value(tokens: Sequence[str]) -> Tuple[str, Optional[str]]:
    first = tokens[0]
    if first.startswith("--"):
        opt, eq, value = first.partition("=")
        if eq:
            return opt, value
        return opt, tokens[1] if len(tokens) > 1 else None
    opt = first[:2]
    if len(first) > 2:
        return opt, first[2:]
    return opt, tokens[1] if len(tokens) > 1 else None


def _split_extras(path: Path) -> Tuple[Path, List[str]]:
    """`pyproject.toml[gpu,test]`: the file, and the extras (or dependency groups) to include."""
    m = re.match(r"^(.*?)\[([A-Za-z0-9_.,\s-]*)\]$", str(path))
    if not m:
        return path, []
    return Path(m.group(1)), [e.strip() for e in m.group(2).split(",") if e.strip()]


# --- pyproject.toml ----------------------------------------------------------------------------


def read_pyproject(
    path: Path,
    extras: List[str],
    env: Dict[str, str],
    result: ReadResult,
    included_from: Optional[str] = None,
) -> None:
    """`[project].dependencies`, plus the optional dependencies or dependency groups named in
    `pyproject.toml[extra,...]`: what `pip install .[extra]` would install, nothing more."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib

    text = _read_text(path, included_from)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc}) — fix the file") from None
    result.files.append(str(path))
    project = data.get("project")
    if not isinstance(project, dict):
        raise UsageError(f"{path}: no [project] table — plan reads [project].dependencies (PEP 621)")
    own_name = canonicalize_name(str(project.get("name", "")))
    optional = {canonicalize_name(k): (k, v) for k, v in (project.get("optional-dependencies") or {}).items()}
    groups = {canonicalize_name(k): (k, v) for k, v in (data.get("dependency-groups") or {}).items()}
    lines = _pep621_lines(path, project.get("dependencies") or [], "dependencies")
    pending, done, i = list(extras), set(), 0
    while True:
        while i < len(lines):
            where, spec = lines[i]
            i += 1
            req = parse_spec(spec, where, env, result.ignored)
            if req is None:
                continue
            if own_name and req.name == own_name:  # `myproj[gpu]` inside an extra: that extra too
                pending += sorted(Requirement(spec).extras)
                continue
            result.requirements.append(req)
        if not pending:
            return
        extra = pending.pop(0)
        key = canonicalize_name(extra)
        if key in done:
            continue
        done.add(key)
        if key in optional:
            name, deps = optional[key]
            lines += _pep621_lines(path, deps, f"optional-dependencies.{name}")
        elif key in groups:
            name, deps = groups[key]
            deps = deps if isinstance(deps, list) else [deps]
            lines += _pep621_lines(path, [d for d in deps if isinstance(d, str)], f"dependency-groups.{name}")
            pending += [d["include-group"] for d in deps if isinstance(d, dict) and "include-group" in d]
        else:
            known = ", ".join(sorted({k for k, _ in optional.values()} | {k for k, _ in groups.values()}))
            raise UsageError(
                f"{path}: no optional dependencies or dependency group {extra!r} — known: {known or 'none'}"
            )


def _pep621_lines(path: Path, deps: object, key: str) -> List[Tuple[str, str]]:
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise UsageError(f"{path}: [project].{key} must be a list of strings — fix the file")
    return [(f"{path}:{key}[{i}]", d) for i, d in enumerate(deps)]


def read_all(specs: Sequence[str], files: Sequence[Path], env: Dict[str, str]) -> ReadResult:
    """Everything the user planned, command-line specs first."""
    result = ReadResult()
    for i, spec in enumerate(specs, start=1):
        if spec.strip().startswith("-"):
            raise UsageError(f"{COMMAND_LINE}: {spec!r} is an option, not a requirement — see `plan --help`")
        req = parse_spec(spec, f"{COMMAND_LINE} (argument {i})", env, result.ignored)
        if req is not None:
            result.requirements.append(req)
    seen: Set[Path] = set()
    for path in files:
        read_requirements_file(Path(path), env, result, seen=seen)
    return result


def combine(reqs: Sequence[PlannedRequirement]) -> Dict[str, List[PlannedRequirement]]:
    """Requirements by package; constraints only for packages something requires."""
    out: Dict[str, List[PlannedRequirement]] = {}
    for r in reqs:
        if not r.constraint:
            out.setdefault(r.name, []).append(r)
    for r in reqs:
        if r.constraint and r.name in out:
            out[r.name].append(r)
    return out


def intersect(reqs: Sequence[PlannedRequirement]) -> SpecifierSet:
    """The specifier pip would have to satisfy: all of them at once."""
    spec = SpecifierSet()
    for r in reqs:
        try:
            spec &= r.specifier
        except InvalidSpecifier as exc:  # pragma: no cover - parse_spec validated each
            raise UsageError(f"{r.where}: {exc}") from None
    return spec
