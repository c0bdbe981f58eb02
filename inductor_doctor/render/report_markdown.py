"""The `report` document as one collapsible Markdown block, ready to paste into a GitHub issue.

Bounded: GitHub refuses an issue body over 65,536 characters, so each part has a budget and the
whole stays under MAX_CHARS; what is cut says so. The verdicts come first (what a maintainer reads
first), then the triage of the log, the compile stack, and collect_env's own output last.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

MAX_CHARS = 60_000
COLLECT_ENV_CHARS = 30_000
SHOWN_STATUSES = ("affected", "likely", "inconclusive")


def render(data: Mapping[str, Any], **_: Any) -> str:
    env = data["environment"]
    results = data["results"]
    summary = data.get("summary") or {}
    torch = (env.get("torch") or {}).get("version") or "no torch"
    python = (env.get("python") or {}).get("version") or "?"
    counts = ", ".join(f"{summary.get(s, 0)} {s}" for s in SHOWN_STATUSES)
    out: List[str] = [
        "<details>",
        f"<summary>inductor-doctor report: {counts} · torch {torch} · Python {python}</summary>",
        "",
    ]
    out += _verdicts(data, results)
    if data.get("triage"):
        out += _triage(data["triage"])
    out += _stack(env)
    out += _collect_env(data["collect_env"])
    out += ["", "</details>", ""]
    text = "\n".join(out)
    if len(text) > MAX_CHARS:
        cut = text[: MAX_CHARS - 200].rsplit("\n", 1)[0]
        text = cut + "\n\n(report cut to stay within a GitHub issue's size)\n\n```\n\n</details>\n"
    return text


def _verdicts(data: Mapping[str, Any], results: List[Mapping[str, Any]]) -> List[str]:
    versions = f"inductor-doctor {data['tool_version']}, knowledge base {data['kb_version']}"
    out = [f"### Known issues ({versions})", ""]
    shown = [r for r in results if r["status"] in SHOWN_STATUSES and not r.get("suppressed")]
    if shown:
        out += ["| issue | device | verdict | why |", "|---|---|---|---|"]
        for r in shown:
            out.append(f"| `{r['id']}` | {r['device']} | {r['status']} | {_cell(r['reason'])} |")
    else:
        out.append("No known issue affects this environment.")
    rest = len(results) - len(shown)
    out += ["", f"{rest} other checks: ok or not applicable here.", ""]
    return out


def _triage(triage: Mapping[str, Any]) -> List[str]:
    out = ["### The failing log", ""]
    matched = [r for r in triage["results"] if r["confidence"] != "version-only"]
    if not matched:
        out += ["No known issue matched the log.", ""]
        return out
    for r in matched:
        line = f"* {r['assessment']}"
        if r.get("because"):
            line += ", because " + "; and ".join(r["because"])
        if r.get("bystander"):
            line += f" ({r['bystander']})"
        out.append(line)
        for ev in r["evidence"][:2]:
            out.append(f"  * line {ev['line']}: `{_code(ev['text'][0])}`")
    return out + [""]


def _stack(env: Mapping[str, Any]) -> List[str]:
    """The compile-stack facts collect_env does not give."""
    torch = env.get("torch") or {}
    triton = env.get("triton") or {}
    cuda = env.get("cuda") or {}
    cxx = env.get("cxx") or {}
    cc = env.get("cc") or {}
    py = env.get("python") or {}
    abi = env.get("abi") or {}
    rows = [
        ("torch", _join(torch.get("version"), torch.get("path"))),
        ("torch built with", _join(torch.get("built_with"), f"C++11 ABI {_word(torch.get('cxx11_abi'))}")),
        ("Triton", _join(triton.get("version") or "not installed", _asks(torch))),
        ("ptxas", _join(cuda.get("ptxas_version"), cuda.get("ptxas_path"))),
        ("C++ compiler (Inductor)", _compiler(cxx)),
        ("C compiler (Triton)", _compiler(cc)),
        ("Python.h", _join(_word(py.get("has_python_h")), py.get("include_dir"))),
        ("libstdc++", _join(py.get("libstdcxx_glibcxx_max"), py.get("libstdcxx_path"))),
        ("const_data_ptr symbol", abi.get("reason")),
        ("GPUs visible", _word(cuda.get("visible_count"))),
        ("CUDA_VISIBLE_DEVICES", _visible(cuda.get("visible_devices"))),
        ("torch_xla", ((env.get("xla") or {}).get("version"))),
    ]
    for d in (env.get("caches") or {}).get("dirs") or ():
        state = "writable" if d.get("writable") else "NOT writable"
        noexec = "noexec" if "noexec" in (d.get("mount_options") or ()) else None
        where = _join(d.get("path"), d.get("source"), state, d.get("fs_type"), noexec)
        rows.append((f"{d.get('name')} cache", where))
    out = ["### Compile stack", "", "| | |", "|---|---|"]
    out += [f"| {k} | {_cell(v)} |" for k, v in rows if v]
    variables: Dict[str, str] = env.get("env") or {}
    if variables:
        out += ["", "Environment: " + ", ".join(f"`{k}={_code(v)}`" for k, v in sorted(variables.items()))]
    return out + [""]


def _asks(torch: Mapping[str, Any]) -> Any:
    return f"torch asks for {torch['triton_requirement']}" if torch.get("triton_requirement") else None


def _compiler(info: Mapping[str, Any]) -> str:
    if not info.get("command"):
        return "none found"
    flags = [f"{name} {_word(info.get(key))}" for name, key in
             (("OpenMP", "openmp"), ("Python.h", "python_h"), ("works", "works"))]
    return _join(info.get("version_line") or info.get("command"), info.get("path"), *flags)


def _collect_env(block: Mapping[str, Any]) -> List[str]:
    text = block.get("text") or ""
    title = "### python -m torch.utils.collect_env"
    if block.get("source") != "torch.utils.collect_env":
        title += f" (could not run: {block.get('error')}; its fields from the probe)"
    if len(text) > COLLECT_ENV_CHARS:
        text = text[:COLLECT_ENV_CHARS].rsplit("\n", 1)[0] + "\n(cut)"
    return [title, "", "```", text.replace("```", "'''"), "```"]


def _word(value: Any) -> str:
    """A fact as a reader says it: yes, no, or a dash for unknown; never Python's True or None."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _visible(value: Any) -> str:
    if value is None:
        return "— (not set)"
    return f"`{_code(value)}`" if value else "set, empty (no GPU visible)"


def _join(*parts: Any) -> str:
    return " · ".join(str(p) for p in parts if p not in (None, "", "None"))


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _code(text: Any) -> str:
    return str(text).replace("`", "'")[:200]
