"""A canary that floods stdout and stderr with megabytes (binary junk included), then shows the bug.

The issue's signature comes last, after the noise, as in a real log where the error is at the end.
"""

import os
import sys

MB = int(os.environ.get("FAULT_NOISE_MB", "24"))
line = b"noise " * 20 + b"\xff\xfe\x00 not utf-8\n"
block = line * (2**20 // len(line))
for _ in range(MB // 2):
    sys.stdout.buffer.write(block)
    sys.stderr.buffer.write(block)
sys.stdout.flush()
raise RuntimeError("FAULT-SIGNATURE: the bug, after the noise")
