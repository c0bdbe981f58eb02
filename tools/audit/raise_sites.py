"""The messages a release's source raises, as templates: what an error says, with its blanks kept.

A known issue's error is worded at a raise site (`raise GPUTooOldForTriton(...)`, a `log.warning`, an
`#error` line, a `TORCH_CHECK`); the wording a user's log carries is that template with its blanks
filled. This module reads one source file and returns every message template whose text an anchor
regex finds, with the line it starts on and what raises it.

* Python is parsed (`ast`), so implicit concatenation, f-strings, `%` and `.format` come out as one
  template, each blank a placeholder `{expr}` named after the expression that fills it (`{}` where
  the source does not say: a constant formatted elsewhere). Literal braces are doubled, as in
  `str.format`. Docstrings are not messages.
* C and C++ (headers in the wheels, sources in an sdist) are tokenized: `#error` lines, and runs of
  adjacent string literals; a run inside a call (`TORCH_CHECK(cond, "a", x, "b")`) takes the call's
  arguments from the first literal on, each non-literal a placeholder. `printf` conversions are blanks.

Nothing here fetches or runs anything; `wordings.py` hands it the files.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

#: A part of a template: literal text, or the name of the expression that fills a blank ("" unnamed).
Part = Union[str, "Blank"]

PY_SUFFIXES = (".py",)
C_SUFFIXES = (".h", ".hpp", ".cuh", ".c", ".cc", ".cpp", ".cu", ".cxx")


@dataclass(frozen=True)
class Blank:
    name: str = ""


@dataclass(frozen=True)
class Site:
    """One message template at one place in one file."""

    template: str  # literal text with `{expr}` blanks, literal braces doubled
    line: int
    kind: str  # "raise X", "log.warning", "warnings.warn", "#error", "message", or the C++ call's name


#: `%s`, `%5.2f`, `%(name)s`: a printf conversion (`%%` is a literal percent).
_PRINTF = re.compile(r"%(?:\((\w+)\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[hlL]{0,2}[sdifrxXegEGcuo]|%%")
#: `{}`, `{0}`, `{name}`, `{name!r:>10}`; `{{` and `}}` are literal braces.
_FORMAT = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_NAME = re.compile(r"[^\w.]+")
MAX_NAME = 40


def blank_name(expr: str) -> str:
    """A placeholder's name: the expression that fills it, reduced to dotted words."""
    return _NAME.sub("_", expr).strip("_")[:MAX_NAME]


def render(parts: Sequence[Part]) -> str:
    """The template text of parts: literal braces doubled, each blank `{name}`."""
    out = []
    for p in parts:
        if isinstance(p, Blank):
            out.append("{" + p.name + "}")
        else:
            out.append(p.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def _merge(parts: Sequence[Part]) -> List[Part]:
    out: List[Part] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


def _printf_parts(text: str, args: Sequence[str] = ()) -> List[Part]:
    """A `%`-format string's parts; blanks named after `args` in order, or after `%(name)s`."""
    parts: List[Part] = []
    pos, n = 0, 0
    for m in _PRINTF.finditer(text):
        parts.append(text[pos : m.start()])
        if m.group(0) == "%%":
            parts.append("%")
        else:
            name = m.group(1) or (args[n] if n < len(args) else "")
            n += 1
            parts.append(Blank(blank_name(name)))
        pos = m.end()
    parts.append(text[pos:])
    return _merge(parts)


def _format_parts(text: str, args: Sequence[str] = (), kwargs: Optional[Dict[str, str]] = None) -> List[Part]:
    """A `str.format` string's parts; `{}` and `{0}` named after `args`, `{name}` after `kwargs` or itself."""
    kwargs = kwargs or {}
    parts: List[Part] = []
    pos, auto = 0, 0
    for m in _FORMAT.finditer(text):
        parts.append(text[pos : m.start()])
        token = m.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        else:
            field = re.split(r"[!:\[.]", m.group(1), maxsplit=1)[0]
            if field == "":
                name = args[auto] if auto < len(args) else ""
                auto += 1
            elif field.isdigit():
                i = int(field)
                name = args[i] if i < len(args) else ""
            else:
                name = kwargs.get(field, m.group(1))
            parts.append(Blank(blank_name(name)))
        pos = m.end()
    parts.append(text[pos:])
    return _merge(parts)


def _constant_parts(text: str) -> List[Part]:
    """A plain string constant that may be a format used elsewhere: its `%s` and `{}` are blanks."""
    out: List[Part] = []
    for p in _printf_parts(text):
        out.extend(_format_parts(p) if isinstance(p, str) else [p])
    return _merge(out)


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - an odd node names its blank "", never stops the read
        return ""


def string_parts(node: ast.AST) -> Optional[List[Part]]:
    """The template of a string-valued expression, or None when `node` is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _constant_parts(node.value)
    if isinstance(node, ast.JoinedStr):
        parts: List[Part] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                parts.append(Blank(blank_name(_unparse(v.value))))
        return _merge(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_parts(node.left), string_parts(node.right)
        if left is None and right is None:
            return None
        return _merge([*(left if left is not None else [Blank(blank_name(_unparse(node.left)))]),
                       *(right if right is not None else [Blank(blank_name(_unparse(node.right)))])])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_text(node.left):
        elts = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        return _printf_parts(_text_of(node.left), [_unparse(e) for e in elts])
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and _is_text(node.func.value)):
        kwargs = {k.arg: _unparse(k.value) for k in node.keywords if k.arg}
        return _format_parts(_text_of(node.func.value), [_unparse(a) for a in node.args], kwargs)
    return None


def _is_text(node: ast.AST) -> bool:
    """A format string whose text is known: a constant, or constants added together."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_text(node.left) and _is_text(
        node.right)


def _text_of(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    assert isinstance(node, ast.BinOp)
    return _text_of(node.left) + _text_of(node.right)


_LOG_CALLS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"}


def _log_call(node: ast.AST) -> bool:
    """`log.warning(...)`, `warnings.warn(...)` and the like."""
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr in _LOG_CALLS


def _kind(stack: Sequence[ast.AST]) -> str:
    """What raises or prints the message whose enclosing nodes are `stack` (innermost last)."""
    for node in reversed(stack):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            return f"raise {_unparse(exc)}"
        if _log_call(node):
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            return f"{_unparse(node.func.value).rpartition('.')[2]}.{node.func.attr}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            break
    return "message"


def _formatter_argument(parent: ast.AST, node: ast.AST) -> bool:
    """Whether `node` is a positional argument of a `format*(...)` call: a part of the message that
    call builds, not a message."""
    if not isinstance(parent, ast.Call) or node not in parent.args:
        return False
    func = parent.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("format")


def python_sites(text: str, anchor: Optional[re.Pattern] = None) -> List[Site]:
    """Every message template in a Python source (that `anchor` finds, if given); [] for a file that
    does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: List[Site] = []

    def visit(node: ast.AST, stack: List[ast.AST]) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a docstring, or a bare string: not a message
        parts = string_parts(node) if isinstance(node, ast.expr) else None
        if _log_call(node) and node.args and _is_text(node.args[0]):  # type: ignore[attr-defined]  # log.warning("... %s", x): x fills the blank
            parts = _printf_parts(_text_of(node.args[0]), [_unparse(a) for a in node.args[1:]])
            template = render(parts)
            if anchor is None or anchor.search(template):
                out.append(Site(template, node.lineno, _kind([*stack, node])))
            return
        if parts is not None and stack and _formatter_argument(stack[-1], node):
            return  # a part a formatter builds a message from (format_bytecode("WON'T CONVERT", ...))
        if parts is not None:
            template = render(parts)
            if anchor is None or anchor.search(template):
                out.append(Site(template, getattr(node, "lineno", 0), _kind(stack)))
            return
        stack.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child, stack)
        stack.pop()

    visit(tree, [])
    return out


# --- C and C++ -----------------------------------------------------------------------------------

_C_TOKENS = re.compile(
    r'(?P<comment>//[^\n]*|/\*.*?\*/)'
    r'|(?P<error>^[ \t]*#[ \t]*error\b(?:\\\n|[^\n])*)'
    r'|(?P<string>(?:u8|[uUL])?R"(?P<delim>[^()\\\s]{0,16})\((?P<raw>.*?)\)(?P=delim)"|(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*")'
    r"|(?P<char>'(?:[^'\\\n]|\\.)*')"
    r'|(?P<open>[(\[{])|(?P<close>[)\]}])|(?P<comma>,)',
    re.S | re.M,
)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "0": "\0"}


def _c_literal(token: str, raw: Optional[str]) -> str:
    if raw is not None:
        return raw
    body = token[token.index('"') + 1 : -1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def c_sites(text: str, anchor: Optional[re.Pattern] = None) -> List[Site]:
    """Every message template in a C/C++ source that `anchor` finds: `#error` lines, and string
    literal runs, with the arguments of the call they stand in after the first literal."""
    out: List[Site] = []
    tokens = [m for m in _C_TOKENS.finditer(text) if m.lastgroup != "comment"]
    line_at = _line_index(text)
    i = 0
    while i < len(tokens):
        m = tokens[i]
        if m.lastgroup == "error":
            body = re.sub(r"^[ \t]*#[ \t]*error\b", "", m.group(0))
            body = " ".join(body.replace("\\\n", " ").split())  # continuation lines are one line
            body = body[1:-1] if len(body) > 1 and body[0] == body[-1] == '"' else body
            template = render([body])
            if anchor is None or anchor.search(template):
                out.append(Site(template, line_at(m.start()), "#error"))
            i += 1
            continue
        if m.group("string") is None:
            i += 1
            continue
        call, args, end = _call_args(text, tokens, i)
        parts: List[Part] = []
        if args and isinstance(args[0], str) and _PRINTF.search(args[0]) and all(
                isinstance(a, Blank) for a in args[1:]):
            args = [*_printf_parts(args[0], [a.name for a in args[1:] if isinstance(a, Blank)])]
        for arg in args:
            if isinstance(arg, str):
                parts.extend(_printf_parts(arg))
            else:
                parts.append(Blank(blank_name(arg.name)))
        template = render(_merge(parts))
        if anchor is None or anchor.search(template):
            out.append(Site(template, line_at(m.start()), call or "message"))
        i = max(end, i + 1)
    return out


def _call_args(text: str, tokens: Sequence[re.Match], i: int) -> Tuple[str, List[Part], int]:
    """From the literal at tokens[i]: the enclosing call's name ("" outside a call), its arguments
    from that literal on (an argument of adjacent literals as text, any other a blank), and the
    index of the first token after them. Outside a call: the run of adjacent literals alone."""
    depth, call = 0, ""
    for j in range(i - 1, -1, -1):
        g = tokens[j].lastgroup
        if g == "close":
            depth += 1
        elif g == "open":
            if depth == 0:
                if tokens[j].group(0) == "(":
                    call = re.search(r"([\w:]*)\s*$", text[: tokens[j].start()]).group(1)  # type: ignore[union-attr]
                break
            depth -= 1
    if not call:
        literal, j = "", i
        while j < len(tokens) and tokens[j].lastgroup == "string" and (
                j == i or text[tokens[j - 1].end() : tokens[j].start()].strip() == ""):
            literal += _c_literal(tokens[j].group("string"), tokens[j].group("raw"))
            j += 1
        return "", [literal], j
    args: List[Part] = []
    pieces: List[re.Match] = []  # the tokens of the argument being read, at depth 0
    start, depth, j = tokens[i].start(), 0, i

    def close(end: int) -> None:
        strings = [t for t in pieces if t.lastgroup == "string"]
        rest = text[start:end]
        for t in strings:
            rest = rest.replace(t.group(0), "", 1)
        if strings and rest.strip() == "":
            args.append("".join(_c_literal(t.group("string"), t.group("raw")) for t in strings))
        elif text[start:end].strip():
            args.append(Blank(" ".join(text[start:end].split())))

    while j < len(tokens):
        t, g = tokens[j], tokens[j].lastgroup
        if g == "open":
            depth += 1
        elif g == "close":
            if depth == 0:
                close(t.start())
                return call, args, j + 1
            depth -= 1
        elif g == "comma" and depth == 0:
            close(t.start())
            pieces, start = [], t.end()
            j += 1
            continue
        if depth == 0 or g != "string":
            pieces.append(t)
        j += 1
    close(len(text))
    return call, args, j


def _line_index(text: str):
    starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line_at(offset: int) -> int:
        import bisect

        return bisect.bisect_right(starts, offset)

    return line_at


def sites(path: str, text: str, anchor: Optional[re.Pattern] = None) -> Iterator[Site]:
    """The message templates of one source file, by its suffix (those `anchor` finds, if given):
    messages only, that is words (a key such as "CUDA_HOME" passed to `os.environ.get` is no wording
    of an error). A file is read once for every anchor: filter what this returns."""
    found = python_sites(text, anchor) if path.endswith(PY_SUFFIXES) else (
        c_sites(text, anchor) if path.endswith(C_SUFFIXES) else [])
    for site in found:
        if " " in site.template.strip():
            yield site
