"""Builds the test artifacts with the torch running it: an AOTInductor package and a cache blob.

Usage: python build.py OUT_DIR   (writes OUT_DIR/model.pt2, OUT_DIR/cache.bin, OUT_DIR/inductor-cache/)
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


@torch.compile
def f(x):
    return torch.sin(x) * 2 + 1


f(torch.randn(8))
data, _info = torch.compiler.save_cache_artifacts()
with open(os.path.join(out, "cache.bin"), "wb") as fh:
    fh.write(data)
print("built", out, torch.__version__)
