"""`check` and `plan` as a person reads them at a terminal: what matters first, then the matrix.

Laid out for the reader's width (80 columns included): issue ids are never cut (they are what users
pass to `explain`); GPUs with identical verdicts share one column (`cuda:0-7`); issues that cannot
arise here are folded into one line (`--all` lists them); a verdict that no canary confirmed is
marked `*`, one a canary earned only by compiling for a GPU that is not here (`check --gpu`) `†`;
and when the matrix still does not fit, each finding gets a line of its own.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from inductor_doctor.render.plain import wrap
from inductor_doctor.render.style import (
    COMMAND,
    DIM,
    ORDER,
    STATUS,
    STRONG,
    WARN,
    console_to_string,
    hanging,
    paragraph,
    summary_line,
    terminal_width,
)

WORRYING = ("affected", "likely", "inconclusive")
CELL = {"not-applicable": "n/a"}
INDENT = 4
_CUDA = re.compile(r"^cuda:(\d+)$")
_TARGET = re.compile(r"^(sm|gfx)_?([0-9a-f]+)$")
_KIND_RANK = {"toolchain": 0, "cpu": 1, "cuda": 2, "sm": 3, "gfx": 4, "xla": 9}
#: A verdict its canary earned by compiling for the GPU, not by running there.
COMPILED = "†"


def render(data: Mapping[str, Any], show_all: bool = False, width: int = 0) -> str:
    results: List[Mapping[str, Any]] = list(data.get("results", []))
    meta: Mapping[str, Any] = data.get("meta", {}) or {}
    width = width or terminal_width()

    def draw(console: Any) -> None:
        from rich.text import Text

        console.print(Text(f"inductor-doctor {data['tool_version']} · knowledge base {data['kb_version']}",
                           style=STRONG))
        console.print(Text(env_line(data.get("environment", {})), style=DIM))
        console.print()
        for notice in meta.get("notices") or []:
            _wrapped(console, f"! {notice}", WARN, indent=2)
        if meta.get("notices"):
            console.print()
        if not results:
            console.print("no known issue selected")
        else:
            _matrix(console, results, show_all, width)
            _details(console, results)
        _footer(console, data, results)

    return console_to_string(draw, width=width)


def _planned_build(torch: Mapping[str, Any]) -> str:
    """` (CPU-only)` / ` (CUDA 12.8)` for the build `plan` decided; nothing for a probed torch."""
    build, version = torch.get("build"), str(torch.get("version") or "")
    if build == "cpu" and "+cpu" not in version:
        return " (CPU-only)"
    if build == "cuda" and torch.get("cuda") and "+cu" not in version:
        return f" (CUDA {torch['cuda']})"
    return ""


def env_line(env: Mapping[str, Any]) -> str:
    """`host · Python 3.11.7 · torch 2.13.0+cpu · g++ 12.2.0 · no GPU`."""
    parts: List[str] = []
    host = env.get("host") or {}
    if host.get("hostname"):
        parts.append(str(host["hostname"]))
    py = env.get("python") or {}
    if py.get("version"):
        parts.append(f"Python {py['version']}")
    torch = env.get("torch")
    parts.append(f"torch {torch.get('version')}{_planned_build(torch)}" if torch and torch.get("version")
                 else "torch not installed")
    for key, name in (("triton", "triton"), ("xla", "torch_xla")):
        part = env.get(key)
        if part and part.get("version"):
            parts.append(f"{name} {part['version']}")
    cxx = env.get("cxx") or {}
    if cxx.get("command"):
        parts.append(f"{cxx.get('command')} {cxx.get('version') or '?'}")
    cuda = env.get("cuda") or {}
    gpus = cuda.get("gpus") or []
    listed = cuda.get("driver_gpus") or []
    if gpus:
        names = sorted({str(g.get("name", "?")) for g in gpus})
        seen = f"{len(gpus)} of {len(listed)}" if len(listed) > len(gpus) else str(len(gpus))
        parts.append(f"{seen} GPU{'s' if len(gpus) > 1 else ''}: {', '.join(names)}")
    elif listed:
        shown = cuda.get("visible_devices")
        parts.append(f"no GPU visible to torch (the driver lists {len(listed)}"
                     + (f"; CUDA_VISIBLE_DEVICES={shown!r})" if shown is not None else ")"))
    else:
        parts.append("no GPU")
    return " · ".join(parts)


# --- the matrix --------------------------------------------------------------------------------------


def device_order(device: str) -> Tuple[int, int, str]:
    """Devices here first (toolchain, cpu, cuda:N), then the GPUs described by --gpu (sm_XX, gfxNNN)."""
    m = _CUDA.match(device)
    t = _TARGET.match(device)
    if t:
        return (_KIND_RANK[t.group(1)], int(t.group(2), 16 if t.group(1) == "gfx" else 10), device)
    return (_KIND_RANK.get(device.split(":")[0], 5), int(m.group(1)) if m else -1, device)


def _cell_text(r: Mapping[str, Any]) -> str:
    status = r["status"]
    text = CELL.get(status, status)
    if status != "not-applicable" and r.get("basis") != "canary":
        text += "*"
    elif status != "not-applicable" and r.get("proved") == "compiled":
        text += COMPILED
    return text + (" (s)" if r.get("suppressed") else "")


def columns(results: Sequence[Mapping[str, Any]]) -> List[Tuple[str, List[str]]]:
    """(label, devices) per column; GPUs whose every verdict is the same share one column."""
    devices = sorted({r["device"] for r in results}, key=device_order)
    vectors: Dict[str, Tuple[Any, ...]] = {}
    for d in devices:
        cells = {r["id"]: _cell_text(r) for r in results if r["device"] == d}
        vectors[d] = tuple(sorted(cells.items()))
    out: List[Tuple[str, List[str]]] = []
    for d in devices:
        if _CUDA.match(d) and out and _CUDA.match(out[-1][1][0]) and vectors[out[-1][1][0]] == vectors[d]:
            out[-1][1].append(d)
        else:
            out.append((d, [d]))
    return [(_label(devs), devs) for _, devs in out]


def _label(devices: Sequence[str]) -> str:
    if len(devices) == 1:
        return devices[0]
    idx = [int(_CUDA.match(d).group(1)) for d in devices]  # type: ignore[union-attr]
    if idx == list(range(idx[0], idx[-1] + 1)):
        return f"cuda:{idx[0]}-{idx[-1]}"
    return "cuda:" + ",".join(map(str, idx))


def _rows(results: Sequence[Mapping[str, Any]]) -> Dict[str, Dict[str, Mapping[str, Any]]]:
    rows: Dict[str, Dict[str, Mapping[str, Any]]] = {}
    for r in results:
        rows.setdefault(r["id"], {})[r["device"]] = r
    return rows


def _matrix(console: Any, results: Sequence[Mapping[str, Any]], show_all: bool, width: int) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = _rows(results)
    folded = [i for i, cells in rows.items() if all(r["status"] == "not-applicable" for r in cells.values())]
    shown_rows = {i: c for i, c in rows.items() if show_all or i not in folded}
    shown = [r for cells in shown_rows.values() for r in cells.values()]
    cols = columns(shown) if shown else []
    id_width = max((len(i) for i in shown_rows), default=5)
    cell_width = max([len(_cell_text(r)) for r in shown] + [len(label) for label, _ in cols] + [3])
    needed = id_width + len(cols) * (cell_width + 2) + 2
    if shown_rows and needed <= width:
        table = Table(box=box.SIMPLE_HEAD, header_style=STRONG, pad_edge=False, show_edge=False)
        table.add_column("issue", no_wrap=True, min_width=id_width)
        for label, _ in cols:
            table.add_column(label, no_wrap=True)
        for issue_id, cells in shown_rows.items():
            row: List[Any] = [issue_id]
            for _, devs in cols:
                r = next((cells[d] for d in devs if d in cells), None)
                row.append(Text(_cell_text(r), style=DIM if r.get("suppressed") else STATUS[r["status"]])
                           if r else Text("·", style=DIM))
            table.add_row(*row)
        console.print(table)
    elif shown_rows:  # too narrow for a matrix: one line per finding, worst first
        for r in sorted(shown, key=lambda r: (ORDER.index(r["status"]), r["id"], device_order(r["device"]))):
            line = Text()
            line.append(f"{_cell_text(r):<14}", style=STATUS[r["status"]])
            line.append(f"{r['id']}  ")
            line.append(r["device"], style=DIM)
            console.print(line, no_wrap=True, overflow="ignore")
    if folded and not show_all:
        console.print(Text(f"{len(folded)} more cannot arise here (not-applicable); `--all` lists them",
                           style=DIM))
    console.print()


# --- what to do about it -------------------------------------------------------------------------------


def _wrapped(console: Any, text: str, style: str = "", indent: int = INDENT) -> None:
    """A paragraph that wraps under its own indent, never back to the margin, never inside a word."""
    paragraph(console, text, style, indent)


def _details(console: Any, results: Sequence[Mapping[str, Any]]) -> None:
    from rich.text import Text

    worrying = sorted((r for r in results if r["status"] in WORRYING),
                      key=lambda r: (ORDER.index(r["status"]), r["id"], device_order(r["device"])))
    for r in worrying:
        head = Text()
        head.append(r["status"].upper(), style=STATUS[r["status"]])
        head.append(f"  {r['id']}", style=STRONG)
        head.append(f" on {r['device']}")
        if r.get("severity") == "warning":
            head.append(" [warning]", style=WARN)
        console.print(head)
        _wrapped(console, r["title"], STRONG)
        _wrapped(console, r["reason"] + _basis_note(r))
        for line in r.get("evidence") or []:
            _quoted(console, line)
        if r.get("suppressed"):
            _wrapped(console, f"suppressed: {r['suppressed']}", DIM)
        for w in r.get("workarounds") or []:
            hanging(console, "-", w["text"], INDENT)
            if w.get("command"):
                hanging(console, "$", w["command"], INDENT + 4, COMMAND)
        if r.get("upstream"):
            _wrapped(console, f"refs: {', '.join(r['upstream'])}", DIM)
        if r.get("issue") or not r["id"].startswith("artifact."):
            _wrapped(console, f"more: inductor-doctor explain {r.get('issue') or r['id']}", DIM)
        console.print()


def _quoted(console: Any, line: str) -> None:
    """A line of the canary's output: its own indentation kept, wrapped between words only."""
    from rich.text import Text

    first = " " * INDENT + "| " + " " * (len(line) - len(line.lstrip()))
    for part in wrap(line.strip(), console.width, first, first + "  "):
        console.print(Text(part, style=DIM), no_wrap=True, crop=False, overflow="ignore")


def _basis_note(r: Mapping[str, Any]) -> str:
    if r.get("basis") == "version":
        return " [predicted from versions]"
    return ""


def _footer(console: Any, data: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> None:
    from rich.text import Text

    meta = data.get("meta", {}) or {}
    decided = [r for r in results if r["status"] != "not-applicable"]
    if any(r.get("basis") != "canary" for r in decided):
        console.print(Text("* decided by a static rule (versions, files, symbols), not by running a canary",
                           style=DIM))
    if any(r.get("basis") == "canary" and r.get("proved") == "compiled" for r in decided):
        console.print(Text(f"{COMPILED} earned by compiling for that GPU on this machine (no such GPU here): "
                           "loading and launching there unproven", style=DIM))
    extra = []
    if meta.get("canaries_cached"):
        n = meta["canaries_cached"]
        extra.append(f"{n} canar{'y' if n == 1 else 'ies'} unchanged since the last run; --no-cache re-runs")
    if meta.get("static"):
        extra.append("static checks only")
    if meta.get("duration_s") is not None:
        extra.append(f"{meta['duration_s']:.1f}s")
    tail = summary_line(data.get("summary", {}))
    console.print(Text(tail + (f"  ({'; '.join(extra)})" if extra else ""), style=STRONG))
    for note in meta.get("suppression_notes") or []:
        console.print(Text(f"note: {note}", style=WARN))
    compiled = meta.get("gpu_compile") or {}
    if compiled.get("compiled"):
        tool = f" and {compiled['assembler']}" if compiled.get("assembler") else ""
        console.print(Text(f"the GPU rows were compiled for {compiled.get('gpu')} with triton "
                           f"{compiled.get('triton')}{tool}", style=DIM))
    elif compiled.get("reason"):
        console.print(Text(f"note: {compiled['reason']}", style=DIM))
    for err in meta.get("plugin_errors") or []:
        console.print(Text(f"note: plugin {err['entry_point']} failed to load: {err['error']}", style=WARN))
    if meta.get("interrupted"):
        console.print(Text("interrupted: partial results", style=STATUS["affected"]))
        return
    verdict = final_line(data, results)
    if verdict:
        console.print(Text(verdict, style=STRONG))


def final_line(data: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> str:
    """One sentence a person can trust, when nothing is wrong or nothing could be checked."""
    if data.get("schema", "").startswith("inductor-doctor/plan/"):
        return ""
    meta = data.get("meta", {}) or {}
    live = [r for r in results if not r.get("suppressed")]
    if any(r["status"] in WORRYING for r in live):
        return ""
    decided = [r for r in live if r["status"] == "ok"]
    if not decided:
        return "Nothing was checked: no known issue can arise in this environment as probed."
    static = " (static checks only: run without --static to run the canaries)" if meta.get("static") else ""
    if meta.get("static") and meta.get("targets"):
        gpus = ", ".join(meta["targets"])
        static = (f" (static checks only on this machine's devices; compiled for {gpus}: run without "
                  "--static to run the canaries here)")
    return f"No known issue affects this environment: {ok_count(decided, meta)}{static}."


def ok_count(decided: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> str:
    """How the ok checks were decided, counting canaries as the footer does (every canary of the
    run, reused or not), so that the two numbers a reader sees side by side are of one thing."""
    by_canary = sum(r.get("basis") == "canary" for r in decided)
    by_rule = len(decided) - by_canary
    if len(decided) == 1:
        return "1 check ok, by its canary" if by_canary else "1 check ok, by a static rule"
    if not by_canary:
        return f"{len(decided)} checks ok, each by a static rule"
    parts = [f"{by_rule} by a static rule"] if by_rule else []
    parts.append(f"{by_canary} by {'its' if by_canary == 1 else 'their'} canary")
    text = f"{len(decided)} checks ok: {', '.join(parts)}"
    canaries = int(meta.get("canaries_run") or 0) + int(meta.get("canaries_cached") or 0)
    if canaries > by_canary:
        rest = canaries - by_canary
        its = "its" if rest == 1 else "their"
        text += f" (of {canaries} canaries; the other {rest} could not decide {its} check here)"
    return text
