"""A canary that hangs, with a child in its process group and a grandchild that left it (setsid).

Both must die with it: the child like a compile worker, the grandchild like a daemon that tried to
outlive the run. Their pids go to $FAULT_PIDS_DIR when set, so a test can check on them.
"""

import os
import subprocess
import sys
import time

SLEEP = [sys.executable, "-c", "import time; time.sleep(3600)"]
child = subprocess.Popen(SLEEP)
escaped = subprocess.Popen(SLEEP, start_new_session=True)
where = os.environ.get("FAULT_PIDS_DIR")
if where:
    with open(os.path.join(where, f"hang-{os.getpid()}"), "w") as fh:
        fh.write(f"{os.getpid()} {child.pid} {escaped.pid}\n")
time.sleep(3600)
