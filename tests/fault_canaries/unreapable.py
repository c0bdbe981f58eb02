"""A canary that cannot be reaped: a helper ptrace-attaches to it and never collects its exit.

SIGKILL ends a traced process, but its parent is told only once the tracer waits for it: until then
the doctor's wait() would block as on a process stuck in a hung GPU driver (uninterruptible sleep),
which cannot be made on purpose. The helper leaves the canary's process group, so killing the group
does not free the canary; it sleeps for a minute and ends by itself.
"""

import ctypes
import os
import sys
import time

PTRACE_SEIZE = 0x4206
canary = os.getpid()
if os.fork() == 0:
    os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_SEIZE, canary, 0, 0) != 0:
        sys.stderr.write(f"ptrace failed: errno {ctypes.get_errno()}\n")
        os._exit(1)
    time.sleep(60)
    os._exit(0)
time.sleep(1)
sys.stderr.write("fault canary: traced, now hanging\n")
sys.stderr.flush()
time.sleep(3600)
