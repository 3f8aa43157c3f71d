"""MCTS's compiled descent and backup (engine/search/tree_kernel.c) search exactly as the
Python code does: the same trees, node for node, with every statistic equal."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.evaluators import UniformEvaluator
from engine.games.chess.heuristic import ChessMaterialEvaluator
from engine.games.gomoku.heuristic import GomokuHeuristicEvaluator
from engine.games import get_game
from engine.search import mcts as mcts_module
from engine.search.mcts import MCTS, MCTSConfig
from engine.search.tree import Node
from engine.types import Limits

kernel = mcts_module.tree_kernel
pytestmark = pytest.mark.skipif(kernel is None, reason="the tree kernel did not build (no C compiler)")


def _snapshot(node: Node, depth: int = 0) -> dict:
    """Everything a search leaves in a tree, recursively."""
    edges = {a: tuple(e) for a, e in (node.edges or {}).items()}
    proven = None if node.proven is None else [None if math.isnan(v) else v for v in node.proven]
    return {"visits": node.visit_count, "value_sum": node.value_sum_self, "draw_sum": node.draw_sum,
            "child_visits": node.child_visits, "edges": edges, "cursor": node.cursor,
            "solved": node.solved, "solved_plies": node.solved_plies, "proven": proven,
            "children": {a: _snapshot(c, depth + 1) for a, c in sorted(node.children.items())}}


def _search_twice(monkeypatch, evaluator, config: MCTSConfig, states, limits: Limits, searchmoves=None):
    """(snapshots, results) with the kernel, then the same searches in Python."""
    outcomes = []
    for use_kernel in (True, False):
        monkeypatch.setattr(mcts_module, "tree_kernel", kernel if use_kernel else None)
        searcher = MCTS(evaluator, config)
        results = [searcher.search(s, limits) for s in states]   # consecutive: the tree is reused
        if searchmoves is not None:
            results.append(searcher.search(states[-1], Limits(nodes=limits.nodes, searchmoves=searchmoves)))
        outcomes.append(([_snapshot(r) for r in searcher._roots], [(r.best_move, r.visits, r.value) for r in results]))
    return outcomes


def test_kernel_and_python_build_the_same_gomoku_tree(monkeypatch):
    game = get_game("gomoku", width=15, height=15)
    states = [game.state_from_moves([112, 113, 128]), game.state_from_moves([112, 113, 128, 96])]
    config = MCTSConfig(seed=3, leaves_per_batch=8, fpu_reduction=0.25)
    (kernel_tree, kernel_results), (python_tree, python_results) = _search_twice(
        monkeypatch, GomokuHeuristicEvaluator(), config, states, Limits(nodes=600),
        searchmoves=[states[-1].legal_moves()[5], states[-1].legal_moves()[9]])
    assert kernel_results == python_results
    assert kernel_tree == python_tree
    assert kernel_tree[0]["visits"] > 600      # a real tree was compared


def test_kernel_and_python_build_the_same_tree_with_proven_nodes(monkeypatch):
    """Black to move has an open four (and White a four): wins in one, proven in the tree."""
    game = get_game("gomoku", width=9, height=9)
    state = game.state_from_moves([40, 0, 41, 1, 42, 2, 43, 3])
    config = MCTSConfig(seed=1, leaves_per_batch=4, root_tactics=False)
    (kernel_tree, kernel_results), (python_tree, python_results) = _search_twice(
        monkeypatch, GomokuHeuristicEvaluator(), config, [state], Limits(nodes=300))
    assert kernel_results == python_results
    assert kernel_tree == python_tree
    assert kernel_tree[0]["solved"] == 1.0     # proven through the tree, not by a root scan
    assert sum(v is not None for v in kernel_tree[0]["proven"]) > 1


def test_kernel_and_python_build_the_same_chess_tree_with_noise_and_draw_stats(monkeypatch):
    game = get_game("chess")
    start = game.state_from_fen("startpos")
    states = [start, start.play(start.legal_moves()[0])]
    config = MCTSConfig(seed=7, noise=True, leaves_per_batch=16, virtual_loss=2.0, policy_temperature=1.3)
    (kernel_tree, kernel_results), (python_tree, python_results) = _search_twice(
        monkeypatch, ChessMaterialEvaluator(), config, states, Limits(nodes=500))
    assert kernel_results == python_results
    assert kernel_tree == python_tree


def test_kernel_descent_adds_the_virtual_loss_and_names_the_new_leaf():
    game = get_game("gomoku", width=9, height=9)
    root = Node(game.state_from_moves([40]))
    root.expand(UniformEvaluator().evaluate([root.state])[0])
    root.visit_count, root.value_sum_self = 1, 0.25
    path, parent, a = kernel.descend(root, None, 19652.0, 1.25, 0.25, 1.0)
    assert parent is root and a == 0 and path == [(root, 0)]
    assert root.edges == {0: [1.0, -1.0, pytest.approx(1.0 / 80)]} and root.child_visits == 1.0
    assert 0 not in root.children      # the caller creates the leaf
    assert root._prior_view.obj is root.prior      # the kernel's view of the priors, made on demand
    root.prior = np.roll(root.prior, 1)            # new priors: the old view is dropped
    assert root._prior_view is None
    root.prior = np.roll(root.prior, -1)
    child = root.children[0] = Node(root.state.play(root.moves[0]))
    child.pending = True
    root.edges[0] = [1.0, 0.5, root.prior.item(0)]   # as after a backup: visited, value 0.5
    path, leaf, a = kernel.descend(root, None, 19652.0, 1.25, 0.25, 1.0)
    assert (leaf, a) == (None, -1) and path == [(root, 0)]   # collided with the pending leaf


def test_kernel_errors_are_python_errors():
    game = get_game("gomoku", width=9, height=9)
    root = Node(game.state_from_moves([40]))
    root.expand(UniformEvaluator().evaluate([root.state])[0])   # visit_count still 0
    with pytest.raises(ZeroDivisionError):
        kernel.descend(root, None, 19652.0, 1.25, 0.25, 1.0)
    with pytest.raises(TypeError):
        kernel.backup([("not a node step",)], root, 1.0)
    assert np.isfinite(root.prior).all()
    with pytest.raises(TypeError, match="Node class"):
        kernel.bind(root)


def test_a_node_like_object_of_another_class_is_searched_through_getattr():
    """The kernel reads Node's slots directly; a subclass (another layout check) goes
    through getattr and gets the same answer."""
    class TracedNode(Node):
        __slots__ = ()

    game = get_game("gomoku", width=9, height=9)
    answers = []
    for cls in (Node, TracedNode):
        root = cls(game.state_from_moves([40]))
        root.expand(GomokuHeuristicEvaluator().evaluate([root.state])[0])
        root.visit_count, root.value_sum_self = 1, 0.1
        path, parent, a = kernel.descend(root, None, 19652.0, 1.25, 0.25, 1.0)
        answers.append((a, dict(root.edges), root.child_visits))
    assert answers[0] == answers[1] and answers[0][0] >= 0
