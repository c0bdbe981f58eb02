"""The CUDA variants PyTorch's own index serves for each torch release, read from the release tags.

PyPI serves one Linux x86_64 wheel per release (its default CUDA, whose arch list the audit reads
from the wheel). https://download.pytorch.org/whl/cuXXX serves the others (`2.7.0+cu118`,
`+cu128`, ...), and what those are built for is not on PyPI. It is in the two build scripts at the
release's tag in pytorch/pytorch:

- `.github/scripts/generate_binary_build_matrix.py`: `CUDA_ARCHES`, the CUDA releases the release
  built wheels for (one index per entry), and `CUDA_ARCHES_FULL_VERSION`, each one's toolkit;
- `.ci/manywheel/build_cuda.sh`: the `case ${CUDA_VERSION}` that sets `TORCH_CUDA_ARCH_LIST` per
  CUDA release (`7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX`: a cubin per entry, PTX where `+PTX`).

Both are read with `git show vX.Y.Z:PATH` from a clone that has the release tags. A release whose
tag or files are missing, or whose arch list is set in a branch the reader cannot follow (an `if`
inside the case), is recorded as unread with the reason: no value is guessed, and `plan` keeps its
variants inconclusive.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = "pytorch/pytorch"
MATRIX = ".github/scripts/generate_binary_build_matrix.py"
BUILD_CUDA = ".ci/manywheel/build_cuda.sh"
INDEX_URL = "https://download.pytorch.org/whl/{tag}"

_ASSIGN = re.compile(r'^\s*(?:export\s+)?TORCH_CUDA_ARCH_LIST="?([^"\s#]*)"?')
_CASE = re.compile(r"^\s*case\s+\"?\$\{?CUDA_VERSION\}?\"?\s+in\b")
_BRANCH = re.compile(r"^\s*([0-9.|*\s]+)\)\s*(.*)$")


def git_show(git_dir: Path, ref: str, path: str) -> Optional[str]:
    """The file at `ref`, or None where the ref or the file is not there."""
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{ref}:{path}"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout if proc.returncode == 0 else None


def tag_commit(git_dir: Path, tag: str) -> Optional[str]:
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", f"{tag}^{{commit}}"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else None


def matrix_facts(text: str) -> Tuple[Optional[List[str]], Dict[str, str]]:
    """`CUDA_ARCHES` and `CUDA_ARCHES_FULL_VERSION`, as literals of the script (never run)."""
    arches: Optional[List[str]] = None
    full: Dict[str, str] = {}
    for node in ast.parse(text).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if node.value is None:
            continue
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            continue
        if "CUDA_ARCHES" in names and isinstance(value, list):
            arches = [str(v) for v in value]
        if "CUDA_ARCHES_FULL_VERSION" in names and isinstance(value, dict):
            full = {str(k): str(v) for k, v in value.items()}
    return arches, full


def arch_lists(text: str) -> Dict[str, Any]:
    """CUDA release → its `TORCH_CUDA_ARCH_LIST` in build_cuda.sh, or a string saying why not.

    The value set before the case is the base; each branch's assignments apply in order
    (`${TORCH_CUDA_ARCH_LIST}` expands to the value so far). An assignment under an `if` inside a
    branch depends on something else than the CUDA release: that release is not followed.
    """
    base: Optional[str] = None
    out: Dict[str, Any] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines) and not _CASE.match(lines[i]):
        m = _ASSIGN.match(lines[i])
        if m and not lines[i].startswith((" ", "\t")):
            base = m.group(1)
        i += 1
    if i == len(lines):
        return {}
    i += 1
    current: List[str] = []
    value: Optional[str] = base
    depth = 0
    conditional = False

    def close() -> None:
        for version in current:
            if conditional:
                out[version] = "set under an if inside its case branch"
            elif value is None:
                out[version] = "no TORCH_CUDA_ARCH_LIST set"
            else:
                out[version] = value

    while i < len(lines):
        line = lines[i].split("#", 1)[0] if not lines[i].lstrip().startswith("#") else ""
        stripped = line.strip()
        i += 1
        if stripped == "esac":
            break
        m = _BRANCH.match(line) if depth == 0 and not current else None
        if m:
            current = [v.strip() for v in m.group(1).split("|") if re.fullmatch(r"\d+\.\d+", v.strip())]
            value, depth, conditional = base, 0, False
            stripped = m.group(2).strip()
            if not stripped:
                continue
        if re.match(r"^(if|case)\b", stripped):
            depth += 1
        elif re.match(r"^(fi|esac)\b", stripped) or stripped.endswith("; fi"):
            depth = max(0, depth - 1)
        a = _ASSIGN.match(stripped)
        if a and current:
            if depth > 0:
                conditional = True
            else:
                value = a.group(1).replace("${TORCH_CUDA_ARCH_LIST}", value or "").replace(
                    "$TORCH_CUDA_ARCH_LIST", value or "").strip(";")
        if stripped.endswith(";;"):
            close()
            current = []
    return out


def parse_arch_list(arch_list: str) -> Tuple[List[str], List[str]]:
    """`7.0;9.0;12.0+PTX` → (cubins sm_70 sm_90 sm_120, PTX compute_120), as torch names them."""
    cubins: List[str] = []
    ptx: List[str] = []
    for item in (a.strip() for a in arch_list.replace(" ", ";").split(";")):
        if not item:
            continue
        number = item.split("+")[0].replace(".", "")
        cubins.append(f"sm_{number}")
        if item.endswith("+PTX"):
            ptx.append(f"compute_{number}")
    return cubins, ptx


def release_variants(git_dir: Optional[Path], version: str) -> Dict[str, Any]:
    """What the tag `v{version}` says of the release's CUDA variants on Linux x86_64."""
    tag = f"v{version}"
    if git_dir is None:
        return {"read": False, "why": "no pytorch/pytorch clone with release tags was given "
                "(release_audit.py variants --pytorch-git DIR)"}
    commit = tag_commit(git_dir, tag)
    if commit is None:
        return {"read": False, "why": f"the clone has no tag {tag}"}
    where = f"{REPO} {tag} ({commit[:12]})"
    matrix = git_show(git_dir, tag, MATRIX)
    script = git_show(git_dir, tag, BUILD_CUDA)
    if matrix is None or script is None:
        missing = MATRIX if matrix is None else BUILD_CUDA
        return {"read": False, "why": f"{missing} is not at {tag}", "commit": commit}
    arches, full = matrix_facts(matrix)
    if not arches:
        return {"read": False, "why": f"no CUDA_ARCHES list in {MATRIX} at {tag}", "commit": commit}
    lists = arch_lists(script)
    variants: Dict[str, Any] = {}
    unread: Dict[str, str] = {}
    for cuda in arches:
        if not re.fullmatch(r"\d+\.\d+", cuda):
            continue
        key = "cu" + cuda.replace(".", "")
        arch_list = lists.get(cuda)
        if arch_list is None or not re.fullmatch(r"[0-9.;]+(?:\+PTX)?(?:;[0-9.]+(?:\+PTX)?)*", arch_list):
            unread[key] = arch_list or f"no case for {cuda} in {BUILD_CUDA}"
            continue
        cubins, ptx = parse_arch_list(arch_list)
        variants[key] = {
            "cuda": cuda, "cuda_full": full.get(cuda), "arch_list": arch_list, "archs": cubins,
            "ptx": ptx, "index_url": INDEX_URL.format(tag=key),
            "source": {"variant": f"{where} {MATRIX} CUDA_ARCHES",
                       "archs": f"{where} {BUILD_CUDA} case {cuda}",
                       "cuda_full": f"{where} {MATRIX} CUDA_ARCHES_FULL_VERSION" if cuda in full else None},
        }
    return {"read": True, "commit": commit, "tag": tag, "variants": variants, "unread": unread}


def add_index_variants(snap: Dict[str, Any], git_dir: Optional[Path]) -> Tuple[int, int]:
    """Write each torch release's `index_variants` into the snapshot: (read, unread) releases."""
    read = unread = 0
    for version, entry in snap["torch"].items():
        facts = release_variants(git_dir, version)
        entry["index_variants"] = facts
        if facts["read"]:
            read += 1
        else:
            unread += 1
    return read, unread
