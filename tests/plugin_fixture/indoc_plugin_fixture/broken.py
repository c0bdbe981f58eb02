"""A plugin module that cannot be imported: the doctor must report it and carry on."""

raise RuntimeError("indoc-plugin-fixture: this entry point is broken on purpose")

ISSUES = []  # never reached
