"""A canary that exits without a result: `os._exit` skips the harness's report, like a hard exit in C."""

import os
import sys

sys.stdout.write("about to vanish\n")
sys.stdout.flush()
os._exit(0)
