"""Many `check` reports in one fleet view: columns per host and device, collapsed where identical.

A fleet of 64 GPUs that all say `ok` is one column, not 64; the GPU that differs is the news. So
the view is built in three steps: every report's results become columns named `host/device`;
columns whose whole status vector is identical (and of the same device kind) form a group; the
issues whose statuses differ between columns, and the probe fields that differ between reports,
are listed apart. Ranks that never sent a report are columns too, with every issue
`inconclusive`, because "could not check" is never `ok`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inductor_doctor.core import hostlist
from inductor_doctor.core.declare import merge_fields
from inductor_doctor.core.document import Document, Policy, schema_for
from inductor_doctor.core.facts import Facts
from inductor_doctor.core.model import ExitCode, Finding, Status, UsageError, exit_code_for, summarize
from inductor_doctor.fleet import binding, cache_keys
from inductor_doctor.kb import KB_VERSION

CHECK_SCHEMA = schema_for("check")
MERGE_SCHEMA = schema_for("merge")
STATUS_VALUES = {s.value for s in Status}
WORST_FIRST = ["affected", "likely", "inconclusive", "ok", "not-applicable"]

#: Probe fields compared across reports: (label, path in the report). The facts' own come from their
#: declarations (`merge=` in `core/facts.py`); the rest are the report's: which doctor made it, the
#: const_data_ptr ABI verdict the report states beside the facts, and the host.
FIELDS: Tuple[Tuple[str, str], ...] = (
    ("doctor", "tool_version"),
    ("knowledge base", "kb_version"),
    *merge_fields(Facts),
    ("const_data_ptr ABI", "environment.abi.status"),
    ("os", "environment.host.os"),
    ("kernel", "environment.host.kernel"),
    ("machine", "environment.host.machine"),
)
#: Environment variables that differ between ranks by design, never worth reporting.
RANK_ENV = re.compile(r"^(TORCHELASTIC_|MASTER_|CUDA_VISIBLE_DEVICES$|LOCAL_|GROUP_|ROLE_|RANK$)")


@dataclass
class Source:
    """One `check` report: where it came from and what it says."""

    report: Dict[str, Any]
    file: Optional[str] = None
    order: int = 0
    #: Its columns' host (`host`, or `host@rank3` where two reports of one host would clash).
    label: str = ""
    #: The report itself, in differences and notes: `host@rank3` wherever a host has several.
    name: str = ""

    @property
    def host(self) -> Dict[str, Any]:
        env = self.report.get("environment") or {}
        host = env.get("host") if isinstance(env, dict) else None
        return host if isinstance(host, dict) else {}

    @property
    def hostname(self) -> str:
        name = self.host.get("hostname")
        if isinstance(name, str) and name:
            return name
        if self.file:
            return _stem(self.file)
        return f"report{self.order + 1}"

    @property
    def rank(self) -> Optional[int]:
        value = self.host.get("rank")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def results(self) -> List[Dict[str, Any]]:
        return list(self.report.get("results") or [])


@dataclass
class Missing:
    """A rank that was expected and sent nothing: named as well as we can."""

    rank: int
    name: str
    reason: str
    hostname: Optional[str] = None


@dataclass
class Merge:
    sources: List[Source]
    missing: List[Missing] = field(default_factory=list)


def _stem(path: str) -> str:
    base = re.split(r"[\\/]", path)[-1]
    return base[:-5] if base.endswith(".json") else base


def validate_check_report(data: Any, where: str) -> Dict[str, Any]:
    """The minimal shape `merge` relies on; anything else is a one-line usage error naming `where`."""

    def bad(why: str) -> UsageError:
        return UsageError(f"{where}: not a `check --format json` report ({why})")

    if not isinstance(data, dict):
        raise bad(f"the document is a JSON {type(data).__name__}, not an object")
    schema = data.get("schema")
    if schema == MERGE_SCHEMA:
        raise UsageError(f"{where}: is already a merged report; merge the `check` reports it came from")
    if schema != CHECK_SCHEMA:
        raise bad(f"schema is {schema!r}, expected {CHECK_SCHEMA!r}")
    results = data.get("results")
    if not isinstance(results, list):
        raise bad("no `results` list")
    for n, r in enumerate(results, 1):
        if not isinstance(r, dict):
            raise bad(f"result #{n} is not an object")
        for key in ("id", "device", "status"):
            if not isinstance(r.get(key), str) or not r.get(key):
                raise bad(f"result #{n} has no `{key}` string")
        if r["status"] not in STATUS_VALUES:
            raise bad(f"result #{n} has an unknown status {r['status']!r}")
        for key in ("title", "reason"):
            if key in r and not isinstance(r[key], str):
                raise bad(f"result #{n}: `{key}` is not a string")
        if r.get("severity", "error") not in ("error", "warning"):
            raise bad(f"result #{n} has an unknown severity {r.get('severity')!r}")
        try:
            Finding.from_dict(_complete(r))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise bad(f"result #{n}: {type(exc).__name__}: {exc}") from None
    env = data.get("environment", {})
    if env is not None and not isinstance(env, dict):
        raise bad("`environment` is not an object")
    return data


def _complete(r: Mapping[str, Any]) -> Dict[str, Any]:
    """A result with the optional fields a finding needs filled in."""
    out = dict(r)
    out.setdefault("title", out["id"])
    out.setdefault("reason", "")
    out.setdefault("basis", "static")
    if out["basis"] not in ("canary", "static", "version"):
        out["basis"] = "static"
    out.setdefault("severity", "error")
    ws = out.get("workarounds")
    if not isinstance(ws, list) or not all(
        isinstance(w, dict) and isinstance(w.get("text"), str) for w in ws
    ):
        out["workarounds"] = []
    if not isinstance(out.get("upstream"), list):
        out["upstream"] = []
    else:
        out["upstream"] = [str(u) for u in out["upstream"]]
    try:
        out["duration_s"] = max(0.0, float(out.get("duration_s") or 0.0))
    except (TypeError, ValueError):
        out["duration_s"] = 0.0
    if not isinstance(out.get("evidence"), list):
        out["evidence"] = []
    else:
        out["evidence"] = [str(e) for e in out["evidence"]]
    if out.get("suppressed") is not None and not isinstance(out["suppressed"], str):
        out["suppressed"] = str(out["suppressed"])
    return out


# ---------------------------------------------------------------------------------------------
# Columns


def device_key(device: str) -> Tuple[int, int, str]:
    kind, _, index = device.partition(":")
    rank = {"toolchain": 0, "cpu": 1, "cuda": 2, "xla": 3, "all": 9}.get(kind, 5)
    return (rank, int(index) if index.isdigit() else -1, device)


def kind_of(device: str) -> str:
    return device.split(":")[0]


def assign_labels(sources: Sequence[Source]) -> None:
    """Each report's `name` (`host`, or `host@rank3` (`@file`) where a host has several reports)
    and `label`, its columns' host: the name where two reports of one host would otherwise share a
    column name (two containers, two simulated nodes) or where a rank that sees none of the node's
    GPUs has a bare `cuda` column beside its ranks' `cuda:N`; else the bare host."""
    by_host: Dict[str, List[Source]] = {}
    for s in sources:
        by_host.setdefault(s.hostname, []).append(s)
    for host, group in by_host.items():
        if len(group) == 1:
            group[0].name = group[0].label = host
            continue
        ranks = [s.rank for s in group]
        use_rank = None not in ranks and len(set(ranks)) == len(ranks)
        stems = [_stem(s.file) for s in group if s.file]
        use_file = len(stems) == len(group) and len(set(stems)) == len(stems)
        for n, s in enumerate(group):
            if use_rank:
                s.name = f"{host}@rank{s.rank}"
            elif use_file and s.file:
                s.name = f"{host}@{_stem(s.file)}"
            else:
                s.name = f"{host}@{n + 1}"
        seen: Counter = Counter()
        for s in group:
            seen.update({r["device"] for r in s.results()})
        gpuless = "cuda" in seen and any(d.startswith("cuda:") for d in seen)
        qualify = gpuless or any(n > 1 for n in seen.values())
        for s in group:
            s.label = s.name if qualify else host


def _gpu_names(source: Source) -> Dict[str, str]:
    env = source.report.get("environment") or {}
    cuda = env.get("cuda") if isinstance(env, dict) else None
    gpus = cuda.get("gpus") if isinstance(cuda, dict) else None
    out: Dict[str, str] = {}
    for g in gpus or []:
        if isinstance(g, dict) and isinstance(g.get("index"), int) and g.get("name"):
            out[f"cuda:{g['index']}"] = str(g["name"])
    return out


def compact_columns(columns: Sequence[Mapping[str, Any]]) -> str:
    """Column names compacted per source, then sources with the same devices as a hostlist:
    `node[0000-0089,0091-1999]/cuda:0-7, node0090/cuda:1-7, node-b/cpu`."""
    return ", ".join(hostlist.column_parts(columns))


def _group_label(columns: Sequence[Mapping[str, Any]]) -> str:
    if columns[0]["device"] == "all":  # a missing rank: "rank 3 (node-b, local rank 1)"
        return str(columns[0]["name"]).split(" (")[0] + " (missing)"
    if len(columns) == 1:
        return str(columns[0]["name"])
    hosts: List[str] = []
    for c in columns:
        if c["source"] not in hosts:
            hosts.append(c["source"])
    kind = kind_of(str(columns[0]["device"]))
    names = {c.get("gpu") for c in columns}
    what = names.pop() if kind == "cuda" and len(names) == 1 and None not in names else kind
    where = ", ".join(hosts) if len(hosts) <= 3 else f"{len(hosts)} hosts"
    return f"{len(columns)} × {what} on {where}"


# ---------------------------------------------------------------------------------------------
# Probe fields


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _show(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_show(v) for v in value) or "none"
    return str(value)


def _gpu_summary(source: Source) -> Optional[str]:
    names = list(_gpu_names(source).values())
    if not names:
        gpus = _get(source.report, "environment.cuda.gpus")
        driver = _get(source.report, "environment.cuda.driver_gpus")
        return "none" if isinstance(gpus, list) and driver else None
    counts = Counter(names)
    return ", ".join(f"{n} × {name}" for name, n in sorted(counts.items()))


def field_values(source: Source) -> Dict[str, Tuple[str, str]]:
    """Every compared probe field of one report: key -> (label, shown value)."""
    out: Dict[str, Tuple[str, str]] = {}
    for label, path in FIELDS:
        out[path] = (label, _show(_get(source.report, path)))
    env = source.report.get("environment") or {}
    out["gpus"] = ("GPUs", _show(_gpu_summary(source)))
    out["binding"] = ("GPU binding", binding.describe(source.report))
    pkgs = env.get("packages") if isinstance(env, dict) else None
    if isinstance(pkgs, dict):
        for name, version in pkgs.items():
            out[f"packages.{name}"] = (f"package {name}", _show(version))
    envvars = env.get("env") if isinstance(env, dict) else None
    if isinstance(envvars, dict):
        for name, value in envvars.items():
            if not RANK_ENV.match(str(name)):
                out[f"env.{name}"] = (f"${name}", _show(value))
    return out


def compare_fields(sources: Sequence[Source]) -> Tuple[Dict[str, str], List[Dict[str, Any]]]:
    """(fields equal in every report, fields that differ with the reports holding each value)."""
    per_source = [(s.name, field_values(s)) for s in sources]
    keys: List[str] = []
    labels: Dict[str, str] = {}
    for _, values in per_source:
        for key, (label, _v) in values.items():
            if key not in labels:
                keys.append(key)
                labels[key] = label
    common: Dict[str, str] = {}
    differences: List[Dict[str, Any]] = []
    for key in keys:
        holders: Dict[str, Dict[str, None]] = {}  # value -> its reports, in order, each once
        for label, values in per_source:
            value = values.get(key, (labels[key], "absent"))[1]
            holders.setdefault(value, {})[label] = None
        if len(holders) == 1:
            if not key.startswith(("packages.", "env.")):
                common[labels[key]] = next(iter(holders))
            continue
        differences.append(
            {
                "field": key,
                "label": labels[key],
                "values": [{"value": v, "sources": list(m)} for v, m in holders.items()],
            }
        )
    return common, differences


# ---------------------------------------------------------------------------------------------
# The merge itself


def _missing_result(m: Missing, issue: Mapping[str, Any]) -> Dict[str, Any]:
    return {
        "id": issue["id"],
        "title": issue["title"],
        "device": "all",
        "status": Status.INCONCLUSIVE.value,
        "basis": "static",
        "reason": f"no report from {m.name}: {m.reason}",
        "severity": issue["severity"],
        "workarounds": [],
        "upstream": list(issue.get("upstream") or []),
        "duration_s": 0.0,
        "evidence": [],
        "suppressed": None,
        "source": m.name,
        "column": m.name,
    }


Cells = Dict[Tuple[str, str], Dict[str, Any]]


def _collect(sources: Sequence[Source], missing: Sequence[Missing]) -> Tuple[
        List[Dict[str, Any]], Dict[str, Dict[str, Any]], Dict[str, Dict[str, Any]]]:
    """Every report's results as (results, columns by name, issues by id); a missing rank is a
    column too, with every issue inconclusive."""
    results: List[Dict[str, Any]] = []
    columns: Dict[str, Dict[str, Any]] = {}
    issues: Dict[str, Dict[str, Any]] = {}
    for s in sources:
        gpus = _gpu_names(s)
        for raw in s.results():
            r = _complete(raw)
            name = f"{s.label}/{r['device']}"
            columns.setdefault(
                name,
                {"name": name, "source": s.label, "device": r["device"], "gpu": gpus.get(r["device"])},
            )
            issues.setdefault(
                r["id"],
                {"id": r["id"], "title": r["title"], "severity": r["severity"], "upstream": r["upstream"]},
            )
            results.append({**r, "source": s.label, "column": name})
    for m in missing:
        columns[m.name] = {"name": m.name, "source": m.name, "device": "all", "gpu": None}
        results.extend(_missing_result(m, issue) for issue in issues.values())
    return results, columns, issues


def _group(ordered: Sequence[Dict[str, Any]], issues: Mapping[str, Any],
           cells: Cells) -> List[Dict[str, Any]]:
    """Columns of one device kind whose whole status vector is identical become one group."""
    groups: List[Dict[str, Any]] = []
    index: Dict[Tuple[Any, ...], int] = {}
    for c in ordered:
        vector = tuple(
            (cells[(c["name"], i)]["status"], bool(cells[(c["name"], i)].get("suppressed")))
            if (c["name"], i) in cells
            else None
            for i in issues
        )
        key = (kind_of(c["device"]), vector) if c["device"] != "all" else ("all", c["name"])
        if key not in index:
            index[key] = len(groups)
            groups.append({"columns": [], "kind": kind_of(c["device"]), "statuses": {}})
        groups[index[key]]["columns"].append(c)
    for g in groups:
        first = g["columns"][0]["name"]
        g["label"] = _group_label(g["columns"])
        g["members"] = compact_columns(g["columns"])
        g["statuses"] = {i: cells[(first, i)]["status"] for i in issues if (first, i) in cells}
        g["columns"] = [c["name"] for c in g["columns"]]
    return groups


def _issue_rows(ordered: Sequence[Dict[str, Any]], issues: Mapping[str, Dict[str, Any]],
                cells: Cells) -> List[Dict[str, Any]]:
    """Per issue: its worst status anywhere, whether all columns agree, and which say what."""
    rows: List[Dict[str, Any]] = []
    for i, info in issues.items():
        by_status: Dict[str, List[str]] = {}
        for c in ordered:
            r = cells.get((c["name"], i))
            if r is not None:
                by_status.setdefault(r["status"], []).append(c["name"])
        worst = next(s for s in WORST_FIRST if s in by_status)
        rows.append(
            {
                **{k: info[k] for k in ("id", "title", "severity")},
                "worst": worst,
                "uniform": len(by_status) == 1,
                "statuses": {s: by_status[s] for s in WORST_FIRST if s in by_status},
            }
        )
    return rows


def build(merge: Merge, meta: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The body of the `inductor-doctor/merge/v1` document (`MergeDocument` adds the envelope)."""
    sources = sorted(
        merge.sources,
        key=lambda s: (s.hostname, s.rank if s.rank is not None else -1, s.order),
    )
    assign_labels(sources)
    results, columns, issues = _collect(sources, merge.missing)
    cells: Cells = {(r["column"], r["id"]): r for r in results}
    ordered = list(columns.values())
    # Device kind first (toolchain, cpu, GPUs, xla), then host, then index; missing ranks last.
    ordered.sort(
        key=lambda c: (c["device"] == "all", device_key(c["device"])[0], c["source"], device_key(c["device"]))
    )
    groups = _group(ordered, issues, cells)
    issue_rows = _issue_rows(ordered, issues, cells)
    common, differences = compare_fields(sources)
    findings = [Finding.from_dict(r) for r in results]
    hosts = sorted({s.hostname for s in sources} | {m.hostname for m in merge.missing if m.hostname})
    return {
        "environment": {"common": common, "differences": differences},
        "sources": [
            {
                "label": s.label,
                "name": s.name,
                "hostname": s.hostname,
                "file": s.file,
                "rank": s.rank,
                "local_rank": s.host.get("local_rank"),
                "tool_version": s.report.get("tool_version"),
                "kb_version": s.report.get("kb_version"),
                "devices": sorted({r["device"] for r in s.results()}, key=device_key),
                "interrupted": bool((s.report.get("meta") or {}).get("interrupted")),
                "cached": bool((s.report.get("meta") or {}).get("cached")),
            }
            for s in sources
        ],
        "missing": [
            {"rank": m.rank, "name": m.name, "hostname": m.hostname, "reason": m.reason}
            for m in merge.missing
        ],
        "columns": [{k: c[k] for k in ("name", "source", "device", "gpu")} for c in ordered],
        "groups": groups,
        "issues": issue_rows,
        "results": results,
        "summary": summarize(findings),
        # Will one host hit what another compiled: the compile-cache key inputs compared.
        "cache_keys": cache_keys.compare([(s.label, s.report) for s in sources]),
        "meta": {"reports": len(sources), "hosts": len(hosts), "columns": len(ordered), **dict(meta or {})},
    }


def findings_of(document: Mapping[str, Any]) -> List[Finding]:
    return [Finding.from_dict(r) for r in document.get("results", [])]


@dataclass
class MergeDocument(Document):
    """The fleet view (`merge`, and rank 0 of `check --distributed`) as the CLI renders it."""

    data: Dict[str, Any]
    command: str = "merge"
    kb_version: str = KB_VERSION

    def body(self) -> Dict[str, Any]:
        return self.data

    def outcome(self, policy: Policy) -> ExitCode:
        """A finding of any host at or above `--fail-on` fails the run, as in `check`."""
        if policy is None:
            return ExitCode.OK
        fail_on, warnings = policy
        return exit_code_for(self.findings, fail_on, warnings)

    @property
    def findings(self) -> List[Finding]:
        return findings_of(self.data)

    @property
    def meta(self) -> Dict[str, Any]:
        return self.data.get("meta", {})


def build_document(
    reports: Sequence[Dict[str, Any]],
    files: Sequence[Optional[str]] = (),
    missing: Sequence[Missing] = (),
    meta: Optional[Dict[str, Any]] = None,
) -> MergeDocument:
    files = list(files) + [None] * (len(reports) - len(files))
    sources = [Source(report=r, file=f, order=n) for n, (r, f) in enumerate(zip(reports, files))]
    return MergeDocument(build(Merge(sources, list(missing)), meta))
