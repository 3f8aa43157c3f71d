"""Build step for the compiled parts, both optional (an install without a C compiler still
succeeds; everything else is in pyproject.toml):
- the gomoku threat solver's C core, loaded with ctypes (engine/games/gomoku/threat_kernel.py); without
  it the gomoku players play without the solver, saying so;
- MCTS's descent and backup (engine/search/tree_kernel.c, a CPython extension); without it
  engine/search/mcts.py runs the same search in Python, slower;
- chess legal-move generation (engine/games/chess/movegen_kernel.c, a CPython extension); without
  it engine/games/chess/rules.py makes the same move lists with python-chess, slower;
- the chess alpha-beta tree (engine/games/chess/search_kernel.c, a CPython extension on the same
  move generator, movegen_core.h); without it alpha-beta searches chess in Python, shallower."""
from setuptools import Extension, setup

setup(ext_modules=[
    # -O3 here only: 1.3x the threat solver's nodes/s, the same searches (issue25-tactics.md)
    Extension("engine.games.gomoku._threat_kernel", ["engine/games/gomoku/threat_kernel.c"],
              extra_compile_args=["-O3", "-std=c99"], optional=True),
    Extension("engine.search._tree_kernel", ["engine/search/tree_kernel.c"],
              extra_compile_args=["-O2", "-ffp-contract=off"], optional=True),
    Extension("engine.games.chess._movegen_kernel", ["engine/games/chess/movegen_kernel.c"],
              depends=["engine/games/chess/movegen_core.h"], extra_compile_args=["-O2"], optional=True),
    Extension("engine.games.chess._search_kernel", ["engine/games/chess/search_kernel.c"],
              depends=["engine/games/chess/movegen_core.h"], extra_compile_args=["-O2"], optional=True),
])
