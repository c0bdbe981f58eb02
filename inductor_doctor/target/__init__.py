"""Everything the target interpreter runs, as real files: nothing here is imported by the doctor.

The target is the Python being diagnosed (this one, another venv, another version). The doctor never
imports torch itself; it runs these scripts with the target instead, each printing one JSON line
after a marker. They need only the standard library (3.8 syntax) plus, for canaries, torch.

- `describe.py`: what the target says about itself (stdlib only, imports nothing it finds);
- `live.py`: what only a live torch knows (one short `import torch`);
- `sys_path.py`: the target's import path, for the canary cache key;
- `harness.py`: runs one canary script and reports its outcome;
- `gather.py`: the `check --distributed` helper that exchanges reports over torch.distributed;
- `cross_compile.py`: the cross-target canary, the canary kernels compiled for a GPU that is not here;
- `canaries/`: the upstream reproducers, one per known issue that needs one; copyable as they are.
"""

from pathlib import Path

TARGET_DIR = Path(__file__).resolve().parent
CANARY_DIR = TARGET_DIR / "canaries"


def script(name: str) -> Path:
    """A script of this folder, by file name."""
    return TARGET_DIR / name


def canary_path(name: str) -> Path:
    """A canary script: a bare file name is one of ours, an absolute path a plugin's own."""
    return CANARY_DIR / name


def marker(name: str) -> str:
    """The `MARKER = "..."` a script prints before its JSON answer, read from the script itself."""
    import re

    text = script(name).read_text(encoding="utf-8")
    found = re.search(r'^MARKER = "([^"]+)"$', text, re.M)
    if found is None:  # pragma: no cover - a broken checkout
        raise RuntimeError(f"{name} defines no MARKER")
    return found.group(1)
