"""A `cl` that prints in another language than English: Inductor cannot read it, or refuses it.

Inductor runs `cl /help` to tell MSVC from clang-cl (`_is_msvc_cl`) and reads every failed compile's
output. How it decodes that output is `SUBPROCESS_DECODE_ARGS` in `torch/_inductor/cpp_builder.py`:
UTF-8 through torch 2.9, so a Chinese or French cl (GBK, cp1252 bytes) ends in "UnicodeDecodeError:
'utf-8' codec can't decode byte 0x.." (pytorch#157673, pytorch#145383); the locale's code page from
2.10 (strict: a cl writing another code page still fails, pytorch#180853), with "replace" from 2.13.
From 2.9 `check_msvc_cl_language_id` refuses a non-English MSVC outright: "Torch.compile() is only
support MSVC with English language pack". Which language cl prints in is VSLANG, else the user's UI
language where its pack is installed, else English; the packs are the LCID folders beside cl.exe
(1033 English, 2052 Chinese). The probe reads those and, on Windows, the code pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from inductor_doctor.core.model import RuleOutcome, Status
from inductor_doctor.kb._catalog import one
from inductor_doctor.kb._windows import windows_facts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from inductor_doctor.core.facts import Facts, WindowsInfo

ENGLISH = 1033
LANGUAGES = {1033: "English", 2052: "Chinese (Simplified)", 1028: "Chinese (Traditional)", 1041: "Japanese",
             1042: "Korean", 1031: "German", 1036: "French", 3082: "Spanish", 1040: "Italian",
             1049: "Russian", 1046: "Portuguese (Brazil)", 1045: "Polish", 1029: "Czech", 1055: "Turkish"}


def _name(lcid: int) -> str:
    return f"{LANGUAGES.get(lcid, 'LCID')} ({lcid})"


def cl_language(win: WindowsInfo) -> Optional[int]:
    """The language the cl on PATH prints in: VSLANG, else the UI language where its pack is installed,
    else English where it is; None when no pack is there to read."""
    packs = win.cl_languages
    if not packs:
        return None
    for wanted in (win.vslang, win.ui_language):
        try:
            lcid = int(wanted) if wanted is not None else None
        except ValueError:
            lcid = None
        if lcid in packs:
            return lcid
    return ENGLISH if ENGLISH in packs else packs[0]


def rule(facts: Facts) -> List[RuleOutcome]:
    win = windows_facts(facts, "the cl whose output Inductor decodes is Windows'")
    if isinstance(win, list):
        return win
    if win.cl_on_path is None:
        return one(Status.NOT_APPLICABLE, "no cl on PATH: nothing prints for Inductor to misread "
                   "(msvc-not-activated says why)")
    lcid = cl_language(win)
    if lcid is None:
        return one(Status.INCONCLUSIVE, f"no language pack beside {win.cl_on_path}: which language cl prints "
                   "in is unknown")
    if lcid == ENGLISH:
        return one(Status.OK, f"cl prints in English ({ENGLISH}): Inductor reads and accepts it")
    torch = facts.torch.version if facts.torch else "?"
    reads = win.inductor_cl.decodes_output_as if win.inductor_cl else None
    refuses = win.inductor_cl.refuses_non_english if win.inductor_cl else None
    how = {"utf-8": "decodes its output as UTF-8 ('UnicodeDecodeError: 'utf-8' codec can't decode byte')",
           "locale": f"decodes its output strictly in the ANSI code page ({win.ansi_code_page or '?'})",
           "locale, replace": "decodes its output in the ANSI code page, replacing what it cannot read"}
    said = how.get(reads or "", "decodes its output in a way not read from its cpp_builder.py")
    if refuses:
        said += (", and refuses a non-English MSVC ('Torch.compile() is only support MSVC with English "
                 "language pack')")
    status = Status.AFFECTED if refuses or reads == "utf-8" else Status.LIKELY
    return one(status, f"cl prints in {_name(lcid)} ({win.cl_on_path}); torch {torch} {said}")
