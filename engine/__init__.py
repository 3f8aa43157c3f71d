"""PlyZero engine library: rules, evaluators, searchers, networks, training.

No stdin/stdout handling and no subprocesses here; see `protocols/` and `arena/`.
"""
__version__ = "0.1.0"
