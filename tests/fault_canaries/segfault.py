"""A canary that dies of SIGSEGV, like a miscompiled kernel or a broken extension module."""

import ctypes

ctypes.string_at(0)
