"""Scratch environments the doctor owns (never the user's): `venv.ScratchVenv`."""
