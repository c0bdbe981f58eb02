"""Patients that misbehave on purpose, for the reliability tests: canaries, a plugin, helpers.

Nothing here ships: the canaries are registered as known issues through a test-only plugin
(`plugin.py` writes its entry point into a temporary directory put on PYTHONPATH), exactly the way
a third-party project registers its issues.
"""
