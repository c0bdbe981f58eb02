"""The package's imports flow one way, down to the vocabulary: checked on the source, every import.

Every `import` in the package, at module level or inside a function, under `TYPE_CHECKING` or not,
is an edge; each module has a layer; an edge may only point to a lower layer, or sideways inside
one package or between services. A command never imports another: what two commands share is a
service below them. Renderers may see only the vocabulary, so what they print can come from nothing
but a document.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

PACKAGE = Path(__file__).resolve().parents[2] / "inductor_doctor"

#: (module prefix, layer); the longest matching prefix wins. Lower layers know nothing of higher ones.
LAYERS: Tuple[Tuple[str, int], ...] = (
    # 0 the vocabulary: types and data every layer speaks
    ("inductor_doctor.core", 0),
    ("inductor_doctor.model", 0),
    # 1 where the target's scripts are (never imported: run)
    ("inductor_doctor.target", 1),
    # 2 facts about this machine
    ("inductor_doctor.probe", 2),
    # 2.5 facts read from a compiled artifact (check/plan --artifact), with the probe's ELF reader
    ("inductor_doctor.artifact", 2.5),
    # 3 the knowledge: rules read facts, they gather none
    ("inductor_doctor.kb", 3),
    # 4 services the commands are made of
    ("inductor_doctor.check", 4),
    ("inductor_doctor.plan", 4),
    ("inductor_doctor.triage", 4),
    ("inductor_doctor.fleet", 4),
    ("inductor_doctor.scratch", 4),
    ("inductor_doctor.report", 4),
    ("inductor_doctor.fix", 4),
    ("inductor_doctor.run", 4),
    ("inductor_doctor.why", 4),
    # 4.5 the exception hook: above the services it uses (the triage), below the command that installs it
    ("inductor_doctor.hook", 4.5),
    # 5 commands: a request in, a document out, one module each, none importing another
    ("inductor_doctor.commands", 5),
    # 6 documents out as text
    ("inductor_doctor.render", 6),
    # 7 the faces: the command line, the console script (and its click-free `run`), and the package's
    # public API (`inductor_doctor.preflight`, loaded on first use)
    ("inductor_doctor", 7),
    ("inductor_doctor.cli", 7),
    ("inductor_doctor._entry", 7),
    ("inductor_doctor._run", 7),
    ("inductor_doctor.__main__", 7),
)
VOCABULARY = 0
RENDER = 6


def layer(module: str) -> int:
    best = max((p for p, _ in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return dict(LAYERS)[best]


def package_of(module: str) -> str:
    return module.rsplit(".", 1)[0]


def modules() -> Dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if "target" in rel.parts[1:2]:  # scripts the target interpreter runs, not the doctor's code
            if path.name != "__init__.py":
                continue
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(module: str, path: Path) -> Iterator[Tuple[str, int]]:
    """Every `inductor_doctor` module this one imports, with the line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("inductor_doctor"):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("inductor_doctor"):
                continue
            for alias in node.names:
                yield (f"{base}.{alias.name}" if f"{base}.{alias.name}" in ALL else base), node.lineno


ALL = modules()


def test_every_module_has_a_layer():
    assert all(layer(m) >= 0 for m in ALL)


def test_imports_point_down_only():
    wrong: List[str] = []
    for module, path in sorted(ALL.items()):
        mine = layer(module)
        for target, line in imports(module, path):
            theirs = layer(target)
            same_package = (package_of(target) == package_of(module) or target.startswith(module + ".")
                            or module.startswith(target + "."))
            if mine == RENDER:
                ok = theirs == VOCABULARY or target.startswith("inductor_doctor.render")
            else:
                # Sideways only within a package, among the vocabulary, or service to service (a `why`
                # attempt reads output as `run` captures it); never up, and never command to command.
                ok = theirs < mine or (theirs == mine and (same_package or mine in (VOCABULARY, 4)))
            if not ok:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} (layer {mine}) imports "
                             f"{target} (layer {theirs})")
    assert not wrong, "imports that point up a layer:\n" + "\n".join(wrong)


def test_no_command_imports_another():
    """A command is a verb over services: one that needs another's machinery calls the service both use
    (`check/flow.py`, `triage/engine.py`, `report/block.py`), never the other command."""
    commands = {m for m in ALL if m.startswith("inductor_doctor.commands.")}
    wrong = [f"{ALL[m].relative_to(PACKAGE.parent)}:{line}: {m} imports {t}"
             for m in sorted(commands) for t, line in imports(m, ALL[m])
             if t.startswith("inductor_doctor.commands") and t != m]
    assert not wrong, "commands importing commands:\n" + "\n".join(wrong)


def test_no_import_loops():
    """Following imports (function-level ones too) never leads back to where it started."""
    graph = {m: {t for t, _ in imports(m, p) if t in ALL and t != m} for m, p in ALL.items()}
    state: Dict[str, int] = {}
    loops: List[str] = []

    def visit(m: str, path: List[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                loops.append(" -> ".join(path[path.index(t):] + [t]) if t in path else f"{m} -> {t}")
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not loops, "import loops:\n" + "\n".join(loops)


def test_no_family_prefix_modules():
    """No `<family>_<part>.py` groups beside each other: a family is a package."""
    stems = [p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("_")]
    prefixes = {s.split("_")[0] for s in stems if "_" in s}
    assert not [s for s in stems if s.split("_")[0] in prefixes and "_" in s], stems
