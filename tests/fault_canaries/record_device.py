"""A canary that records which device it was given and when it ran, to $FAULT_RECORD_DIR."""

import json
import os
import sys
import time

try:  # what ran, for the doctor's harness: nothing here compiles, the fixture is its own proof
    from indoc_harness import exercised
except ImportError:  # run on its own
    def exercised(what):
        print(what)

exercised("the fault fixture recorded its device (nothing to compile)")
start = time.time()
time.sleep(float(os.environ.get("FAULT_RECORD_SLEEP", "1.0")))
device = sys.argv[1]
with open(os.path.join(os.environ["FAULT_RECORD_DIR"], device.replace(":", "_") + ".json"), "w") as fh:
    json.dump({"device": device, "start": start, "end": time.time(), "pid": os.getpid()}, fh)
