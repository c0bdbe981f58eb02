"""Settings that make `torch.compile` hollow, and where they come from (compile-bypassed).

Three sources, each read without importing torch here:

* the environment: each variable of `envvars.BYPASSES` that is set is judged by the installed
  torch's own code. The expression the release reads it with (`os.environ.get("X", "0") == "1"` in
  torch 2.9, a bare `os.environ.get("X", False)`, where any value, "0" too, turns Dynamo off, in
  torch 2.5 and 2.6) is found in the file and evaluated with the value that is set: what a value
  means is the release's, read from the release;
* the files Python runs at start-up: `sitecustomize.py` and `usercustomize.py` along the target's
  `sys.path`, and the `import` lines of the `.pth` files of its site directories, scanned for the
  same variables, the config attributes they set, and `torch.compile` being replaced;
* the live probe (target/live.py): the values of those config attributes in a fresh interpreter of
  the target, after its start-up ran, and the variables as that process sees them (`merge_live`).
"""

from __future__ import annotations

import ast
import os
import re
from typing import Any, List, Mapping, Optional, Tuple

from inductor_doctor.core.envvars import BYPASSES, Bypass
from inductor_doctor.core.facts import BypassSetting, CompileSettingsInfo, Facts, StartupLine
from inductor_doctor.probe._pyeval import apply as _apply
from inductor_doctor.probe._pyeval import constant as _constant
from inductor_doctor.probe._pyeval import tree as _tree
from inductor_doctor.probe.step import Step

#: The config attributes of the table, and `torch.compile =`, as a start-up file would write them.
_CONFIG_WORDS = tuple(sorted({b.config.rsplit(".", 1)[1] for b in BYPASSES if b.config}))
_STARTUP = re.compile(r"\b(" + "|".join([b.name for b in BYPASSES] + list(_CONFIG_WORDS)) + r")\b"
                      r"|torch\.compile\s*=[^=]")
_MAX_BYTES = 256 * 1024


# --- what a value means, read from the release ------------------------------------------------------

def _is_env_read(node: ast.AST, name: str) -> bool:
    """`os.environ.get("X", ...)`, `os.getenv("X")`, `get_env_val("X")`, `os.environ["X"]`."""
    if isinstance(node, ast.Call) and node.args:
        first = node.args[0]
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return (isinstance(first, ast.Constant) and first.value == name
                and called in ("get", "getenv", "get_env_val", "environ_get"))
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        of = node.value
        if (of.attr if isinstance(of, ast.Attribute) else getattr(of, "id", "")) != "environ":
            return False
        key = node.slice
        return isinstance(key, ast.Constant) and key.value == name
    return False


def takes_effect(torch_dir: str, bypass: Bypass, value: str) -> Optional[Tuple[bool, str]]:
    """(whether `NAME=value` is in effect, how the release reads it) for the installed torch, or None
    when none of its files reads the variable (that release does not have the setting)."""
    for rel in bypass.reads:
        path = os.path.join(torch_dir, rel)
        tree = _tree(path)
        if tree is None:
            continue
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not _is_env_read(node, bypass.name):
                continue
            default = _constant(node.args[1]) if isinstance(node, ast.Call) and len(node.args) > 1 else None
            current: Any = value if value is not None else default
            here, top = node, node
            while here in parents:
                understood, current = _apply(parents[here], here, current)
                if not understood:
                    break
                here = top = parents[here]
            try:
                how = ast.unparse(top) if hasattr(ast, "unparse") else bypass.name
            except Exception:  # noqa: BLE001 - only the wording
                how = bypass.name
            return bool(current), f"torch/{rel}:{getattr(node, 'lineno', '?')} reads `{how}`"
    return None


# --- the files Python runs at start-up ------------------------------------------------------------


def startup_files(sys_path: List[str], site_dirs: List[str]) -> List[str]:
    """sitecustomize.py and usercustomize.py as Python would find them, and the site dirs' .pth files."""
    found: List[str] = []
    for module in ("sitecustomize", "usercustomize"):
        for entry in sys_path:
            candidate = os.path.join(entry, module + ".py")
            if os.path.isfile(candidate):
                found.append(candidate)
                break
    for d in site_dirs:
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth"))
        except OSError:
            continue
        found += [os.path.join(d, n) for n in names]
    return found


def scan_startup(paths: List[str]) -> List[StartupLine]:
    """The lines of those files that name a setting of the table (in a .pth, only its import lines run)."""
    out: List[StartupLine] = []
    for path in paths:
        try:
            st = os.stat(path)
            if st.st_size > _MAX_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        pth = path.endswith(".pth")
        for n, line in enumerate(lines, 1):
            code = line.split("#", 1)[0] if not pth else line
            if pth and not re.match(r"import[ \t]", line):
                continue
            if _STARTUP.search(code):
                out.append(StartupLine(path, n, line.strip()[:200], st.st_mtime_ns))
    return out


def _startup_source(lines: List[StartupLine], word: str) -> Optional[str]:
    for ln in lines:
        if word in ln.text:
            return f"{ln.path}:{ln.line}"
    return None


def gather(torch_dir: Optional[str], env: Mapping[str, str],
           target: Mapping[str, Any]) -> CompileSettingsInfo:
    """The static part: the environment, judged by the installed torch, and the start-up files."""
    info = CompileSettingsInfo()
    sys_path = [p for p in target.get("sys_path") or [] if isinstance(p, str)]
    site_dirs = [p for p in target.get("site_packages") or [] if isinstance(p, str)]
    info.startup = scan_startup(startup_files(sys_path, site_dirs))
    if not torch_dir:
        return info
    for b in BYPASSES:
        if b.name not in env:
            continue
        read = takes_effect(torch_dir, b, env[b.name])
        if read is None:
            info.notes.append(f"{b.name} is set, but this torch does not read it")
            continue
        on, how = read
        if on:
            info.found.append(BypassSetting(f"{b.name}={env[b.name]}", b.effect, "environment", how))
        else:
            info.notes.append(f"{b.name}={env[b.name]} is set, but does not take effect in this torch "
                              f"({how})")
    return info


def merge_live(facts: Facts, live: Mapping[str, Any]) -> None:
    """What a fresh interpreter of the target had in effect after its start-up (target/live.py): a
    setting the environment does not explain was set at start-up, by the file that names it."""
    answer = live.get("compile_settings")
    if not isinstance(answer, dict):
        return
    info = facts.compile_settings or CompileSettingsInfo()
    facts.compile_settings = info
    by_config = {b.config: b for b in BYPASSES if b.config}
    by_name = {b.name: b for b in BYPASSES}
    known = {s.setting.split("=", 1)[0].strip() for s in info.found}
    #: The config values the environment already explains (TORCH_COMPILE_DISABLE=1 sets disable).
    env_explains = {by_name[n].config for n in known if n in by_name}
    for name, value in sorted((answer.get("env") or {}).items()):
        b = by_name.get(name)
        if b is None or name in known or facts.env.get(name) == value:
            continue
        torch_dir = facts.torch.path if facts.torch else None
        read = takes_effect(torch_dir, b, value) if torch_dir else None
        if read is not None and read[0]:
            source = _startup_source(info.startup, name) or "set at start-up (not in the environment)"
            info.found.append(BypassSetting(f"{name}={value}", b.effect, source, read[1]))
            known.add(name)
            env_explains.add(b.config)
    for dotted, value in sorted((answer.get("config") or {}).items()):
        b = by_config.get(dotted)
        if b is None or dotted in env_explains or dotted in known:
            continue
        word = dotted.rsplit(".", 1)[1]
        source = _startup_source(info.startup, word) or "set at start-up (not in the environment)"
        info.found.append(BypassSetting(f"{dotted} = {value!r}", b.effect, source,
                                        "read from torch's config in a fresh interpreter"))
    replaced = answer.get("compile_replaced")
    if replaced:
        source = _startup_source(info.startup, "torch.compile") or "set at start-up (not in the environment)"
        info.found.append(BypassSetting(f"torch.compile = {replaced}", "backend", source,
                                        "torch.compile is not torch's own function in a fresh interpreter"))


STEP = Step("compile_settings", ("torch_files", "environ", "target"),
            lambda torch_info, env, t: gather(torch_info.path if torch_info else None, env, t),
            what="compile settings")
