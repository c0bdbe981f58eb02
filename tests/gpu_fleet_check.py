"""What each state of tests/gpu_fleet.sh must show, checked on its output: one PASS or FAIL line per
expectation, and each fleet view rendered as text beside its JSON (NAME.view.txt).

    python tests/gpu_fleet_check.py OUT NGPU
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
NGPU = int(sys.argv[2]) if len(sys.argv) > 2 else 2
LINES: List[str] = []


def load(name: str) -> Optional[Dict[str, Any]]:
    try:
        return json.loads((OUT / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None


def text(name: str) -> str:
    path = OUT / f"{name}.txt"
    return path.read_text(errors="replace") if path.exists() else ""


def rc(name: str) -> Optional[int]:
    """The exit status `part` recorded for NAME in times.txt."""
    m = re.search(rf"^{re.escape(name)}\s+rc=(\d+)", text("times"), re.M)
    return int(m.group(1)) if m else None


def expect(state: str, what: str, passed: Any, got: Any = "") -> None:
    detail = "" if passed else f"  [got: {str(got)[:400]}]"
    LINES.append(f"{'PASS' if passed else 'FAIL'}  {state}: {what}{detail}")


def view(name: str, doc: Dict[str, Any]) -> None:
    """The fleet view as a person sees it, from the JSON (the doctor's own renderer)."""
    os.environ.setdefault("COLUMNS", "160")
    from inductor_doctor.fleet.document import MergeDocument
    from inductor_doctor.render import render

    body = {k: v for k, v in doc.items() if k not in ("schema", "tool_version", "kb_version")}
    (OUT / f"{name}.view.txt").write_text(render(MergeDocument(body), "text"))


def statuses(doc: Dict[str, Any], issue: str) -> Dict[str, List[str]]:
    return next((r["statuses"] for r in doc["issues"] if r["id"] == issue), {})


def diffs(doc: Dict[str, Any]) -> Dict[str, Dict[str, List[str]]]:
    out: Dict[str, Dict[str, List[str]]] = {}
    for d in doc["environment"]["differences"]:
        out[d["label"]] = {v["value"]: v["sources"] for v in d["values"]}
    return out


def reason(doc: Dict[str, Any], issue: str, column: str) -> str:
    return next((r["reason"] for r in doc["results"] if r["id"] == issue and r["column"] == column), "")


def common(name: str, doc: Dict[str, Any]) -> None:
    expect(name, "no rank missing", doc["missing"] == [], doc["missing"])
    named = sorted({s for d in doc["environment"]["differences"] for v in d["values"] for s in v["sources"]})
    expect(name, "every difference names host@rank", all("@rank" in s for s in named), named)


def healthy(name: str, doc: Dict[str, Any], host: str) -> None:
    gpus = [next((d for d in s["devices"] if d.startswith("cuda")), None) for s in doc["sources"]]
    expect(name, f"{NGPU} ranks, rank i on cuda:i", gpus == [f"cuda:{i}" for i in range(NGPU)],
           [s["devices"] for s in doc["sources"]])
    expect(name, "no GPU binding difference", "GPU binding" not in diffs(doc), diffs(doc).get("GPU binding"))
    hidden = statuses(doc, "cuda-devices-hidden")
    expect(name, "cuda-devices-hidden ok on every GPU", set(hidden) == {"ok"}, hidden)
    if name == "healthy":
        columns = sorted({r["column"] for r in doc["results"]
                          if r["basis"] == "canary" and r["device"].startswith("cuda:")})
        expect(name, "GPU canaries ran on every GPU", len(columns) == NGPU, columns)
        expect(name, "exit 0: nothing affected", rc(name) == 0, (rc(name), doc["summary"]))
    else:
        cached = [s["cached"] for s in doc["sources"]]
        expect(name, "every rank answered its canaries from the result cache", all(cached), cached)


def hidden(name: str, doc: Dict[str, Any], host: str) -> None:
    found = statuses(doc, "cuda-devices-hidden")
    expect(name, f"cuda-devices-hidden affected on {host}@rank1/cuda only",
           found.get("affected") == [f"{host}@rank1/cuda"], found)
    binding = diffs(doc).get("GPU binding", {})
    expect(name, "GPU binding names rank 1's empty CUDA_VISIBLE_DEVICES",
           binding.get("CUDA_VISIBLE_DEVICES='' (no GPU)") == [f"{host}@rank1"], binding)
    expect(name, "torchrun exits 1: a finding is affected", rc(name) == 1, rc(name))


def cache(name: str, doc: Dict[str, Any], host: str) -> None:
    for var in ("$TRITON_CACHE_DIR", "$TORCHINDUCTOR_CACHE_DIR"):
        found = diffs(doc).get(var, {})
        expect(name, f"{var} differs on {host}@rank1", [f"{host}@rank1"] in found.values(), found)


def triton(name: str, doc: Dict[str, Any], host: str) -> None:
    found = {k: diffs(doc).get(k, {}) for k in ("triton", "triton path")}
    expect(name, "rank 1's own Triton is a difference naming it",
           any([f"{host}@rank1"] in v.values() for v in found.values()), found)


def bind(name: str, doc: Dict[str, Any], host: str) -> None:
    binding = diffs(doc).get("GPU binding", {})
    expect(name, "GPU binding: CUDA_VISIBLE_DEVICES=$LOCAL_RANK on rank 1",
           binding.get("CUDA_VISIBLE_DEVICES=$LOCAL_RANK") == [f"{host}@rank1"], binding)
    said = reason(doc, "cuda-devices-hidden", f"{host}@rank1/cuda")
    expect(name, "cuda-devices-hidden on rank 1: LOCAL_RANK=1 but torch sees 1 GPU",
           "LOCAL_RANK=1 but torch sees 1 GPU" in said, said or statuses(doc, "cuda-devices-hidden"))


def localrank(name: str, doc: Dict[str, Any], host: str) -> None:
    binding = diffs(doc).get("GPU binding", {})
    expect(name, "GPU binding: LOCAL_RANK=0 where torchrun gave 1",
           any("LOCAL_RANK=0 (torchrun's local rank 1)" in v for v in binding), binding)
    columns = {c["name"] for c in doc["columns"]}
    expect(name, "both ranks on cuda:0, told apart by rank",
           {f"{host}@rank0/cuda:0", f"{host}@rank1/cuda:0"} <= columns, sorted(columns))


def extra(name: str, doc: Dict[str, Any], host: str) -> None:
    for r in (NGPU, NGPU + 1):
        said = reason(doc, "cuda-devices-hidden", f"{host}@rank{r}/cuda")
        expect(name, f"rank {r}, with no GPU of its own: cuda-devices-hidden affected on its column",
               f"LOCAL_RANK={r} but torch sees {NGPU} GPUs" in said,
               said or statuses(doc, "cuda-devices-hidden"))


STATES = {"healthy": healthy, "healthy-repeat": healthy, "hidden": hidden, "cache": cache,
          "triton": triton, "bind": bind, "localrank": localrank, "extra": extra}


def ran(name: str) -> bool:
    """Whether this pass ran the part (a pass may run some parts only)."""
    return rc(name) is not None


def fleet_states() -> None:
    for name, judge in STATES.items():
        if not ran(name):
            LINES.append(f"SKIP  {name}: not run in this pass")
            continue
        doc = load(name)
        expect(name, "rank 0 wrote the fleet view's JSON", doc is not None, f"rc={rc(name)}")
        if doc is None:
            continue
        try:
            view(name, doc)
            common(name, doc)
            judge(name, doc, doc["sources"][0]["hostname"])
        except Exception:  # noqa: BLE001 - the pass goes on: this state is what failed
            expect(name, "its output could be read", False, traceback.format_exc(limit=2))


def verdicts() -> None:
    if not ran("verdict-healthy"):
        LINES.append("SKIP  verdict: not run in this pass")
        return
    ok = load("verdict-healthy")
    expect("verdict", "a healthy node: exit 0, healthy, nobody's problem",
           ok is not None and ok["healthy"] and ok["problem"] is None and rc("verdict-healthy") == 0,
           (rc("verdict-healthy"), ok and ok["reason"]))
    hid = load("verdict-hidden")
    expect("verdict", "GPUs hidden by the job's CUDA_VISIBLE_DEVICES: exit 1, a user problem",
           hid is not None and rc("verdict-hidden") == 1 and hid["problem"] == "user"
           and hid["reason"].startswith("[user_problem] inductor-doctor: cuda-devices-hidden on cuda"),
           (rc("verdict-hidden"), hid and hid["reason"]))
    kept = load("node-verdict/verdict")
    said = text("verdict-script").strip().splitlines()
    expect("verdict", "contrib/node-verdict.sh prints the verdict's one line",
           kept is not None and said and said[-1] == kept["reason"], said[-1:])


def benches() -> None:
    if not ran("bench-distributed"):
        LINES.append("SKIP  bench: not run in this pass")
        return
    dist, rep = text("bench-distributed"), text("bench-repeated")
    for line in (dist + rep).splitlines():
        if re.search(r"ratio to the larger|single-rank|--distributed, 2|torchrun alone|^this |^checkout|"
                     r"interpreter alone", line):
            LINES.append(f"      {line.strip()}")
    m = re.search(r"ratio to the larger of the two:\s+([\d.]+)", dist)
    expect("bench", "check --distributed: at most 1.3 x the larger of one rank's check and torchrun's start",
           m is not None and float(m.group(1)) <= 1.3, m.group(1) if m else "no figure")
    m2 = re.search(r"^this node-verdict\s+([\d.]+) s\s+[\d.]+ s\s+[\d.]+ s\s+([\d.]+) MB\s+\[([\d, ]+)\]",
                   rep, re.M)
    # Only a check that ran counts: exit 0 or 1 (exit 3, a doctor that could not start, is fast too).
    ran_ok = m2 is not None and set(m2.group(3).replace(" ", "").split(",")) <= {"0", "1"}
    expect("bench", "a repeated check: at most 0.3 s wall and 60 MB, every run a check (exit 0 or 1)",
           ran_ok and float(m2.group(1)) <= 0.3 and float(m2.group(2)) <= 60,
           m2.groups() if m2 else "no figure")


if __name__ == "__main__":
    fleet_states()
    verdicts()
    benches()
    print("\n".join(LINES))
    counts = [sum(1 for line in LINES if line.startswith(w)) for w in ("PASS", "FAIL")]
    print(f"{counts[0]} passed, {counts[1]} failed (each part's output: OUT/PART.txt; views: OUT/*.view.txt)")
