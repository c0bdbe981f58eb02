"""`inductor-doctor merge`: many check reports in one matrix, identical columns collapsed, differences named.

The reports are made from one real `check --static --format json` report of this machine, with the
host, the GPUs and the results each fleet member would have written.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from conftest import run_cli
from fault_canaries.faults import covers

from inductor_doctor.schemas import validate

ONLY = "block-mask-cpu,view-dtype-align,const-data-ptr-abi"
H100 = "NVIDIA H100 80GB HBM3"
BAD_STATUS = json.dumps(
    {"schema": "inductor-doctor/check/v1", "results": [{"id": "x", "device": "cpu", "status": "so-so"}]}
)


@pytest.fixture(scope="module")
def base_report(tmp_path_factory) -> Dict[str, Any]:
    proc = run_cli(["check", "--static", "--only", ONLY, "--format", "json"])
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def member(
    base: Dict[str, Any],
    host: str,
    gpus: int,
    torch: Optional[str] = None,
    affected: Optional[int] = None,
    rank: Optional[int] = None,
    gpu_name: str = H100,
) -> Dict[str, Any]:
    """A fleet member's report: `gpus` GPUs, view-dtype-align checked on each, one maybe affected."""
    d = copy.deepcopy(base)
    env = d["environment"]
    env["host"].update(hostname=host, rank=rank)
    if torch:
        env["torch"]["version"] = torch
    env["cuda"]["gpus"] = [{"index": i, "name": gpu_name} for i in range(gpus)]
    template = next(r for r in d["results"] if r["id"] == "view-dtype-align")
    results = [r for r in d["results"] if r["id"] != "view-dtype-align"]
    for i in range(gpus):
        r = dict(template, device=f"cuda:{i}", status="ok", basis="canary", reason="canary ran clean")
        if i == affected:
            r.update(status="affected", reason="canary reproduced it: Expect the tensor to be 16 bytes")
        results.append(r)
    d["results"] = results
    return d


def write(tmp: Path, name: str, data: Any) -> Path:
    path = tmp / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def merge_json(paths: List[Path], *extra: str) -> Dict[str, Any]:
    proc = run_cli(["merge", *map(str, paths), "--format", "json", *extra])
    assert proc.stdout.strip(), proc.stderr
    data = json.loads(proc.stdout)
    data["_rc"] = proc.returncode
    return data


def test_identical_gpus_collapse_and_the_odd_one_is_named(base_report, tmp_path):
    a = write(tmp_path, "a.json", member(base_report, "node-a", 8))
    b = write(tmp_path, "b.json", member(base_report, "node-b", 8, affected=3))
    doc = merge_json([a, b])
    rc = doc.pop("_rc")
    validate("merge", doc)
    assert rc == 1  # one result is affected: at the default --fail-on affected
    labels = [g["label"] for g in doc["groups"]]
    assert f"15 × {H100} on node-a, node-b" in labels
    assert "node-b/cuda:3" in labels
    odd = next(g for g in doc["groups"] if g["label"] == "node-b/cuda:3")
    assert odd["statuses"]["view-dtype-align"] == "affected"
    row = next(i for i in doc["issues"] if i["id"] == "view-dtype-align")
    assert row["uniform"] is False and row["worst"] == "affected"
    assert row["statuses"]["affected"] == ["node-b/cuda:3"]
    assert len(row["statuses"]["ok"]) == 15
    assert {c["name"] for c in doc["columns"]} >= {"node-a/cuda:0", "node-b/cuda:7", "node-a/cpu"}
    assert doc["summary"]["affected"] == 1


def test_text_shows_groups_and_differences(base_report, tmp_path):
    a = write(tmp_path, "a.json", member(base_report, "node-a", 8))
    b = write(tmp_path, "b.json", member(base_report, "node-b", 8, affected=3))
    proc = run_cli(["merge", str(a), str(b)], env={"COLUMNS": "200"})
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert f"15 × {H100} on node-a, node-b" in out
    assert "node-a/cuda:0-7, node-b/cuda:0-2,4-7" in out
    assert "view-dtype-align: affected on node-b/cuda:3 (and ok on the 15 others)" in out
    assert "AFFECTED" in out and "Traceback" not in proc.stderr


def test_differing_probe_fields_are_listed(base_report, tmp_path):
    a = write(tmp_path, "a.json", member(base_report, "node-a", 2, torch="2.8.0+cu128"))
    b = write(tmp_path, "b.json", member(base_report, "node-b", 2, torch="2.8.0+cu128"))
    c = write(
        tmp_path, "c.json", member(base_report, "node-c", 2, torch="2.9.0+cu128", gpu_name="NVIDIA A100")
    )
    doc = merge_json([a, b, c])
    doc.pop("_rc")
    validate("merge", doc)
    diffs = {d["label"]: d["values"] for d in doc["environment"]["differences"]}
    assert {"value": "2.9.0+cu128", "sources": ["node-c"]} in diffs["torch"]
    assert {"value": "2.8.0+cu128", "sources": ["node-a", "node-b"]} in diffs["torch"]
    assert "GPUs" in diffs
    assert "python" in doc["environment"]["common"]
    proc = run_cli(["merge", str(a), str(b), str(c)], env={"COLUMNS": "200"})
    assert "torch: 2.8.0+cu128 on node-a, node-b; 2.9.0+cu128 on node-c" in proc.stdout
    # Same statuses but different GPU models: one group per kind, named by count.
    assert "6 × cuda on node-a, node-b, node-c" in proc.stdout


def test_ranks_of_one_host_that_share_a_device_are_told_apart(base_report, tmp_path):
    r0 = write(tmp_path, "r0.json", member(base_report, "vm", 0, rank=0))
    r1 = write(tmp_path, "r1.json", member(base_report, "vm", 0, rank=1))
    doc = merge_json([r0, r1])
    assert doc.pop("_rc") == 0
    validate("merge", doc)
    assert {s["label"] for s in doc["sources"]} == {"vm@rank0", "vm@rank1"}
    assert "vm@rank1/cpu" in {c["name"] for c in doc["columns"]}


def _rank_of_two_gpu_host(base: Dict[str, Any], rank: int, **cuda: Any) -> Dict[str, Any]:
    """Rank `rank` of `check --distributed` on a 2-GPU host `vm`: local rank 0 holds the node's
    devices and cuda:0, local rank 1 cuda:1; `cuda` changes this rank's probe (its GPUs hidden...)."""
    d = member(base, "vm", 0, rank=rank)
    d["meta"]["distributed"] = {"rank": rank, "world_size": 2, "local_rank": rank, "local_world_size": 2,
                                "group_rank": 0, "launcher_local_rank": rank}
    d["environment"]["cuda"].update(local_rank=str(rank), cudnn_version="91900", visible_devices=None)
    d["environment"]["cuda"].update(cuda)
    template = dict(next(r for r in d["results"] if r["id"] == "block-mask-cpu"), id="cuda-devices-hidden",
                    title="GPUs hidden", status="ok", reason="torch sees 2 GPUs of the driver's 2")
    hidden = cuda.get("visible_devices") == ""
    gpus = [] if hidden else [{"index": rank, "name": H100}]
    d["environment"]["cuda"]["gpus"] = gpus
    d["results"] = [r for r in d["results"] if rank == 0]
    if hidden:
        d["results"].append(dict(template, device="cuda", status="affected",
                                 reason="CUDA_VISIBLE_DEVICES='' hides all of the driver's 2 GPUs"))
    else:
        d["results"].append(dict(template, device=f"cuda:{rank}"))
    return d


def test_a_rank_with_its_gpus_hidden_is_its_own_column_and_named_in_differences(base_report, tmp_path):
    """The 2-GPU host's finding: rank 1 with CUDA_VISIBLE_DEVICES='' and a Triton cache of its own.
    Its `cuda` column is `vm@rank1/cuda`, and every difference names `vm@rank0` / `vm@rank1`, never
    `vm` twice."""
    r0 = write(tmp_path, "r0.json", _rank_of_two_gpu_host(base_report, 0))
    d1 = _rank_of_two_gpu_host(base_report, 1, visible_devices="", cudnn_version=None)
    d1["environment"]["env"]["TRITON_CACHE_DIR"] = "/tmp/roc/t"
    r1 = write(tmp_path, "r1.json", d1)
    doc = merge_json([r0, r1])
    assert doc.pop("_rc") == 1
    validate("merge", doc)
    assert {s["name"] for s in doc["sources"]} == {"vm@rank0", "vm@rank1"}
    row = next(i for i in doc["issues"] if i["id"] == "cuda-devices-hidden")
    assert row["statuses"] == {"affected": ["vm@rank1/cuda"], "ok": ["vm@rank0/cuda:0"]}
    diffs = {d["label"]: d["values"] for d in doc["environment"]["differences"]}
    assert diffs["cuDNN"] == [{"value": "91900", "sources": ["vm@rank0"]},
                              {"value": "unknown", "sources": ["vm@rank1"]}]
    assert diffs["$TRITON_CACHE_DIR"] == [{"value": "absent", "sources": ["vm@rank0"]},
                                          {"value": "/tmp/roc/t", "sources": ["vm@rank1"]}]
    assert diffs["GPU binding"] == [{"value": "every GPU visible", "sources": ["vm@rank0"]},
                                    {"value": "CUDA_VISIBLE_DEVICES='' (no GPU)", "sources": ["vm@rank1"]}]
    out = run_cli(["merge", str(r0), str(r1)], env={"COLUMNS": "200", "NO_COLOR": "1"}).stdout
    assert "cuda-devices-hidden: affected on vm@rank1/cuda (and ok on vm@rank0/cuda:0)" in out
    assert "cuDNN: 91900 on vm@rank0; unknown on vm@rank1" in out
    assert " on vm;" not in out and not re.search(r" on vm$", out, re.M), out


def test_healthy_ranks_of_one_host_keep_plain_columns_and_a_rewritten_local_rank_shows(base_report, tmp_path):
    """Ranks that each check their own GPU keep `vm/cuda:N` columns (nothing clashes); a rank whose
    LOCAL_RANK a wrapper rewrote, or bound to its GPU by CUDA_VISIBLE_DEVICES, is a GPU binding
    difference naming it."""
    r0 = write(tmp_path, "r0.json", _rank_of_two_gpu_host(base_report, 0))
    r1 = write(tmp_path, "r1.json", _rank_of_two_gpu_host(base_report, 1))
    doc = merge_json([r0, r1])
    assert {c["name"] for c in doc["columns"]} >= {"vm/cuda:0", "vm/cuda:1", "vm/cpu"}
    assert not [d for d in doc["environment"]["differences"] if d["label"] == "GPU binding"]
    rewritten = _rank_of_two_gpu_host(base_report, 1, local_rank="0")
    bound = _rank_of_two_gpu_host(base_report, 1, visible_devices="1")
    for d, says in ((rewritten, "every GPU visible, LOCAL_RANK=0 (torchrun's local rank 1)"),
                    (bound, "CUDA_VISIBLE_DEVICES=$LOCAL_RANK")):
        doc = merge_json([r0, write(tmp_path, "r1.json", d)])
        diffs = {x["label"]: x["values"] for x in doc["environment"]["differences"]}
        assert {"value": says, "sources": ["vm@rank1"]} in diffs["GPU binding"], diffs


def test_fail_on_and_suppressed_and_warnings(base_report, tmp_path):
    d = member(base_report, "node-a", 1)
    r = next(r for r in d["results"] if r["id"] == "block-mask-cpu")
    r["status"] = "likely"
    a = write(tmp_path, "a.json", d)
    assert run_cli(["merge", str(a)]).returncode == 0
    assert run_cli(["merge", str(a), "--fail-on", "likely"]).returncode == 1
    r["suppressed"] = "accepted until the upgrade"
    a = write(tmp_path, "a.json", d)
    assert run_cli(["merge", str(a), "--fail-on", "likely"]).returncode == 0
    r["suppressed"] = None
    r["severity"] = "warning"
    a = write(tmp_path, "a.json", d)
    assert run_cli(["merge", str(a), "--fail-on", "likely"]).returncode == 0
    assert run_cli(["merge", str(a), "--fail-on", "likely", "--fail-on-warnings"]).returncode == 1


def test_markdown_and_output_file(base_report, tmp_path):
    a = write(tmp_path, "a.json", member(base_report, "node-a", 4, affected=2))
    out = tmp_path / "fleet.md"
    proc = run_cli(["merge", str(a), "--format", "markdown", "--output", str(out)])
    assert proc.returncode == 1 and proc.stdout == ""
    text = out.read_text()
    assert text.startswith("### inductor-doctor") and "| `view-dtype-align` |" in text
    assert "#### `view-dtype-align` affected on node-a/cuda:2" in text
    out_json = tmp_path / "fleet.json"
    assert run_cli(["merge", str(a), "--format", "json", "-o", str(out_json)]).returncode == 1
    validate("merge", json.loads(out_json.read_text()))


@pytest.mark.parametrize(
    "content, why",
    [
        ("{", "not valid JSON"),
        ("", "empty file"),
        ("[1, 2]", "JSON list"),
        ('{"schema": "inductor-doctor/probe/v1", "results": []}', "schema is"),
        ('{"schema": "inductor-doctor/check/v1"}', "no `results` list"),
        ('{"schema": "inductor-doctor/check/v1", "results": [{"id": "x"}]}', "no `device` string"),
        (BAD_STATUS, "unknown status"),
        ('{"schema": "inductor-doctor/merge/v1", "results": []}', "already a merged report"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ],
    ids=["truncated", "empty", "list", "probe", "no-results", "no-device", "bad-status", "merged",
         "binary", "deep"],
)
@covers("report-malformed")
def test_malformed_report_is_one_line_exit_2_naming_the_file(base_report, tmp_path, content, why):
    good = write(tmp_path, "good.json", member(base_report, "node-a", 1))
    bad = tmp_path / "bad.json"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    proc = run_cli(["merge", str(good), str(bad)])
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and why in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_unreadable_and_missing_report_and_directory(tmp_path):
    for path in (tmp_path / "nope.json", tmp_path):
        proc = run_cli(["merge", str(path)])
        assert proc.returncode == 2 and str(path) in proc.stderr and "Traceback" not in proc.stderr


@covers("hostile-report")
def test_merge_never_executes_report_text(base_report, tmp_path):
    """Workaround commands and reasons in a report are data: nothing in them is ever run."""
    pwned = tmp_path / "pwned"
    d = member(base_report, "node-$(touch " + str(pwned) + ")", 1, affected=0)
    for r in d["results"]:
        r["reason"] = f"`touch {pwned}` $(touch {pwned}); touch {pwned}"
        r["workarounds"] = [{"text": "run this", "command": f"touch {pwned}", "kind": "other"}]
    a = write(tmp_path, "a.json", d)
    for fmt in ("text", "json", "markdown"):
        proc = run_cli(["merge", str(a), "--format", fmt])
        assert proc.returncode == 1
    assert not pwned.exists()


def test_merge_does_not_import_torch(base_report, tmp_path):
    poison = tmp_path / "poison" / "torch"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text("raise ImportError('merge must not import torch')\n")
    a = write(tmp_path, "a.json", member(base_report, "node-a", 2))
    proc = run_cli(["merge", str(a)], env={"PYTHONPATH": str(tmp_path / "poison")})
    assert proc.returncode == 0, proc.stderr


def test_a_thousand_gpus_merge_fast(base_report, tmp_path):
    """128 nodes × 8 GPUs: one column for the healthy ones, in a few seconds."""
    import time

    paths = [
        write(tmp_path, f"n{n}.json", member(base_report, f"node-{n:03d}", 8, affected=5 if n == 77 else -1))
        for n in range(128)
    ]
    start = time.monotonic()
    doc = merge_json(paths)
    assert time.monotonic() - start < 30
    assert doc.pop("_rc") == 1
    gpu_groups = [g for g in doc["groups"] if g["kind"] == "cuda"]
    assert len(gpu_groups) == 2
    assert {g["label"] for g in gpu_groups} == {f"1023 × {H100} on 128 hosts", "node-077/cuda:5"}


@pytest.mark.parametrize("columns", ["80", "120"])
def test_the_header_counts_the_columns_the_table_has(base_report, tmp_path, columns):
    """Two reports: the header's column count is the table's (and its legend's), not the number
    of host/device pairs, which is said beside it."""
    a = write(tmp_path, "a.json", member(base_report, "node-a", 8))
    b = write(tmp_path, "b.json", member(base_report, "node-b", 8, affected=3))
    out = run_cli(["merge", str(a), str(b)], env={"COLUMNS": columns, "NO_COLOR": "1"}).stdout
    said = int(re.search(r"· (\d+) columns? \((\d+) host/device pairs\)", " ".join(out.split())).group(1))
    head = next(ln for ln in out.splitlines() if ln.startswith("issue "))
    assert head.split()[1:] == [f"#{i}" for i in range(1, said + 1)], out
    assert len(re.findall(r"^  #\d+ = ", out, re.M)) == said, out


def test_a_fleet_of_two_thousand_hosts_fits_a_screen(base_report, tmp_path):
    """2,000 hosts of 8 GPUs, 21 of them different (8 with an affected GPU, 6 on another torch, 4
    on another driver, 3 with an inconclusive CPU check): the view at 80 columns fits a screen,
    the fleet is a hostlist (`node[0000-1999]`), and the odd hosts are grouped by how they differ."""
    import time

    odd = {90 * (k + 1): k for k in range(21)}  # node0090, node0180, ...
    paths = []
    for n in range(2000):
        k = odd.get(n)
        d = member(base_report, f"node{n:04d}", 8, affected=k if k is not None and k < 8 else None,
                   torch="2.12.0+cu128" if k is not None and 8 <= k < 14 else None)
        if k is not None and 14 <= k < 18:
            d["environment"]["cuda"]["driver_version"] = "550.54.15"
        if k is not None and k >= 18:
            for r in d["results"]:
                if r["id"] == "block-mask-cpu":
                    r.update(status="inconclusive", basis="canary", reason="canary timed out after 120s")
        paths.append(write(tmp_path, f"node{n:04d}.json", d))
    start = time.monotonic()
    proc = run_cli(["merge", *map(str, paths)], env={"COLUMNS": "80", "NO_COLOR": "1"})
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) <= 60, proc.stdout
    assert max(map(len, lines)) <= 80, proc.stdout
    text = " ".join(proc.stdout.split())
    assert "2000 hosts (node[0000-1999])" in text
    assert "Hosts that differ from the rest (21 of 2000): node[0090,0180," in text
    assert "torch: 2.12.0+cu128 on node[0810,0900,0990,1080,1170,1260]" in text
    assert "block-mask-cpu: inconclusive on node[1710,1800,1890]/cpu" in text
    assert len(re.findall(r"node\d{4}", proc.stdout)) <= 40, "hosts listed one by one"
    assert took < 240


def test_unit_build_with_missing_rank(base_report):
    from inductor_doctor.fleet.document import Missing, build_document

    document = build_document(
        [member(base_report, "node-a", 1, rank=0)],
        missing=[Missing(1, "rank 1 (node-b, local rank 0)", "joined, but sent no report", "node-b")],
    )
    doc = document.to_dict()
    validate("merge", doc)
    missing = [r for r in doc["results"] if r["column"] == "rank 1 (node-b, local rank 0)"]
    assert {r["id"] for r in missing} == set(ONLY.split(","))
    assert all(r["status"] == "inconclusive" and "no report from rank 1" in r["reason"] for r in missing)
    from inductor_doctor.core.model import FailOn

    assert document.exit_code((FailOn.AFFECTED, False)) == 0
    assert document.exit_code((FailOn.INCONCLUSIVE, False)) == 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
