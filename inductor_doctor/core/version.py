"""The doctor's own version, in a module of its own: every layer may read it without importing the
package's `__init__` (which lazily reaches up to `preflight`)."""

__version__ = "0.1.0"
