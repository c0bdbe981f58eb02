"""The registry of known issues.

A built-in issue is a data file of this package, `<id_with_underscores>.toml` (its metadata), with
the module of the same name beside it where it has code (`rule`, `advise`, `predict`); adding one is
adding those files (and its docs page), nothing else. `kb/_builtin.py` builds the `KnownIssue`
objects from them; `list` and `explain` read the data files alone (`entries()`).

Other projects ship theirs through the `inductor_doctor.issues`
entry-point group: each entry point names a `KnownIssue` or a callable returning a list of them.
A plugin that fails to load is reported by `plugin_errors()`, never fatal.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover - typing only; `list` and `explain` never import the vocabulary
    from inductor_doctor.core.model import KnownIssue

KB_VERSION = "2026.11.22"
ENTRY_POINT_GROUP = "inductor_doctor.issues"

#: Short repository names that users (and the upstream threads) write in refs like `fla#160`.
REPO_SHORT_NAMES = {
    "pytorch": "pytorch/pytorch",
    "torch": "pytorch/pytorch",
    "xla": "pytorch/xla",
    "torch_xla": "pytorch/xla",
    "triton": "triton-lang/triton",
    "fla": "fla-org/flash-linear-attention",
    "flashinfer": "flashinfer-ai/flashinfer",
    "vllm": "vllm-project/vllm",
    "comfyui-gguf": "city96/ComfyUI-GGUF",
}

_REF = re.compile(r"^\s*(?:https?://github\.com/)?([\w.-]+(?:/[\w.-]+)?)(?:#|/issues/|/pull/)(\d+)\s*$")


def short_ref(ref: str) -> str:
    """`pytorch/pytorch#151589` as users write it, `pytorch#151589` (its repository's short name)."""
    repo, _, number = ref.partition("#")
    short = next((k for k, v in REPO_SHORT_NAMES.items() if v.lower() == repo.lower()), None)
    return f"{short or repo}#{number}"


class DuplicateIssueError(ValueError):
    pass


def normalize_ref(ref: str) -> Optional[str]:
    """`pytorch#1`, `pytorch/pytorch#1` and a GitHub URL all become `pytorch/pytorch#1`."""
    m = _REF.match(ref)
    if not m:
        return None
    repo, number = m.group(1), m.group(2)
    if "/" not in repo:
        repo = REPO_SHORT_NAMES.get(repo.lower(), repo)
    return f"{repo.lower()}#{number}"


class Registry:
    """Known issues by id, with lookups by alias and upstream ref."""

    def __init__(self, issues: Iterable[KnownIssue] = ()) -> None:
        self._by_id: Dict[str, KnownIssue] = {}
        self._keys: Dict[str, str] = {}
        self.plugin_errors: List[Tuple[str, str]] = []
        for issue in issues:
            self.add(issue)

    def add(self, issue: KnownIssue) -> None:
        if issue.id in self._by_id:
            raise DuplicateIssueError(f"duplicate known-issue id {issue.id!r}")
        keys = [issue.id.lower(), *(a.lower() for a in issue.aliases)]
        keys += [k for k in (normalize_ref(r) for r in issue.upstream) if k]
        for key in keys:
            owner = self._keys.get(key)
            if owner is not None and owner != issue.id:
                raise DuplicateIssueError(f"{issue.id!r} reuses {key!r}, already used by {owner!r}")
        self._by_id[issue.id] = issue
        for key in keys:
            self._keys[key] = issue.id

    def __iter__(self):
        return iter(sorted(self._by_id.values(), key=lambda i: (i.source != "builtin", i.id)))

    def __len__(self) -> int:
        return len(self._by_id)

    def ids(self) -> List[str]:
        return [i.id for i in self]

    def find(self, query: str) -> Optional[KnownIssue]:
        """An id, an alias or an upstream ref (short, full or URL)."""
        key = self._keys.get(query.strip().lower())
        if key is None:
            ref = normalize_ref(query)
            key = self._keys.get(ref) if ref else None
        return self._by_id.get(key) if key else None

    def closest(self, query: str, n: int = 3) -> List[str]:
        """Real near misses of an id or alias (a typo); see near_misses()."""
        return near_misses(query, list(self._by_id) + list(self._keys), lambda k: self._keys.get(k, k), n)


def _builtin_issues() -> List[KnownIssue]:
    from inductor_doctor.kb._builtin import builtin_issues

    return builtin_issues()


def _plugin_issues(errors: List[Tuple[str, str]]) -> List[KnownIssue]:
    if not _may_have_plugins():
        return []
    from importlib.metadata import entry_points

    from inductor_doctor.core.model import KnownIssue

    found: List[KnownIssue] = []
    try:
        eps = entry_points()
        group = (
            eps.select(group=ENTRY_POINT_GROUP)
            if hasattr(eps, "select")
            else eps.get(ENTRY_POINT_GROUP, [])  # type: ignore[attr-defined]
        )
    except Exception as exc:  # a broken installed distribution's metadata
        errors.append(("<entry points>", f"{type(exc).__name__}: {exc}"))
        return found
    for ep in group:
        try:
            obj = ep.load()
            items = obj() if callable(obj) and not isinstance(obj, KnownIssue) else obj
            if isinstance(items, KnownIssue):
                items = [items]
            elif isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
                raise TypeError(f"the entry point gives a {type(items).__name__}, not a KnownIssue or a "
                                "list of them")
            dist = getattr(getattr(ep, "dist", None), "name", None) or ep.value.split(":")[0]
            checked = [_checked_plugin_issue(item, dist) for item in items]
        # A broken plugin is a finding about the plugin, not a crash; SystemExit included, since
        # a plugin module that calls sys.exit() at import must not end the doctor either.
        except (Exception, SystemExit) as exc:
            errors.append((ep.name, f"{type(exc).__name__}: {exc}"))
            continue
        found.extend(checked)  # all of an entry point's issues, or none of them
    return found


def _checked_plugin_issue(item: object, dist: str) -> KnownIssue:
    """A plugin's issue, stamped with its distribution; paths must be absolute (see docs/plugins.md)."""
    from dataclasses import replace

    from inductor_doctor.core.model import KnownIssue

    if not isinstance(item, KnownIssue):
        raise TypeError(f"{item!r} is not a KnownIssue")
    # A relative canary would be looked up among the built-in canaries and run one of those.
    if item.canary is not None and not Path(item.canary.script).is_absolute():
        raise ValueError(f"{item.id}: Canary.script must be an absolute path, not {item.canary.script!r}")
    if item.docs_page is not None and not Path(item.docs_page).is_absolute():
        raise ValueError(f"{item.id}: docs_page must be an absolute path, not {item.docs_page!r}")
    return replace(item, source=dist) if item.source == "builtin" else item


def _may_have_plugins() -> bool:
    """Whether any distribution on sys.path declares our entry-point group: a look at the
    `entry_points.txt` files themselves, far cheaper than importlib.metadata's full scan when (as
    almost always) none does. An unreadable path entry counts as "maybe"."""
    import os
    import sys

    needle = f"[{ENTRY_POINT_GROUP}]"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8",
                              errors="replace") as f:
                        if needle in f.read():
                            return True
                except FileNotFoundError:
                    continue
                except OSError:
                    return True
    return False


class Entries:
    """The known issues as data (`KnownIssue.to_dict()`), looked up like the registry: what `list`
    and `explain` need, read from the data files without importing a module per issue."""

    def __init__(self, entries: Iterable[Dict[str, Any]],
                 plugin_errors: Sequence[Tuple[str, str]] = ()) -> None:
        self.entries: List[Dict[str, Any]] = []
        self._keys: Dict[str, Dict[str, Any]] = {}
        self.plugin_errors = list(plugin_errors)
        for entry in entries:
            keys = [entry["id"].lower(), *(a.lower() for a in entry.get("aliases") or ())]
            keys += [k for k in (normalize_ref(r) for r in entry.get("upstream") or ()) if k]
            if entry["id"].lower() in self._keys:
                self.plugin_errors.append((entry["id"], f"duplicate known-issue id {entry['id']!r}"))
                continue
            self.entries.append(entry)
            for key in keys:
                self._keys.setdefault(key, entry)

    def find(self, query: str) -> Optional[Dict[str, Any]]:
        found = self._keys.get(query.strip().lower())
        if found is None:
            ref = normalize_ref(query)
            found = self._keys.get(ref) if ref else None
        return found

    def closest(self, query: str, n: int = 3) -> List[str]:
        return near_misses(query, list(self._keys), lambda k: self._keys[k]["id"], n)


def near_misses(query: str, keys: Sequence[str], issue_of: Callable[[str], str], n: int) -> List[str]:
    """The ids of up to `n` issues whose id or alias is a near miss of `query` (a typo, or a part of
    it); an upstream ref has none: `#999999` is not "close" to any issue, whatever its spelling."""
    import difflib  # only a failed lookup pays for it

    if normalize_ref(query) is not None:
        return []
    number = re.fullmatch(r"\s*#?(\d+)\s*", query)
    if number:  # an upstream ref's number without its repository: the refs that have it
        refs = [k for k in keys if k.endswith("#" + number.group(1)) and normalize_ref(k) == k]
        return [short_ref(k) for k in dict.fromkeys(refs)][:n]
    names = list(dict.fromkeys(k for k in keys if "#" not in k))
    hits = difflib.get_close_matches(query.lower(), names, n=n * 2, cutoff=0.6)
    hits += [k for k in names if query.lower() in k and k not in hits]
    out: List[str] = []
    for h in hits:
        issue_id = issue_of(h)
        if issue_id not in out:
            out.append(issue_id)
    return out[:n]


@lru_cache(maxsize=1)
def entries() -> Entries:
    """Every known issue as data: the built-in ones from their data files, the plugins' loaded."""
    from inductor_doctor.kb import _issue_files

    errors: List[Tuple[str, str]] = []
    plugins = [i.to_dict() for i in _plugin_issues(errors)]
    return Entries(_issue_files.entries() + sorted(plugins, key=lambda e: e["id"]), errors)


def find_entry(query: str) -> Optional[Dict[str, Any]]:
    """`entries().find(query)`, reading only the one data file where the query is a built-in id (a
    built-in's id is its own: no plugin's alias or id can take it)."""
    from inductor_doctor.kb import _issue_files

    key = query.strip().lower()
    path = _issue_files.HERE / f"{_issue_files.module_stem(key)}.toml"
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", key) and path.is_file():
        found = _issue_files.entry(_issue_files.read(path))
        if found["id"] == key:
            return found
    return entries().find(query)


@lru_cache(maxsize=1)
def registry() -> Registry:
    reg = Registry(_builtin_issues())
    errors: List[Tuple[str, str]] = []
    for issue in _plugin_issues(errors):
        try:
            reg.add(issue)
        except DuplicateIssueError as exc:
            errors.append((issue.id, str(exc)))
        except Exception as exc:  # e.g. a ref that is not a string: the plugin's fault, not fatal
            errors.append((issue.id, f"{type(exc).__name__}: {exc}"))
    reg.plugin_errors = errors
    return reg


def docs_dir() -> Path:
    """The built-in issue pages: shipped inside the wheel, or the checkout's `docs/issues`."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_docs" / "issues", here.parent / "docs" / "issues"):
        if candidate.is_dir():
            return candidate
    return here.parent / "docs" / "issues"


def docs_page(issue: KnownIssue) -> Path:
    if issue.docs_page:
        return Path(issue.docs_page)
    return docs_dir() / f"{issue.id}.md"
