#!/usr/bin/env bash
# One pass of the GPU verification kept in docs/gpu-verification.md, run from the checkout on a GPU
# host. Every part writes PART.txt under $OUT and one timing line to $OUT/times.txt.
#   OUT=dir bash tests/gpu_pass.sh [PART ...]    parts: tests check preflight report states suggest cross
#                                                 bench atfailure (not in the default pass: minutes of compiles;
#                                                 its parts: why-programs run-ok why-bisect why-compare
#                                                 why-lowering why-shm, why-programs first)
# Extra wheels (pyelftools, jsonschema, ...) may wait in .whl/; they are installed beside, never into,
# the interpreter under test. .whl/doctor/ may hold the doctor's own wheel and its dependencies, for
# the benchmark's new venv on a host with no package index.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
# shellcheck source=tests/gpu_lib.sh
. tests/gpu_lib.sh
if ls .whl/doctor/*.whl >/dev/null 2>&1; then DOCTOR_WHEELS=$PWD/.whl/doctor; fi
# Bytecode compiled once, as an installed package has it (a checkout may be read-only, or the host
# may set PYTHONDONTWRITEBYTECODE): timings would otherwise include recompiling every module.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$(mktemp -d)}
"$PY" -m compileall -q inductor_doctor >/dev/null 2>&1

doctor() { "$PY" -m inductor_doctor "$@"; }
preflight() {
  "$PY" -c 'import json, time; t = time.perf_counter(); import inductor_doctor as d
v = d.preflight("cuda:0"); print(json.dumps({**v.to_dict(), "seconds_with_import": time.perf_counter() - t}))'
}

run_tests() {
  "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/known_issues/test_on_gpu_canary_issues.py tests/known_issues/test_on_gpu_catalog.py
  "$PY" -m pytest -q -p no:cacheprovider tests/known_issues/test_rules_gpu.py tests/known_issues/test_rules_environment.py
}

# PYTHONPATH of the why parts that run a torch made wrong in one place (tests/data/why/broken_torch)
broken="$PWD/tests/data/why/broken_torch:$PWD${PYTHONPATH:+:$PYTHONPATH}"

run_parts() {
  local name
  for name in "$@"; do
    case $name in
      tests) part gpu-tests run_tests ;;
      check)
        part check-no-cache doctor check --no-cache -q --format json --output "$OUT/check.json"
        part check-repeated doctor check -q
        cp "$OUT/check-repeated.txt" "$OUT/check.txt" ;;
      preflight)
        part preflight-first preflight
        part preflight-second preflight ;;
      report)
        part report doctor report --static -q
        part fix doctor fix -q ;;
      states) part gpu-states bash tests/gpu_states.sh "$PY" ;;
      suggest)  # this host's GPUs and driver, probed (an H100, sm_90): the newest build its driver runs
        part suggest doctor plan --suggest
        part suggest-json doctor plan --suggest --format json --output "$OUT/suggest.json"
        part suggest-tests "$PY" -m pytest -q -p no:cacheprovider tests/commands/test_plan_suggest.py -m "not slow" ;;
      cross)  # this GPU named by --gpu with the GPU hidden (a docker build): the same verdicts as native
        SM="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')"
        DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1 | tr -d ' ')
        part cross-native doctor check --no-cache -q --format json --output "$OUT/cross-native.json"
        part cross-target env CUDA_VISIBLE_DEVICES= "$PY" -m inductor_doctor check --static --no-cache -q \
          --gpu "$SM" --driver "$DRIVER" --format json --output "$OUT/cross-target.json"
        part cross-target-text env CUDA_VISIBLE_DEVICES= "$PY" -m inductor_doctor check --static -q --gpu "$SM" \
          --gpu sm_80 --gpu sm_120 --driver "$DRIVER"
        part cross-tests "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/known_issues/test_on_gpu_cross_target.py ;;
      atfailure) run_parts why-programs run-ok why-bisect why-compare why-lowering why-shm ;;
      why-programs)  # the CUDA programs of the parts below (run and why: Triton kernels, fresh caches)
        cat >"$OUT/cuda_ok.py" <<'PYEOF'
import torch
f = torch.compile(lambda x: (x.sin() + 1).cos())
print(f(torch.randn(1024, device="cuda")).sum().item())
PYEOF
        cat >"$OUT/cuda_lowering_bug.py" <<'PYEOF'
import torch
from torch._inductor import lowering
def wrong(*args, **kwargs):
    raise NotImplementedError("a lowering Inductor gets wrong")
lowering.lowerings[torch.ops.aten.sin.default] = wrong
f = torch.compile(lambda x: x.sin() + 1)
print(f(torch.randn(1024, device="cuda")).sum().item())
PYEOF
        cat >"$OUT/cuda_silu.py" <<'PYEOF'
import os
import torch
torch.manual_seed(0)
out = torch.compile(lambda x: torch.nn.functional.silu(x) * 2)(torch.randn(4096, device="cuda"))
if os.environ.get("INDUCTOR_DOCTOR_WHY_OUTPUT"):
    torch.save(out, os.environ["INDUCTOR_DOCTOR_WHY_OUTPUT"])
PYEOF
        ;;
      run-ok) part run-cuda-ok doctor run -- "$PY" "$OUT/cuda_ok.py" ;;
      why-bisect)
        # The compiler bisector on CUDA (Triton kernels, CUDA graphs among the subsystems it passes
        # over), on a torch made wrong in one place (tests/data/why/broken_torch). Expected, as on CPU
        # (tests/commands/test_why_handoff.py): why-cuda-bisect.json's conclusion.bisect is inductor /
        # lowerings / aten.sin.default (the first node: #0), confirmed, with a repro path in conclusion.repro; and
        # why-cuda-compare.json's is aot_eager_decomp_partition / decomposition / #0 / aten.silu.default,
        # its baseline an inductor_doctor.OutputMismatch. Nothing under the default Inductor cache's
        # bisect/ afterwards (the last line of each part lists it). The bisect part has an Inductor and a
        # Triton cache of its own: run-ok compiled the same program into the default ones, and torch's
        # cache key cannot see a bug planted from a sitecustomize, so the FX graph cache would serve the
        # graph compiled before and the program would pass (the fifth pass's "did not fire").
        part why-cuda-bisect sh -c 'export TORCHINDUCTOR_CACHE_DIR="$3/bisect-cache/inductor" \
          TRITON_CACHE_DIR="$3/bisect-cache/triton"; env PYTHONPATH="$1" WHY_TEST_BREAK=lowering "$2" \
          -m inductor_doctor why --format json --output "$3/why-cuda-bisect.json" -- "$2" "$3/cuda_ok.py"; \
          ls -d "$TORCHINDUCTOR_CACHE_DIR/bisect" 2>&1' sh "$broken" "$PY" "$OUT" ;;
      why-compare)
        part why-cuda-compare sh -c 'env PYTHONPATH="$1" WHY_TEST_BREAK=decomposition "$2" -m inductor_doctor \
          why --compare --format json --output "$3/why-cuda-compare.json" -- "$2" "$3/cuda_silu.py"; \
          ls -d "${TMPDIR:-/tmp}/torchinductor_$(id -un)/bisect" 2>&1' sh "$broken" "$PY" "$OUT" ;;
      why-lowering)
        part why-cuda-lowering doctor why --all -- "$PY" "$OUT/cuda_lowering_bug.py"
        part why-cuda-lowering-json doctor why -q --format json --output "$OUT/why-cuda.json" \
          -- "$PY" "$OUT/cuda_lowering_bug.py" ;;
      why-shm)
        # A read-only /dev/shm (a private mount namespace; root): the compile workers' pool cannot make
        # its semaphores. Expected: torch <= 2.13 with the sidecar pool never notices (the program
        # passes, why says so, exit 2); torch >= 2.14 fails ("Attempting to use a closed pool") and
        # the pool forked in-process (TORCHINDUCTOR_WORKER_START=fork) fails with OSError 30 on any
        # torch from 2.4 (not 2.6): there why must conclude that compile workers off flips it, with
        # `export TORCHINDUCTOR_COMPILE_THREADS=1` proved.
        if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
          shm() { unshare -m --propagation private sh -c \
            'mount -t tmpfs -o ro,size=1m tmpfs /dev/shm && exec "$@"' sh "$@"; }
          part shm-semaphore shm "$PY" -c "import multiprocessing; multiprocessing.Lock()"
          part why-cuda-shm shm "$PY" -m inductor_doctor why --format json --output "$OUT/why-shm.json" \
            -- "$PY" "$OUT/cuda_ok.py"
          part why-cuda-shm-fork shm env TORCHINDUCTOR_WORKER_START=fork "$PY" -m inductor_doctor why \
            --format json --output "$OUT/why-shm-fork.json" -- "$PY" "$OUT/cuda_ok.py"
          part run-cuda-shm-fork shm env TORCHINDUCTOR_WORKER_START=fork "$PY" -m inductor_doctor run \
            -- "$PY" "$OUT/cuda_ok.py"
        else
          echo "no private mount namespace here (not root, or no unshare): the read-only /dev/shm runs are skipped" \
            | tee "$OUT/why-cuda-shm.txt"
        fi ;;
      bench)  # the doctor as a user installs it: from .whl/doctor/ where this host has no package index
        part bench-speed "$PY" bench/bench_speed.py --runs 3 ${DOCTOR_WHEELS:+--wheels "$DOCTOR_WHEELS"} ;;
      *) echo "unknown part $name" >&2; exit 2 ;;
    esac
  done
}

# shellcheck disable=SC2048,SC2086 # the default list is split into its parts
run_parts ${*:-tests check preflight report states suggest cross}
