"""A torch with one bug put in on purpose, for `why`'s tests of the hand-off to the compiler bisector.

On PYTHONPATH, this makes every Python process of the test (the program, the bisector, each of its
steps, the minifier) run a torch whose Inductor is wrong in one place, chosen by WHY_TEST_BREAK, as a
torch with that bug would be; torch itself is not changed, and the doctor's own process, which never
imports torch, is left alone:

* `lowering`: Inductor's lowering of aten.sin.default raises (a crash in the lowering);
* `pass`: the post-grad pass `reorder_for_locality` raises (a crash in a graph pass);
* `decomposition`: Inductor's decomposition of aten.silu.default computes a wrong value (silu * 1.5:
  the program exits 0 with a wrong result, `why --compare`'s case).

The patch is applied when the module that holds the broken piece is imported (an import hook), so
nothing is imported earlier than torch itself would.
"""

import importlib.abc
import importlib.util
import os
import sys

BREAK = os.environ.get("WHY_TEST_BREAK", "")


def _lowering(module):
    import torch

    def wrong(*args, **kwargs):
        raise NotImplementedError("a lowering made wrong on purpose")

    module.lowerings[torch.ops.aten.sin.default] = wrong


def _pass(module):
    def reorder_for_locality(graph):
        raise RuntimeError("a post-grad pass made to raise on purpose")

    module.reorder_for_locality = reorder_for_locality


def _decomposition(module):
    import torch

    def silu(x):
        return x * torch.sigmoid(x) * 1.5

    module.decompositions[torch.ops.aten.silu.default] = silu


PATCHES = {
    "lowering": ("torch._inductor.lowering", _lowering),
    "pass": ("torch._inductor.fx_passes.post_grad", _pass),
    "decomposition": ("torch._inductor.decomposition", _decomposition),
}


class _After(importlib.abc.MetaPathFinder):
    def __init__(self, name, patch):
        self.name, self.patch = name, patch

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            self.patch(module)

        spec.loader.exec_module = exec_module
        return spec


if BREAK in PATCHES:
    sys.meta_path.insert(0, _After(*PATCHES[BREAK]))
