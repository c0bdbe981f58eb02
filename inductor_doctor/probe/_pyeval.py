"""Python source of an installed release, parsed once per file version without importing it, and
the little evaluation the doctor does on it (what `os.environ.get("X", "1") == "1"` gives for a value
of X). Shared by the probes that read what a release does with a setting (compile_settings,
cache_key, remote_caches); what a source defines and imports is `_pysource.py`'s.
"""

from __future__ import annotations

import ast
import os
from typing import Any, Dict, Optional, Tuple

_TREES: Dict[Tuple[str, int], Optional[ast.AST]] = {}


def tree(path: str) -> Optional[ast.AST]:
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns)
        if key not in _TREES:
            with open(path, encoding="utf-8", errors="replace") as f:
                _TREES[key] = ast.parse(f.read())
        return _TREES[key]
    except (OSError, SyntaxError, ValueError):
        return None


def constant(node: Optional[ast.AST]) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def apply(parent: ast.AST, child: ast.AST, value: Any) -> Tuple[bool, Any]:
    """(understood, the value one level up) of what `parent` does with `child`'s value."""
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is child:
        fn = getattr(parent.func, "id", "")
        if fn == "bool":
            return True, bool(value)
        if fn == "int":
            try:
                return True, int(value or 0)
            except (TypeError, ValueError):
                return True, True  # torch raises at import: not a silent bypass, but set
    if isinstance(parent, ast.Attribute) and parent.value is child and parent.attr in ("lower", "strip"):
        return True, getattr(str(value), parent.attr)()
    if isinstance(parent, ast.Call) and parent.func is child:
        return True, value  # `.lower()`: the method was applied one level down
    if isinstance(parent, ast.Compare) and parent.left is child and len(parent.ops) == 1:
        other = constant(parent.comparators[0])
        op = parent.ops[0]
        if isinstance(op, ast.Eq):
            return True, value == other
        if isinstance(op, ast.NotEq):
            return True, value != other
        if isinstance(op, ast.In):
            return True, other is not None and value in other
        if isinstance(op, ast.NotIn):
            return True, other is not None and value not in other
    if isinstance(parent, ast.NamedExpr):
        return True, value
    return False, value
