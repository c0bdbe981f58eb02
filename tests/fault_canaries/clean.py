"""A canary that runs clean. Creates $FAULT_CLEAN_MARKER when set, so a test knows it finished."""

import os

try:  # what ran, for the doctor's harness: nothing here compiles, the fixture is its own proof
    from indoc_harness import exercised
except ImportError:  # run on its own
    def exercised(what):
        print(what)

exercised("the fault fixture ran clean (nothing to compile)")
marker = os.environ.get("FAULT_CLEAN_MARKER")
if marker:
    open(marker, "w").close()
