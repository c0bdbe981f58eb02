"""A canary that runs clean. Creates $FAULT_CLEAN_MARKER when set, so a test knows it finished."""

import os

marker = os.environ.get("FAULT_CLEAN_MARKER")
if marker:
    open(marker, "w").close()
