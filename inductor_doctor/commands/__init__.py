"""The commands, one module each: a request in, a document out (`docs/architecture.md`, recipe 2).

Each module is named for the command a user types (`check`, `plan`, `explain`, `merge`, `why`, ...)
or the library call it serves (`preflight`), returns a typed document with `command` and `to_dict()`,
and never prints: `cli.py` alone renders. The services they are made of live in the packages below
them (`check/`, `plan/`, `triage/`, `fleet/`, `run/`, `why/`, `fix/`, `report/`, `scratch/`).
"""
