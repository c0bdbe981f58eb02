"""Records real cross-target canary runs, replayed by tests/verdicts/test_cross_target_canary.py.

Runs `target/cross_compile.py` through the doctor's own runner (harness, process group, fresh caches,
timeout), for a few Triton releases of tests/envs/build_xtarget.sh and target GPUs, and writes what the
runner saw (return code, stdout, stderr, the harness's result) to tests/data/xtarget/<triton>-<target>.json:
what the doctor reads, recorded once, as the facts of tests/data are. Run it again after a change to the
canary:

    bash tests/envs/build_xtarget.sh && PYTHONPATH=$PWD python3 tests/envs/record_xtarget.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from inductor_doctor.check import cross  # noqa: E402
from inductor_doctor.check.runner import ProcessGroups, run_one  # noqa: E402
from inductor_doctor.core.gpu_target import parse_target  # noqa: E402
from inductor_doctor.kb.triton_shared_memory import target_limit  # noqa: E402

ENVS = Path(os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests"))
#: (Triton release, target GPU): each a failure the compiler itself makes, or a clean compile.
RUNS = [("3.9.0", "sm_80"), ("3.9.0", "sm_86"), ("3.9.0", "sm_120"), ("3.9.0", "gfx942"),
        ("3.2.0", "sm_120"), ("3.2.0", "gfx942"), ("3.1.0", "sm_70")]
OUT = HERE / "tests" / "data" / "xtarget"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for release, name in RUNS:
        python = ENVS / f"xtarget-triton-{release}" / "bin" / "python"
        if not python.exists():
            print(f"skip {release} {name}: run tests/envs/build_xtarget.sh", file=sys.stderr)
            continue
        target = parse_target(name)
        job = cross.job(target, str(python), cross.ORDER, target_limit(target)[0])
        run = run_one(job, ProcessGroups())
        record = {"triton": release, "target": name, "kernels": list(cross.ORDER),
                  "smem_limit": target_limit(target)[0], "returncode": run.returncode,
                  "stdout": run.stdout, "stderr": run.stderr[-16000:], "result": run.result,
                  "duration_s": round(run.duration_s, 2)}
        path = OUT / f"triton-{release}-{name}.json"
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"{path.name}: rc={run.returncode} {run.duration_s:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
