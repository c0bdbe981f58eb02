"""The fixture's canary (standard library only): fails when INDOC_FIXTURE_BREAK=1."""

import os
import sys

device = sys.argv[1] if len(sys.argv) > 1 else "toolchain"
if os.environ.get("INDOC_FIXTURE_BREAK") == "1":
    raise RuntimeError("fixture failure: the environment says so")
print(f"fixture canary ran clean on {device}")
