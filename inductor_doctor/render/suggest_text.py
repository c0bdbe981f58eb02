"""`plan --suggest` as text: the install lines first, then why each newer build was passed over."""

from __future__ import annotations

from typing import Any, List, Mapping


def render(data: Mapping[str, Any], **_: Any) -> str:
    m = data["machine"]
    gpus = ", ".join(g["name"] if g.get("name") and g["name"] != g["sm"] else g["sm"] for g in m["gpus"])
    facts = [f"Python {m['python']}"] + ([f"glibc {m['glibc']}"] if m.get("glibc") else []) \
        + ([m["cxx"]] if m.get("cxx") else []) + [gpus or "no GPU"] \
        + ([f"driver {m['driver']}"] if m.get("driver") else [])
    lines: List[str] = [f"inductor-doctor {data['tool_version']} · releases as of {data['releases_as_of']}",
                        f"for {m['source']}: " + " · ".join(facts), ""]
    s = data.get("suggestion")
    if s:
        head = "Install" if s.get("clean") else "The closest there is"
        extra = (f", Triton {s['triton']}" if s.get("triton") else "") \
            + (f", torch_xla {s['torch_xla']}" if s.get("torch_xla") else "")
        lines += [f"{head}: torch {s['torch']} ({s['variant']}{extra})",
                  f"    $ {s['pip']}", f"    $ {s['uv']}"]
        if s.get("archs"):
            lines.append(f"    kernels for {' '.join(s['archs'])} ({s['source']})")
    else:
        lines.append("No torch build fits this machine.")
    for item in data.get("issues_no_release_avoids") or []:
        lines.append(f"    no release avoids {item['id']}: {item['reason']}")
    per_gpu = data.get("per_gpu") or []
    if per_gpu:
        lines.append("One install serves every GPU, and no build covers them all; each GPU alone:")
        lines += [f"    {p['gpu']}: {p['best'] or 'none'}" for p in per_gpu]
    over = data.get("passed_over") or []
    if over:
        lines += ["", "Passed over (newest first):"]
        lines += _grouped(over)
    v = data.get("verify")
    if v:
        lines += ["", f"Verified in a scratch venv: {'ok' if v.get('ok') else 'FAILED'}: {v.get('reason')}"]
        lines += [f"    {f}" for f in v.get("findings") or []]
        gpus = v.get("gpus") or {}
        if gpus.get("checked"):
            lines.append(f"    compiled there for {', '.join(gpus['checked'])} (its Triton and assembler; "
                         "loading and launching unproven):")
            lines += [f"      {c}" for c in gpus.get("compiled") or []] or ["      nothing compiled"]
        if v.get("venv"):
            lines.append(f"    kept: {v['venv']}")
    for note in data.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _grouped(over: List[Mapping[str, Any]]) -> List[str]:
    """One line per build, runs of builds passed over for the same reason in one line."""
    runs: List[List[Mapping[str, Any]]] = []
    for o in over:
        if runs and runs[-1][0]["reason"] == o["reason"]:
            runs[-1].append(o)
        else:
            runs.append([o])
    out = []
    for run in runs:
        first, last = run[0], run[-1]
        name = f"torch {first['torch']} {first['variant']}"
        if len(run) > 1:
            name += f" … {last['torch']} {last['variant']} ({len(run)} builds)"
        out.append(f"    {name}: {first['reason']}")
    return out
