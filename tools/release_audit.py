#!/usr/bin/env python3
"""Audit the known-issue tables against the real torch and Triton releases on PyPI.

    python tools/release_audit.py refresh   # re-read every release, rewrite the snapshot
    python tools/release_audit.py wheels    # re-read only what each torch wheel is built for
    python tools/release_audit.py variants --pytorch-git DIR  # the index's CUDA variants, per tag
    python tools/release_audit.py docs      # write docs/wheels.md from the snapshot
    python tools/release_audit.py check     # compare the tables in inductor_doctor/kb/ with it
    python tools/release_audit.py wordings  # re-read every known issue's error wordings

`refresh` reads only the few files it needs from each wheel (HTTP range requests) and caches
them under ~/.cache/inductor-doctor-audit (or $INDUCTOR_DOCTOR_AUDIT_CACHE); run it when a torch
or Triton release appears, then `check`, and commit the snapshot with the tables it changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))

from audit import check, refresh, remote  # noqa: E402

SNAPSHOT = ROOT / "inductor_doctor" / "core" / "_data" / "releases.json"


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="release_audit", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("refresh", help="re-read the releases on PyPI and rewrite the snapshot")
    r.add_argument("--offline", action="store_true", help="reuse the cached index pages")
    r.add_argument("--output", type=Path, default=SNAPSHOT)
    w = sub.add_parser("wheels", help="re-read only what each torch wheel is built for (CUDA, GPU "
                       "architectures, tags) into the existing snapshot")
    w.add_argument("--offline", action="store_true", help="reuse the cached index page")
    w.add_argument("--output", type=Path, default=SNAPSHOT)
    v = sub.add_parser("variants", help="read the CUDA variants PyTorch's index serves for each "
                       "release (and their arch lists) from the build scripts at the release tags")
    v.add_argument("--pytorch-git", type=Path, default=None, metavar="DIR",
                   help="the git directory of a pytorch/pytorch clone with the release tags")
    v.add_argument("--output", type=Path, default=SNAPSHOT)
    d = sub.add_parser("docs", help="write docs/wheels.md from the snapshot (offline)")
    d.add_argument("--check", action="store_true", help="exit 1 when the page is not the snapshot's")
    c = sub.add_parser("check", help="compare the kb tables with the snapshot (offline)")
    c.add_argument("--snapshot", type=Path, default=SNAPSHOT)
    c.add_argument("--with-cache", action="store_true",
                   help="also run the doctor's file readers on the files `refresh` downloaded")
    t = sub.add_parser("wordings", help="re-read every known issue's error wordings from the releases "
                       "that raise them (each issue's [[wording_sources]]) and rewrite the wording table")
    t.add_argument("--offline", action="store_true", help="reuse the cached index pages")
    t.add_argument("--only", default="", metavar="IDS", help="re-read these issues only (comma-separated)")
    t.add_argument("--check", action="store_true",
                   help="offline: exit 1 when the table is not what the data files declare")
    t.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.command == "wordings":
        return _wordings(args)
    if args.command == "docs":
        from audit import docs_page

        snap = check.load(SNAPSHOT)
        if args.check:
            ok = docs_page.current(snap)
            print("docs/wheels.md is current" if ok else "docs/wheels.md is stale: run "
                  "`python tools/release_audit.py docs`")
            return 0 if ok else 1
        docs_page.write(snap)
        print(f"wrote {docs_page.PAGE}")
        return 0
    if args.command == "variants":
        from audit import index_variants

        snap = check.load(args.output)
        read, unread = index_variants.add_index_variants(snap, args.pytorch_git)
        refresh.write(snap, args.output)
        print(f"wrote {args.output}: index variants of {read} torch releases read, {unread} not")
        problems = check.against(snap)
    elif args.command == "wheels":
        snap = check.load(args.output)
        try:
            refresh.add_wheel_facts(snap, remote.index("torch", refresh=not args.offline))
        except (refresh.RefreshError, RuntimeError, OSError) as exc:
            print(f"release_audit: {exc}", file=sys.stderr)
            return 2
        refresh.write(snap, args.output)
        print(f"wrote {args.output}: wheel facts of {len(snap['torch'])} torch releases")
        problems = check.against(snap)
    elif args.command == "refresh":
        try:
            snap = refresh.build(offline=args.offline)
        except (refresh.RefreshError, RuntimeError, OSError) as exc:
            print(f"release_audit: {exc}", file=sys.stderr)
            return 2
        refresh.write(snap, args.output)
        print(f"wrote {args.output}: torch {len(snap['torch'])} releases, triton {len(snap['triton'])}, "
              f"{len(snap['ptxas'])} ptxas binaries")
        problems = check.against(snap, cache=True)
    else:
        problems = check.against(check.load(args.snapshot), cache=args.with_cache)
    for p in problems:
        print(f"DISAGREES: {p}")
    if not problems:
        print("every table agrees with the snapshot")
    return 1 if problems else 0


def _wordings(args: argparse.Namespace) -> int:
    from audit import wordings

    path = args.output or wordings.TABLE
    if args.check:
        problems = wordings.stale(wordings.load(path))
        for p in problems:
            print(f"STALE: {p}")
        print("the wording table is current" if not problems else
              "run `python tools/release_audit.py wordings` and commit the table")
        return 1 if problems else 0
    only = [i for i in args.only.split(",") if i]
    previous = wordings.load(path) if only and path.exists() else None
    try:
        table = wordings.build(only or None, offline=args.offline, previous=previous)
    except (wordings.WordingError, RuntimeError, OSError) as exc:
        print(f"release_audit: {exc}", file=sys.stderr)
        return 2
    wordings.write(table, path)
    count = sum(len(e["wordings"]) for e in table["issues"].values())
    read = sum(len(p["read"]) for p in table["packages"].values())
    print(f"wrote {path}: {count} wordings of {len(table['issues'])} issues from {read} releases "
          f"of {len(table['packages'])} packages")
    problems = wordings.stale(table)
    for p in problems:
        print(f"STALE: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
