"""Builds the test artifacts with the torch running it: an AOTInductor package and a cache blob.

Usage: python build.py OUT_DIR   (writes OUT_DIR/model.pt2, OUT_DIR/with_inputs.pt2 (the exported program
and its example inputs packaged beside the compiled model, where this torch can), OUT_DIR/cache.bin,
OUT_DIR/inductor-cache/)
"""

import os
import sys

out = os.path.abspath(sys.argv[1])
os.makedirs(out, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(out, "inductor-cache")
import torch  # noqa: E402


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


model = Model().eval()
example = (torch.randn(4, 16),)
ep = torch.export.export(model, example)
torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, "model.pt2"))
try:
    from torch.export.pt2_archive._package import package_pt2

    files = torch._inductor.aot_compile(ep.module(), example, options={"aot_inductor.package": True})
    package_pt2(os.path.join(out, "with_inputs.pt2"), exported_programs={"model": ep},
                aoti_files={"model": files})
except (ImportError, AttributeError, TypeError) as exc:
    print("with_inputs.pt2 not built:", type(exc).__name__, exc)


@torch.compile
def f(x):
    return torch.sin(x) * 2 + 1


f(torch.randn(8))
data, _info = torch.compiler.save_cache_artifacts()
with open(os.path.join(out, "cache.bin"), "wb") as fh:
    fh.write(data)
print("built", out, torch.__version__)
