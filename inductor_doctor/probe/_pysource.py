"""What a Python source defines and imports, read with `ast` and never run: the names a module
makes importable (`from <module> import X` finds them), the knobs a torch config module defines, and
the Triton names a package imports. Shared by the probe (the installed packages) and
`tools/release_audit.py sources` (every release's files), so that both read a source the same way.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple


def _targets(node: ast.AST) -> Iterable[str]:
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Name):
                yield t.id
            elif isinstance(t, ast.Tuple):
                yield from (e.id for e in t.elts if isinstance(e, ast.Name))
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id


def _alias(node: ast.AST) -> Optional[str]:
    """`Config(alias="torch._dynamo.config.recompile_limit")` -> the name it stands for."""
    value = getattr(node, "value", None)
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "Config":
        for kw in value.keywords:
            if kw.arg == "alias" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value
    return None


def _body(nodes: List[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements at this level, looking into `if`/`try` blocks (config files branch on fbcode)."""
    for node in nodes:
        if isinstance(node, ast.If):
            yield from _body(node.body)
            yield from _body(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _body(node.body)
            for h in node.handlers:
                yield from _body(h.body)
            yield from _body(node.orelse)
        else:
            yield node


def config_names(text: str, defaults: Dict[str, Any] = None) -> Tuple[Set[str], Dict[str, str]]:
    """(the knobs a config module defines, {knob: the name it is an alias of}); `defaults` gets the
    literal value of each knob it names as a key."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"not Python: {exc}") from None
    names: Set[str] = set()
    aliases: Dict[str, str] = {}

    def visit(nodes: List[ast.stmt], prefix: str) -> None:
        for node in _body(nodes):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{prefix}{node.name}.")
                continue
            for name in _targets(node):
                if not name.startswith("_"):
                    names.add(prefix + name)
                    target = _alias(node)
                    if target:
                        aliases[prefix + name] = target
                    if defaults is not None and prefix + name in defaults:
                        try:
                            defaults[prefix + name] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
                        except (ValueError, TypeError, SyntaxError):
                            defaults[prefix + name] = "(not a literal)"

    visit(tree.body, "")
    return names, aliases


def module_names(text: str) -> Set[str]:
    """What `from <module> import X` finds: names assigned, defined and imported at its top level; "*"
    among them when a star import adds names no list here can say."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"not Python: {exc}") from None
    out: Set[str] = set()
    for node in _body(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                # A star import makes what it re-exports importable: "*" says the set is open.
                out.add("*" if a.name == "*" else a.asname or a.name.split(".")[0])
        else:
            out.update(_targets(node))
    return out




def imports_from(text: str, root: str) -> List[Tuple[str, Optional[str], int]]:
    """`(module, name or None, line)` for each import of `root` or its submodules at any level of a
    source: `from triton.language.extra import libdevice` -> ("triton.language.extra", "libdevice");
    `import triton.ops` -> ("triton.ops", None). A file that is not Python gives nothing."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: List[Tuple[str, Optional[str], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == root or node.module.startswith(root + ".")):
            out.extend((node.module, a.name, node.lineno) for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            out.extend((a.name, None, node.lineno) for a in node.names if a.name.startswith(root + "."))
    return out


def ptx_maps(text: str, cuda: str) -> Optional[bool]:
    """Whether Triton's `ptx_get_version` (triton/backends/nvidia/compiler.py) maps the CUDA release
    `cuda` ("13.0") to a PTX ISA (True) or raises "Triton only support CUDA 10.0 or higher" (False),
    by walking its `if major == N` / `if minor < N` branches with `ast`, never running it; None where
    there is no such function or it has another shape."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "ptx_get_version"), None)
    if fn is None:
        return None
    try:
        major, minor = (int(x) for x in cuda.split(".")[:2])
    except ValueError:
        return None
    values = {"major": major, "minor": minor}
    ops = {ast.Eq: lambda a, b: a == b, ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
           ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.NotEq: lambda a, b: a != b}

    def test(node: ast.AST) -> Optional[bool]:
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in values
                and len(node.ops) == 1 and type(node.ops[0]) in ops
                and isinstance(node.comparators[0], ast.Constant)):
            return bool(ops[type(node.ops[0])](values[node.left.id], node.comparators[0].value))
        return None

    def walk(body: List[ast.stmt]) -> Optional[bool]:
        for node in body:
            if isinstance(node, ast.Return):
                return True
            if isinstance(node, ast.Raise):
                return False
            if isinstance(node, ast.If):
                taken = test(node.test)
                if taken is None:
                    return None
                found = walk(node.body if taken else node.orelse)
                if found is not None:
                    return found
        return None

    return walk(fn.body)
