"""Searchers: alpha-beta, neural MCTS, UCT, random.  No torch imports here (a test enforces it)."""
from engine.search.limits import Stopper
from engine.types import Searcher

__all__ = ["Searcher", "Stopper"]
