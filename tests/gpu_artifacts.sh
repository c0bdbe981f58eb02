#!/usr/bin/env bash
# check --artifact on a GPU host: CUDA AOTInductor packages built here with this torch, read, loaded
# and checked here, and planned against a GPU they have no code for. Every part writes PART.txt
# under $OUT and one timing line to $OUT/times.txt.
#   OUT=dir PYTHON=python bash tests/gpu_artifacts.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export INDUCTOR_DOCTOR_CACHE_DIR="$OUT/doctor-cache"
export TORCHINDUCTOR_CACHE_DIR="$OUT/inductor-cache"

part() {  # part NAME COMMAND...: run it, keep its output, time it
  local name=$1 start rc
  shift
  start=$EPOCHREALTIME
  "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  awk -v n="$name" -v rc="$rc" -v s="$start" -v e="$EPOCHREALTIME" \
    'BEGIN { printf "%-22s rc=%-3s %8.2f s\n", n, rc, e - s }' | tee -a "$OUT/times.txt"
}

# 1. Two CUDA packages: cubins as files (the default), and one fatbin per kernel with PTX embedded in
#    the .so (aot_inductor.emit_multi_arch_kernel); plus one whose exported program (and so its
#    example inputs) is packaged with it, for the canary to run.
build() {
  "$PY" - "$OUT" <<'PY'
import os, sys, torch
out = sys.argv[1]
print("torch", torch.__version__, "gpu", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
class M(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.lin = torch.nn.Linear(64, 32)
    def forward(self, x):
        return torch.relu(self.lin(x)) * 2 + torch.sin(x[:, :32])
m = M().cuda().eval()
ex = (torch.randn(8, 64, device="cuda"),)
ep = torch.export.export(m, ex)
torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "cuda.pt2"))
try:
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "cuda_multi.pt2"),
                                             inductor_configs={"aot_inductor.emit_multi_arch_kernel": True})
except Exception as exc:
    print("multi-arch package not built:", type(exc).__name__, exc)
try:
    from torch.export.pt2_archive._package import package_pt2
    files = torch._inductor.aot_compile(ep.module(), ex, options={"aot_inductor.package": True})
    package_pt2(os.path.join(out, "cuda_with_inputs.pt2"), exported_programs={"model": ep},
                aoti_files={"model": files})
except Exception as exc:
    print("package with example inputs not built:", type(exc).__name__, exc)
for name in sorted(os.listdir(out)):
    if name.endswith(".pt2"):
        print("built", name, os.path.getsize(os.path.join(out, name)))
PY
}
part build build

# 2. What the doctor reads from each, and the real load and run of each with this torch.
part read "$PY" -c '
import json, sys, glob
from inductor_doctor.artifact import read_artifact
for p in sorted(glob.glob(sys.argv[1] + "/*.pt2")):
    a = read_artifact(p)
    print(p, json.dumps({"device": a.device, "cc": a.compute_capability, "cubins": a.cuda_archs(),
                         "ptx": a.ptx_archs(), "objects": [(o.name.rsplit("/", 1)[-1], o.kind, o.cuda_archs,
                         o.ptx_archs, o.glibcxx, len(o.torch_symbols), o.error) for o in a.objects],
                         "read_s": round(a.read_s, 3), "error": a.error}))
' "$OUT"
part load "$PY" -c '
import sys, glob, torch
for p in sorted(glob.glob(sys.argv[1] + "/*.pt2")):
    try:
        m = torch._inductor.aoti_load_package(p)
        print(p, "loaded; ran:", tuple(m(torch.randn(8, 64, device="cuda")).shape))
    except Exception as exc:
        print(p, "FAILED:", type(exc).__name__, str(exc)[:500])
' "$OUT"

# 3. The doctor here: each package on this GPU (ok, earned by the canary's load).
for p in "$OUT"/*.pt2; do
  n=$(basename "$p" .pt2)
  part "check-$n" "$PY" -m inductor_doctor check --only artifact-gpu-arch-missing --no-cache --artifact "$p"
  part "check-$n-json" "$PY" -m inductor_doctor check --only artifact-gpu-arch-missing --artifact "$p" --format json
done

# 4. Planned against a GPU with no code in the package (affected), and against this one (ok).
CC=$("$PY" -c 'import torch; a, b = torch.cuda.get_device_capability(0); print(f"sm_{a}{b}")')
OTHER=$([ "$CC" = "sm_80" ] && echo sm_90 || echo sm_80)
for p in "$OUT"/*.pt2; do
  n=$(basename "$p" .pt2)
  part "plan-$n-$OTHER" "$PY" -m inductor_doctor plan --artifact "$p" --gpu "$OTHER"
  part "plan-$n-$CC" "$PY" -m inductor_doctor plan --artifact "$p" --gpu "$CC"
done
echo "outputs in $OUT"
