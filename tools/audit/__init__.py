"""The release audit: the facts behind the known-issue tables, read from the releases themselves.

`python tools/release_audit.py refresh` rebuilds `inductor_doctor/core/_data/releases.json` from
PyPI; `python tools/release_audit.py check` compares the tables in `inductor_doctor/kb/` with it,
offline.
"""
