"""A canary that reproduces its issue: it raises with the issue's exact signature."""

raise RuntimeError("FAULT-SIGNATURE: reproduced")
