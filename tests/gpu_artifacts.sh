#!/usr/bin/env bash
# check --artifact on a GPU host: CUDA AOTInductor packages built here with this torch, read, loaded
# and checked here, and planned against a GPU they have no code for; then packages whose kernels are
# for another GPU (part 5), loaded here for real. Every part writes PART.txt under $OUT and one
# timing line to $OUT/times.txt.
#   OUT=dir PYTHON=python bash tests/gpu_artifacts.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
# shellcheck source=tests/gpu_lib.sh
. tests/gpu_lib.sh
export TORCHINDUCTOR_CACHE_DIR="$OUT/inductor-cache"

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
# 5. Packages whose kernels cannot run on this GPU, as if built on a GPU of another architecture (an
#    A100, sm_80), and their real load failure here.
#    a) The package of part 1 with each of its Triton cubins assembled again for $OTHER: the same PTX
#       (the Triton cache's, found by the cubin's bytes) with its `.target` set to $OTHER, by Triton's
#       own ptxas. Loading works (AOTInductor loads kernels on first use); running fails with "no
#       kernel image is available for execution on the device" (CUDA_ERROR_NO_BINARY_FOR_GPU).
#    b) A compile with Triton told to target $OTHER (TRITON_OVERRIDE_ARCH, Triton's knob): where the
#       compile itself runs its kernels on this GPU it fails with the same error; the part records
#       which happened, and checks the package when one was made.
OTHER_NUM=${OTHER#sm_}
retarget() {
  "$PY" - "$OUT" "$OTHER_NUM" <<'PY'
import glob, hashlib, os, re, shutil, subprocess, sys, zipfile
import triton
out, sm = sys.argv[1], sys.argv[2]
bins = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
# Every ptxas there is; the newest release first: Triton 3.6 writes PTX .version 9.0 (CUDA 13), which
# its bundled CUDA 12.8 ptxas refuses, while its ptxas-blackwell or a CUDA 13 wheel's ptxas takes it.
site = os.path.dirname(os.path.dirname(triton.__file__))
found = [os.path.join(bins, n) for n in ("ptxas-blackwell", "ptxas")]
found += glob.glob(os.path.join(site, "nvidia", "*", "bin", "ptxas")) + [shutil.which("ptxas") or "",
                                                                          "/usr/local/cuda/bin/ptxas"]
def release(path):
    out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
found = sorted({p for p in found if p and os.access(p, os.X_OK)}, key=release, reverse=True)
ptxas = found[0]
print("ptxas", ptxas, "release", release(ptxas), "of", [(p, release(p)) for p in found])


def assemble(tmp):
    """ptxas on the retargeted PTX; a PTX ISA newer than this ptxas knows is lowered to its own (the
    kernels use nothing of the newer ISA), as the error message names it."""
    for _ in range(2):
        done = subprocess.run([ptxas, "-arch=sm_" + sm, tmp, "-o", tmp + ".cubin"], capture_output=True,
                              text=True)
        if done.returncode == 0:
            return
        print(done.stderr.strip())
        m = re.search(r"Unsupported \.version (\S+); current version is '(\S+)'", done.stderr)
        if not m:
            break
        text = open(tmp).read()
        open(tmp, "w").write(re.sub(r"^\.version\s+" + re.escape(m.group(1)), ".version " + m.group(2), text,
                                    flags=re.M))
    sys.exit("ptxas could not assemble the kernel for sm_" + sm)
ptx_of = {}
roots = [os.path.join(out, "inductor-cache"), os.environ.get("TRITON_CACHE_DIR") or "",
         os.path.expanduser("~/.triton/cache")]
for root in filter(None, roots):
    for cubin in glob.glob(os.path.join(root, "**", "*.cubin"), recursive=True):
        ptx = cubin[: -len(".cubin")] + ".ptx"
        if os.path.exists(ptx):
            ptx_of[hashlib.sha256(open(cubin, "rb").read()).hexdigest()] = ptx
print(len(ptx_of), "Triton kernels with PTX in the caches")
for name in ("cuda", "cuda_with_inputs"):
    src, dst = os.path.join(out, name + ".pt2"), os.path.join(out, "sm%s_%s.pt2" % (sm, name))
    if not os.path.exists(src):
        continue
    n = 0
    partial = dst + ".part"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith(".cubin"):
                ptx = ptx_of.get(hashlib.sha256(data).hexdigest())
                if ptx is None:
                    sys.exit("no PTX in the Triton caches for " + info.filename)
                text = open(ptx).read()
                print(info.filename, re.search(r"^\.target\s+\S+", text, re.M).group(0), "->", "sm_" + sm)
                tmp = os.path.join(out, "retarget.ptx")
                open(tmp, "w").write(re.sub(r"^\.target\s+sm_\w+", ".target sm_" + sm, text, flags=re.M))
                assemble(tmp)
                data = open(tmp + ".cubin", "rb").read()
                n += 1
            zout.writestr(info, data)
    os.replace(partial, dst)  # never a half-written package for the parts after this one
    print("built", dst, "with", n, "cubins for sm_" + sm)
PY
}
part retarget retarget
override() {
  TRITON_OVERRIDE_ARCH="sm$OTHER_NUM" TORCHINDUCTOR_CACHE_DIR="$OUT/inductor-cache-override" \
    TRITON_CACHE_DIR="$OUT/triton-cache-override" "$PY" - "$OUT" "$OTHER_NUM" <<'PY'
import os, sys, torch
out, sm = sys.argv[1], sys.argv[2]
class M(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.lin = torch.nn.Linear(64, 32)
    def forward(self, x):
        return torch.relu(self.lin(x)) * 2 + torch.sin(x[:, :32])
m = M().cuda().eval()
ep = torch.export.export(m, (torch.randn(8, 64, device="cuda"),))
try:
    torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "sm%s_override.pt2" % sm))
    print("built sm%s_override.pt2 with TRITON_OVERRIDE_ARCH=sm%s" % (sm, sm))
except Exception as exc:
    print("TRITON_OVERRIDE_ARCH=sm%s: the compile itself failed here: %s: %s" % (sm, type(exc).__name__, str(exc)[:2000]))
PY
}
part build-override override
part load-other "$PY" -c '
import sys, glob, torch
for p in sorted(glob.glob(sys.argv[1] + "/sm" + sys.argv[2] + "_*.pt2")):
    try:
        m = torch._inductor.aoti_load_package(p)
        print(p, "loaded")
        print(p, "ran:", tuple(m(torch.randn(8, 64, device="cuda")).shape))
        torch.cuda.synchronize()
    except Exception as exc:
        print(p, "FAILED:", type(exc).__name__, str(exc)[:800])
' "$OUT" "$OTHER_NUM"
part read-other "$PY" -c '
import json, sys, glob
from inductor_doctor.artifact import read_artifact
for p in sorted(glob.glob(sys.argv[1] + "/sm" + sys.argv[2] + "_*.pt2")):
    a = read_artifact(p)
    print(p, json.dumps({"cc": a.compute_capability, "cubins": a.cuda_archs(), "ptx": a.ptx_archs(),
                         "read_s": round(a.read_s, 3), "error": a.error}))
' "$OUT" "$OTHER_NUM"
for p in "$OUT"/sm"$OTHER_NUM"_*.pt2; do
  [ -e "$p" ] || continue
  n=$(basename "$p" .pt2)
  part "check-$n" "$PY" -m inductor_doctor check --only artifact-gpu-arch-missing --no-cache --artifact "$p"
  part "check-$n-json" "$PY" -m inductor_doctor check --only artifact-gpu-arch-missing --no-cache --artifact "$p" \
    --format json
  part "check-$n-again" "$PY" -m inductor_doctor check --only artifact-gpu-arch-missing --artifact "$p" --format json
  part "plan-$n-$OTHER" "$PY" -m inductor_doctor plan --artifact "$p" --gpu "$OTHER"
  part "plan-$n-$CC" "$PY" -m inductor_doctor plan --artifact "$p" --gpu "$CC"
done
echo "outputs in $OUT"
