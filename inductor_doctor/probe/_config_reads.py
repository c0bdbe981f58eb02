"""Which environment variables a torch config module reads, into which config entry, and what that
entry becomes for a value: read from the installed release's source, never imported.

Inductor's FX-graph key holds `torch._inductor.config.save_config_portable()`, AOTAutograd's holds
`torch._functorch.config.save_config()`: every entry, less the release's own ignore lists
(`_save_config_ignore`, `_cache_config_ignore_prefix`). A variable changes a key where it sets such
an entry to another value. Four ways of reading a variable occur in these files, in every release
since 2.5:

* an expression evaluated at import: `max_autotune = os.environ.get("TORCHINDUCTOR_MAX_AUTOTUNE") == "1"`
  (also inside a class, `cpp.cxx`, or a function whose call is the entry's value);
* `get_tristate_env("X")`: "1" is True, "0" is False, anything else the default;
* `Config(env_name_force="X", default=...)` and `env_name_default`: "1" is True, "0" is False,
  anything else the text itself (`torch/utils/_config_module.py:_read_env_variable`);
* `"X" in os.environ`: whether it is set.

`reads(path)` lists them once per file version; `effect(read, value)` evaluates what the entry
becomes for the variable set to `value` (None: unset), or says it cannot tell.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from inductor_doctor.probe._pyeval import constant, tree

#: The functions a config file reads a variable with, its name the first argument.
READERS = ("get", "getenv", "get_env_val", "environ_get", "get_tristate_env", "_read_env_variable")
_STR_METHODS = ("lower", "upper", "strip")


@dataclass(frozen=True)
class EnvRead:
    """One variable read by a config file, the config entry it sets, and how the entry's value
    follows from the variable's: a base reading (`style`) and the operations applied to it (`ops`),
    as data, so that the reading is kept on disk and a repeated check parses nothing."""

    name: str
    entry: str  # "max_autotune", "cpp.cxx"
    line: int
    how: str  # the expression as the release writes it
    #: "get" (the text, or the reader's default), "tristate" ("1" True, "0" False, else the default),
    #: "config" (Config(env_name_*): "1" True, "0" False, else the text; unset: its default=), "in".
    style: str = "get"
    #: What is done to the reading up to the entry's value: ["eq", "1"], ["lower"], ["int"], ...;
    #: None: something the doctor does not follow.
    ops: Optional[Tuple[Tuple[Any, ...], ...]] = None
    default: Any = None  # the reader's default argument, or Config's default=
    default_known: bool = True  # the default is a constant
    unset_known: bool = True  # False: in a function with other returns, unset takes another path

    def to_dict(self) -> Dict[str, Any]:
        d = dict(self.__dict__)
        d["ops"] = [list(op) for op in self.ops] if self.ops is not None else None
        return d

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> EnvRead:
        ops = d.get("ops")
        return cls(**{**d, "ops": tuple(tuple(op) for op in ops) if ops is not None else None})


def _name_of(node: ast.AST) -> str:
    func = getattr(node, "func", None)
    if isinstance(func, ast.Attribute):
        return func.attr
    return getattr(func, "id", "") or ""


def _parents(root: ast.AST) -> Dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(root) for child in ast.iter_child_nodes(node)}


def _strings(node: Optional[ast.AST]) -> List[str]:
    value = constant(node)
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


_NOT_CONSTANT = object()
#: A default written as `A if sys.platform == "x" else B`, kept as data: {PLATFORM_DEFAULT: [op, "x", A, B]}.
PLATFORM_DEFAULT = "sys.platform"


def _literal(node: Optional[ast.AST]) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    # `"clang++" if sys.platform == "darwin" else "g++"`: a default that depends on the platform only
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
        test = node.test
        left = test.left
        is_platform = (isinstance(left, ast.Attribute) and left.attr == "platform"
                       and getattr(left.value, "id", "") == "sys")
        op = {ast.Eq: "eq", ast.NotEq: "ne"}.get(type(test.ops[0]))
        parts = [_literal(test.comparators[0]), _literal(node.body), _literal(node.orelse)]
        if is_platform and op and all(p is not _NOT_CONSTANT for p in parts):
            return {PLATFORM_DEFAULT: [op, *parts]}
    return _NOT_CONSTANT


def _entry(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> Tuple[Optional[ast.AST], List[str],
                                                                     Optional[str]]:
    """(the statement holding `node`, the config entries it sets, the function it is in, if any)."""
    stmt: Optional[ast.AST] = node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = parents.get(stmt)
    if stmt is None:
        return None, [], None
    classes: List[str] = []
    function: Optional[str] = None
    up = parents.get(stmt)
    while up is not None:
        if isinstance(up, ast.ClassDef):
            classes.insert(0, up.name)
        elif isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and function is None:
            function = up.name
        up = parents.get(up)
    if function is not None:
        return stmt, [], function
    targets: List[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    names = [".".join(classes + [t.id]) for t in targets if isinstance(t, ast.Name)]
    return stmt, names, None


def _callers(root: ast.AST, parents: Dict[ast.AST, ast.AST], function: str) -> List[str]:
    """The config entries whose value is `function()`."""
    out: List[str] = []
    for node in ast.walk(root):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == function and not value.args:
            _, names, inside = _entry(value, parents)
            if inside is None:
                out += names
    return out


def _step(parent: ast.AST, child: ast.AST) -> Optional[Tuple[Any, ...]]:
    """The operation `parent` applies to `child`'s value, as data; None: not one the doctor follows."""
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is child and len(parent.args) == 1:
        fn = getattr(parent.func, "id", "")
        if fn in ("bool", "int", "float", "str"):
            return (fn,)
    if isinstance(parent, ast.Attribute) and parent.value is child and parent.attr in _STR_METHODS:
        return (parent.attr,)
    if isinstance(parent, ast.Call) and parent.func is child and not parent.args:
        return ("call",)  # the method named one level down
    if isinstance(parent, ast.Compare) and parent.left is child and len(parent.ops) == 1:
        other = _literal(parent.comparators[0])
        op = {ast.Eq: "eq", ast.NotEq: "ne", ast.In: "in", ast.NotIn: "not in"}.get(type(parent.ops[0]))
        if op is not None and other is not _NOT_CONSTANT:
            return (op, list(other) if isinstance(other, (tuple, set, frozenset)) else other)
    if isinstance(parent, ast.NamedExpr):
        return ("same",)
    if isinstance(parent, ast.Tuple):  # `cxx = (None, os.environ.get("CXX", ...))`
        items = [None if e is child else _literal(e) for e in parent.elts]
        if not any(i is _NOT_CONSTANT for i in items):
            return ("tuple", parent.elts.index(child), items)
    return None


def reads(path: str) -> List[EnvRead]:
    """Every variable the config file at `path` reads into a config entry, in file order; kept on
    disk under the file's (path, size, mtime): parsing Inductor's config costs a good part of a
    second, which a repeated check must not pay."""
    from inductor_doctor.probe import _diskcache

    found = _diskcache.of_file("config-reads-v3", path, _read_file)
    return [EnvRead.from_dict(d) for d in found or []]


def _read_file(path: str) -> Optional[List[Dict[str, Any]]]:
    root = tree(path)
    if root is None:
        return None
    parents = _parents(root)
    out: List[EnvRead] = []
    for node in ast.walk(root):
        out += _reads_at(root, node, parents)
    out.sort(key=lambda r: (r.line, r.name, r.entry))
    return [r.to_dict() for r in out]


def _reads_at(root: ast.AST, node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> List[EnvRead]:
    found: List[Tuple[str, str, Any]] = []  # (name, style, default node or value)
    if isinstance(node, ast.Call) and node.args and _name_of(node) in READERS:
        style = "tristate" if _name_of(node) in ("get_tristate_env", "_read_env_variable") else "get"
        default = node.args[1] if len(node.args) > 1 else None
        found += [(n, style, _literal(default)) for n in _strings(node.args[0])]
    elif isinstance(node, ast.Call) and _name_of(node) == "Config":
        kws = {k.arg: k.value for k in node.keywords if k.arg}
        default = _literal(kws.get("default")) if "default" in kws else None
        for kw in ("env_name_force", "env_name_default"):
            found += [(n, "config", default) for n in _strings(kws.get(kw))]
    elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
          and getattr(node.comparators[0], "attr", None) == "environ"):
        found += [(n, "in", None) for n in _strings(node.left)]
    elif (isinstance(node, ast.Subscript) and getattr(node.value, "attr", None) == "environ"
          and isinstance(node.ctx, ast.Load)):
        found += [(n, "get", _NOT_CONSTANT) for n in _strings(node.slice)]
    out: List[EnvRead] = []
    for name, style, default in found:
        if not name.isupper():
            continue
        ops: List[Tuple[Any, ...]] = []
        top = node
        if style != "config":
            while top in parents:
                op = _step(parents[top], top)
                if op is None:
                    break
                ops.append(op)
                top = parents[top]
        stmt, entries, function = _entry(node, parents)
        how = _unparse(top)
        known = default is not _NOT_CONSTANT
        common = dict(line=node.lineno, how=how, style=style, default=default if known else None,
                      default_known=known)
        if function is not None:
            ret = parents.get(top)
            returned = isinstance(ret, ast.Return) and ret.value is top
            single = _returns(node, parents) <= 1
            for entry in _callers(root, parents, function):
                out.append(EnvRead(name, entry, ops=tuple(ops) if returned else None, unset_known=single,
                                   **common))
            continue
        value = getattr(stmt, "value", None)
        understood = top is value
        for entry in entries:
            out.append(EnvRead(name, entry, ops=tuple(ops) if understood else None, **common))
    return out


def _returns(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> int:
    """How many return statements the function holding `node` has."""
    up = parents.get(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
        up = parents.get(up)
    return sum(isinstance(n, ast.Return) for n in ast.walk(up)) if up is not None else 0


def _unparse(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - only the wording
        return ""
    return " ".join(text.split())[:160]


def _default(read: EnvRead, platform: str) -> Any:
    d = read.default
    if isinstance(d, dict) and PLATFORM_DEFAULT in d:
        op, against, then, other = d[PLATFORM_DEFAULT]
        return then if (platform == against) == (op == "eq") else other
    return d


def effect(read: EnvRead, value: Optional[str], platform: str = sys.platform) -> Tuple[bool, Any]:
    """(understood, what the config entry becomes) with the variable set to `value` (None: unset), on
    `platform` (the target's `sys.platform`). Not understood: the release computes it some way the
    doctor does not follow (a function with several returns, a value built from several variables,
    a default that is not a constant)."""
    if read.ops is None or (value is None and not read.unset_known):
        return False, None
    if read.style == "config":
        if value is None:
            return read.default_known, _default(read, platform)
        return True, True if value == "1" else False if value == "0" else value
    if read.style == "in":
        current: Any = value is not None
    elif read.style == "tristate":
        if value in ("1", "0"):
            current = value == "1"
        elif not read.default_known:
            return False, None
        else:
            current = _default(read, platform)
    elif value is not None:
        current = value
    elif not read.default_known:
        return False, None
    else:
        current = _default(read, platform)
    for op in read.ops:
        try:
            current = _apply(op, current)
        except (TypeError, ValueError):
            return False, None  # int("abc"): the release raises at import
    return True, current


def _apply(op: Sequence[Any], value: Any) -> Any:
    kind = op[0]
    if kind in ("bool", "int", "float", "str"):
        return {"bool": bool, "int": int, "float": float, "str": str}[kind](value)
    if kind in ("lower", "upper", "strip"):
        return getattr(str(value), kind)()
    if kind in ("call", "same"):
        return value
    if kind == "tuple":
        items = list(op[2])
        items[op[1]] = value
        return tuple(items)
    other = op[1]
    if kind == "eq":
        return value == other
    if kind == "ne":
        return value != other
    if kind == "in":
        return other is not None and value in other
    if kind == "not in":
        return other is not None and value not in other
    raise ValueError(kind)


def shown(value: Any) -> str:
    """A config value as the key sees it, in a line: `True`, `'clang++'`, `300`."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def ignore_lists(path: str) -> Tuple[List[str], List[str]]:
    """(`_save_config_ignore`, `_cache_config_ignore_prefix`) of a config module, as written there;
    kept on disk with the reads."""
    from inductor_doctor.probe import _diskcache

    found = _diskcache.of_file("config-ignore-v1", path, _ignore_file) or [[], []]
    return list(found[0]), list(found[1])


def _ignore_file(path: str) -> Optional[List[List[str]]]:
    root = tree(path)
    if root is None:
        return None
    save: List[str] = []
    prefix: List[str] = []
    for node in getattr(root, "body", []):
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        name = getattr(target, "id", None)
        if name == "_save_config_ignore":
            save = _strings(node.value)
        elif name == "_cache_config_ignore_prefix":
            prefix = _strings(node.value)
    return [save, prefix]
