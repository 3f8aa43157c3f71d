"""Build step for the one compiled part: the gomoku threat solver's C core, loaded with ctypes
(engine/search/threat_kernel.py).  Optional: without a C compiler the install still succeeds
and the gomoku players play without the solver, saying so.  Everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("engine.search._threat_kernel", ["engine/search/threat_kernel.c"],
                             extra_compile_args=["-O2", "-std=c99"], optional=True)])
