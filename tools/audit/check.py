"""Compare what `inductor_doctor/kb/` states with the release snapshot.

Offline and fast: each check returns the disagreements it finds as one-line strings, naming the
table, the release and both values. `against(snapshot)` runs them all. With `cache=True` it also
runs the doctor's own source readers (the regexes its rules apply to an installed torch or
Triton) on the real files cached by `refresh`, so that a release whose files changed shape is
caught in the readers too, not only in the audit's extractors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "issues"
Snapshot = Dict[str, Any]


def load(path: Path) -> Snapshot:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _torch(snap: Snapshot) -> List[Tuple[str, Dict[str, Any]]]:
    return sorted(snap["torch"].items(), key=lambda kv: Version(kv[0]))


def _triton(snap: Snapshot) -> List[Tuple[str, Dict[str, Any]]]:
    return sorted(snap["triton"].items(), key=lambda kv: Version(kv[0]))


def _groups(items: List[Tuple[str, Any]], key: Callable[[Any], Any]) -> List[Tuple[str, str, Any]]:
    """Runs of consecutive releases with the same key: (first, last, key)."""
    out: List[Tuple[str, str, Any]] = []
    for version, entry in items:
        k = key(entry)
        if out and out[-1][2] == k:
            out[-1] = (out[-1][0], version, k)
        else:
            out.append((version, version, k))
    return out


def check_releases(snap: Snapshot) -> List[str]:
    from inductor_doctor.core import releases as _releases

    bad = []
    for name, versions in snap["releases"].items():
        if list(_releases.RELEASES.get(name, ())) != versions:
            bad.append(f"RELEASES[{name!r}] is not the registry's list of final releases")
    for version, entry in _torch(snap):
        if entry["triton"] and _releases.TORCH_TRITON_PIN.get(version) != entry["triton"]:
            bad.append(f"TORCH_TRITON_PIN[{version!r}] = {_releases.TORCH_TRITON_PIN.get(version)!r}, "
                       f"the wheel requires triton{entry['triton']}")
    return bad


def check_python(snap: Snapshot) -> List[str]:
    from inductor_doctor.kb.python_unsupported_by_dynamo import from_snapshot

    bad = []
    for version, entry in _torch(snap):
        got = from_snapshot(version)
        want = tuple(int(x) for x in entry["dynamo_refuses"]["python"].split("."))
        if got is None or got["first"] != want:
            bad.append(f"python-unsupported-by-dynamo: torch {version} refuses {want}, the rule says "
                       f"{got and got['first']}")
    page = (DOCS / "python-unsupported-by-dynamo.md").read_text()
    for first, last, refuses in _groups(_torch(snap), lambda e: e["dynamo_refuses"]["python"]):
        if not _row(page, first, last, refuses + "+"):
            bad.append(f"python-unsupported-by-dynamo.md: no table row for torch {first}-{last} refusing "
                       f"Python {refuses}+")
    for first, last, gate in _groups(_torch(snap), lambda e: (e["free_threaded"] or {}).get("refused")):
        if gate and not _row(page, first, last, "always" if gate == "always" else gate.lstrip("<")):
            bad.append(f"python-unsupported-by-dynamo.md: no row for torch {first}-{last}'s free-threaded "
                       f"gate ({gate})")
    return bad


def _row(page: str, first: str, last: str, *words: str) -> bool:
    """Whether one line of `page` names the release range and every word."""
    label = first if first == last else f"{first} – {last}"
    return any(label in line and all(w in line for w in words) for line in page.splitlines())


def check_compiler(snap: Snapshot) -> List[str]:
    from inductor_doctor.kb import registry
    from inductor_doctor.kb.compiler_too_old import STD_FLAG_FLOOR, release_floor

    ISSUE = registry().find("compiler-too-old")

    bad = []
    page = (DOCS / "compiler-too-old.md").read_text()
    for version, entry in _torch(snap):
        std = entry["cxx_std"]["std"]
        for kind in ("gcc", "clang"):
            if std not in STD_FLAG_FLOOR[kind]:
                bad.append(f"compiler-too-old: STD_FLAG_FLOOR[{kind!r}] lacks {std} (torch {version})")
                continue
            need, _ = release_floor(entry, kind)
            want = max(STD_FLAG_FLOOR[kind][std], entry["header_floor"][kind] or 0)
            if need != want:
                bad.append(f"compiler-too-old: torch {version} needs {kind} >= {want}, the table says {need}")
    def floors(e: Dict[str, Any]) -> Tuple[Any, ...]:
        return e["cxx_std"]["std"], e["header_floor"]["gcc"], e["header_floor"]["clang"]

    for first, last, (std, gcc, clang) in _groups(_torch(snap), floors):
        words = [std] + ([f"GCC {gcc}", f"clang {clang}"] if gcc else ["none"])
        if not _row(page, first, last, *words):
            bad.append(f"compiler-too-old.md: no table row for torch {first}-{last}: -std={std}, "
                       f"header floor GCC {gcc} / clang {clang}")
    first20 = next((v for v, e in _torch(snap) if e["cxx_std"]["std"] == "c++20"), None)
    if first20 and f"c++20 from torch {'.'.join(first20.split('.')[:2])}" not in ISSUE.summary:
        bad.append(f"compiler-too-old: the summary does not say c++20 from torch {first20}")
    return bad


def check_const_data_ptr(snap: Snapshot) -> List[str]:
    from inductor_doctor.kb import registry
    from inductor_doctor.kb.const_data_ptr_abi import AFFECTED_TORCH

    ISSUE = registry().find("const-data-ptr-abi")

    bad = []
    spec = SpecifierSet(AFFECTED_TORCH)
    with_enable_if = [v for v, e in _torch(snap) if e["const_data_ptr"]["enable_if"]]
    for version, entry in _torch(snap):
        if spec.contains(version) != bool(entry["const_data_ptr"]["enable_if"]):
            bad.append(f"const-data-ptr-abi: AFFECTED_TORCH {AFFECTED_TORCH} and torch {version}'s "
                       f"TensorBase.h ({entry['const_data_ptr']['declaration']}) disagree")
    after = [v for v, _ in _torch(snap) if Version(v) > Version(with_enable_if[-1])]
    if after and ISSUE.fixed.get("torch") != after[0]:
        bad.append(f"const-data-ptr-abi: fixed in torch {after[0]}, the issue says "
                   f"{ISSUE.fixed.get('torch')}")
    page = (DOCS / "const-data-ptr-abi.md").read_text()
    for first, last, decl in _groups(_torch(snap), lambda e: e["const_data_ptr"]["declaration"]):
        if not _row(page, first, last, decl or "none"):
            bad.append(f"const-data-ptr-abi.md: no row for torch {first}-{last} declaring {decl}")
    return bad


def check_ptxas(snap: Snapshot) -> List[str]:
    from inductor_doctor.kb.ptxas_unsupported_arch import FIRST_PTXAS, LAST_PTXAS, release_knows

    bad = []
    for sha, binary in snap["ptxas"].items():
        release = tuple(int(x) for x in binary["release"].split("."))
        for arch in FIRST_PTXAS:
            for name in (f"sm_{arch}", f"sm_{arch}a") if arch >= 90 else (f"sm_{arch}",):
                ran = binary["archs"].get(name)
                if ran is not None and ran != release_knows(release, arch):
                    bad.append(f"ptxas-unsupported-arch: FIRST_PTXAS/LAST_PTXAS say CUDA {binary['release']} "
                               f"{'knows' if not ran else 'does not know'} {name}; the bundled ptxas "
                               f"{binary['version']} ({sha[:12]}) {'assembles' if ran else 'refuses'} it")
    for arch in LAST_PTXAS:
        if arch not in FIRST_PTXAS:
            bad.append(f"ptxas-unsupported-arch: LAST_PTXAS names sm_{arch}, FIRST_PTXAS does not")

    def shape(e: Dict[str, Any]) -> Tuple[Any, ...]:
        bw = e["ptxas_blackwell"]
        return (snap["ptxas"][e["ptxas"]["sha256"]]["release"],
                snap["ptxas"][bw["sha256"]]["release"] if bw else None,
                bw["from_arch"] if bw else None, bw["env"] if bw else None)

    page = (DOCS / "ptxas-unsupported-arch.md").read_text()
    for first, last, (plain, blackwell, switch, env) in _groups(_triton(snap), shape):
        words = [plain] + ([blackwell, f"sm_{switch}", env] if blackwell else ["—"])
        if not _row(page, first, last, *words):
            bad.append(f"ptxas-unsupported-arch.md: no row for Triton {first}-{last}: ptxas {plain}, "
                       f"ptxas-blackwell {blackwell} from sm_{switch} ({env})")
    bad += _check_override_workarounds(snap)
    return bad


def _check_override_workarounds(snap: Snapshot) -> List[str]:
    """A workaround that sets a Triton variable must apply to exactly the releases that read it."""
    from inductor_doctor.kb import registry

    ARCH, DRIVER = registry().find("ptxas-unsupported-arch"), registry().find("triton-ptxas-driver")

    bad = []
    readers: Dict[str, set] = {}
    for version, entry in _triton(snap):
        for key in ("ptxas", "ptxas_blackwell"):
            if entry[key]:
                readers.setdefault(entry[key]["env"], set()).add(version)
    every = {v for v, _ in _triton(snap)}
    for issue in (ARCH, DRIVER):
        for w in issue.workarounds:
            for env in re.findall(r"TRITON_PTXAS[-_A-Z]*_PATH", w.command or ""):
                spec = SpecifierSet(w.applies.get("triton", ""))
                shown = {v for v in every if spec.contains(v)}
                if shown != readers.get(env, set()):
                    wanted = sorted(readers.get(env, set()), key=Version)
                    bad.append(f"{issue.id}: the workaround setting {env} applies to triton "
                               f"{sorted(shown, key=Version)}, but {wanted} read it")
    return bad


def check_driver_table(snap: Snapshot) -> List[str]:
    from inductor_doctor.core.releases import family_driver

    bad = []
    for binary in snap["ptxas"].values():
        if family_driver(binary["release"]) is None:
            bad.append(f"CUDA_MIN_DRIVER: no driver for CUDA {binary['release'].split('.')[0]}.0, the "
                       f"family of a bundled ptxas {binary['version']}")
    return bad


def check_gpu_tables(snap: Snapshot) -> List[str]:
    from inductor_doctor.core.facts import Facts, PythonInfo, TorchInfo
    from inductor_doctor.kb.gpu_too_old_for_triton import MIN_CAPABILITY
    from inductor_doctor.kb.small_gpu_no_autotune_gemm import threshold

    bad = []
    for version, entry in _torch(snap):
        if entry["min_capability"] != MIN_CAPABILITY[0]:
            bad.append(f"gpu-too-old-for-triton: MIN_CAPABILITY {MIN_CAPABILITY}, torch {version} refuses "
                       f"below {entry['min_capability']}.0")
        facts = Facts(python=PythonInfo(executable="python", version="3.12.0"),
                      torch=TorchInfo(version=version, path=None))
        if threshold(facts) != entry["is_big_gpu_sms"]:
            bad.append(f"small-gpu-no-autotune-gemm: the fallback says {threshold(facts)} SMs for torch "
                       f"{version}, its is_big_gpu says {entry['is_big_gpu_sms']}")
    return bad


def check_readers(snap: Snapshot) -> List[str]:
    """The doctor's own file readers, run on the real files the refresh cached."""
    from audit import remote
    from inductor_doctor.core.facts import Facts, PythonInfo, TorchInfo, TritonInfo
    from inductor_doctor.kb import _ptxas, compiler_too_old, python_unsupported_by_dynamo
    from inductor_doctor.probe.abi import extension_std

    bad = []
    for version, entry in _torch(snap):
        base = remote.cache_root() / "wheels" / entry["sha256"] / "files" / "torch"
        if not base.is_dir():
            bad.append(f"torch {version}: not in the download cache, its files were not re-read")
            continue
        facts = Facts(python=PythonInfo(executable="python", version="3.12.0"),
                      torch=TorchInfo(version=None, path=str(base)))
        found = python_unsupported_by_dynamo.refusal(facts)
        want = tuple(int(x) for x in entry["dynamo_refuses"]["python"].split("."))
        if found is None or found[0] != want:
            bad.append(f"python-unsupported-by-dynamo.refusal() reads {found and found[0]} from torch "
                       f"{version}'s files, the audit {want}")
        gil = python_unsupported_by_dynamo.gil_floor(facts)
        gate = (entry["free_threaded"] or {}).get("refused")
        shown = None if gil is None else "always" if gil[0] is None else "<" + ".".join(map(str, gil[0]))
        if shown != gate:
            bad.append(f"python-unsupported-by-dynamo.gil_floor() reads {shown} from torch {version}, "
                       f"the audit {gate}")
        if compiler_too_old.cxx_standard(facts) != entry["cxx_std"]["std"]:
            bad.append(f"compiler-too-old.cxx_standard() reads {compiler_too_old.cxx_standard(facts)} from "
                       f"torch {version}, the audit {entry['cxx_std']['std']}")
        if extension_std(str(base)) != entry["extension_std"]["std"]:
            bad.append(f"probe/abi.extension_std() reads {extension_std(str(base))} from torch {version}'s "
                       f"cpp_extension.py, the audit {entry['extension_std']['std']}")
        for kind in ("gcc", "clang"):
            if compiler_too_old.header_floor(facts, kind) != entry["header_floor"][kind]:
                bad.append(f"compiler-too-old.header_floor({kind}) disagrees with the audit on torch "
                           f"{version}")
    for version, entry in _triton(snap):
        base = remote.cache_root() / "wheels" / entry["sha256"] / "files" / "triton"
        if not base.is_dir():
            bad.append(f"triton {version}: not in the download cache, its files were not re-read")
            continue
        facts = Facts(python=PythonInfo(executable="python", version="3.12.0"),
                      triton=TritonInfo(version=None, path=str(base)))
        rule = _ptxas.scheme(facts)
        bw = entry["ptxas_blackwell"]
        want = (bw["from_arch"] if bw else None, bw["env"] if bw else None, entry["arch_suffix"])
        got = (rule.blackwell_from, rule.blackwell_env, rule.suffix) if rule else None
        if got != want:
            bad.append(f"kb/_ptxas.scheme() reads {got} from triton {version}'s compiler.py, the audit "
                       f"{want}")
    return bad


def check_wheels(snap: Snapshot) -> List[str]:
    """What each torch wheel is built for: read for every release, kernels that confirm the arch
    list, and a driver the doctor knows for every CUDA a wheel needs."""
    from inductor_doctor.core.releases import CUDA_MIN_DRIVER

    bad = []
    for version, entry in _torch(snap):
        pypi = entry.get("pypi") or {}
        linux = pypi.get("linux_x86_64")
        if not linux:
            bad.append(f"torch {version}: no wheel facts for Linux x86_64 (run `release_audit.py wheels`)")
            continue
        if linux["pythons"] != entry["pythons"]:
            bad.append(f"torch {version}: the Linux x86_64 wheels' Pythons {linux['pythons']} are not the "
                       f"release's {entry['pythons']}")
        for key, facts in pypi.items():
            if facts["build"] != "cuda":
                continue
            if not facts.get("archs"):
                bad.append(f"torch {version} ({key}): a CUDA wheel whose GPU architectures were not read")
                continue
            extra = set(facts.get("fatbin_sample") or ()) - set(facts["archs"])
            if not facts.get("fatbin_sample") or extra:
                bad.append(f"torch {version} ({key}): libtorch_cuda.so's kernels "
                           f"({facts.get('fatbin_sample')}) do not confirm the arch list {facts['archs']}")
            if facts["cuda"] not in CUDA_MIN_DRIVER:
                bad.append(f"CUDA_MIN_DRIVER: no driver for CUDA {facts['cuda']}, which torch {version}'s "
                           f"{key} wheel needs")
    return bad


def check_index_variants(snap: Snapshot) -> List[str]:
    """The index variants read from the build scripts at each release tag, against the wheel.

    PyPI's Linux x86_64 wheel is the index's variant of the same CUDA, so its arch list (read from
    libtorch_python.so) must be the list build_cuda.sh sets for that CUDA at the tag: two sources
    that must agree. Every read variant needs a CUDA whose driver the doctor knows; a release whose
    variants were not read says why.
    """
    from inductor_doctor.core.releases import CUDA_MIN_DRIVER

    bad = []
    for version, entry in _torch(snap):
        facts = entry.get("index_variants")
        if facts is None:
            bad.append(f"torch {version}: no index variants recorded (run `release_audit.py variants`)")
            continue
        if not facts.get("read"):
            if not facts.get("why"):
                bad.append(f"torch {version}: index variants unread, and no reason given")
            continue
        variants = facts.get("variants") or {}
        linux = (entry.get("pypi") or {}).get("linux_x86_64") or {}
        if linux.get("build") == "cuda" and linux.get("archs"):
            tag = "cu" + str(linux["cuda"]).replace(".", "")
            own = variants.get(tag)
            if own is None:
                if tag not in (facts.get("unread") or {}):
                    bad.append(f"torch {version}: PyPI's wheel is CUDA {linux['cuda']}, which CUDA_ARCHES at "
                               f"{facts.get('tag')} does not list")
            else:
                script = sorted(set(own["archs"]) | set(own.get("ptx") or ()))
                wheel = sorted(set(linux["archs"]))
                if script != wheel:
                    bad.append(f"torch {version} {tag}: build_cuda.sh at {facts.get('tag')} sets "
                               f"{own['arch_list']} ({' '.join(script)}), the PyPI wheel is built for "
                               f"{' '.join(wheel)}")
        for tag, v in variants.items():
            if v["cuda"] not in CUDA_MIN_DRIVER:
                bad.append(f"CUDA_MIN_DRIVER: no driver for CUDA {v['cuda']}, which torch {version}'s {tag} "
                           "index variant needs")
    return bad


def check_docs_page(snap: Snapshot) -> List[str]:
    """docs/wheels.md is generated from the snapshot: it must be the snapshot's."""
    from audit import docs_page

    if docs_page.current(snap):
        return []
    return ["docs/wheels.md is not the snapshot's: run `python tools/release_audit.py docs`"]


CHECKS = (check_releases, check_python, check_compiler, check_const_data_ptr, check_ptxas,
          check_driver_table, check_gpu_tables, check_wheels, check_index_variants, check_docs_page)


def against(snap: Snapshot, cache: bool = False) -> List[str]:
    bad: List[str] = []
    for fn in CHECKS + ((check_readers,) if cache else ()):
        bad += fn(snap)
    return bad
