"""A canary that aborts (SIGABRT), like a failed C++ assertion or torch_xla's donor-hash check."""

import os
import sys

sys.stderr.write("F0000 fault canary: check failed: donor hash mismatch\n")
sys.stderr.flush()
os.abort()
