"""The fixture's canary (standard library only): fails when INDOC_FIXTURE_BREAK=1."""

import os
import sys

device = sys.argv[1] if len(sys.argv) > 1 else "toolchain"
if os.environ.get("INDOC_FIXTURE_BREAK") == "1":
    raise RuntimeError("fixture failure: the environment says so")
try:  # what ran, for the doctor's harness: nothing here compiles, the fixture is its own proof
    from indoc_harness import exercised
except ImportError:  # run on its own
    def exercised(what):
        print(what)

exercised(f"the fixture canary's own check on {device}")
print(f"fixture canary ran clean on {device}")
