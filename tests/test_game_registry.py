"""Per-game knowledge lives in one place: each game's own package (engine/games/<game>/:
rules, codec, evaluation, alpha-beta board, solver, tuned settings, opening book, record
format, in its PROFILE) plus one line in the registry.  Everything else (the engine's other
layers and the arena) asks the game, its profile or its codec."""
from __future__ import annotations

import ast
import pathlib
import random

import pytest

from engine.games import GameSetupError, game_class, game_names, game_on_board, get_game, game_profile
from engine.nn.codecs import codec_names

ROOT = pathlib.Path(__file__).resolve().parent.parent
GAMES = set(game_names())

# Where naming a game is the point: the games' own packages and the registries.
PER_GAME_PACKAGES = tuple(f"engine/games/{name}/" for name in GAMES)
PER_GAME = {"engine/games/__init__.py"}
# Known exceptions, each with its reason; a new one fails until it is listed here.
ALLOWED = {
    ("engine/search/mcts.py", "getattr(state, 'last_move', None)"):
        "subtree reuse follows the last move where a state knows it (both games do; toy states need not)",
}


def _names_a_game(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in GAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_names_a_game(e) for e in node.elts)   # a set of games
    return False


def _sniffs(node: ast.Call) -> bool:
    """hasattr/getattr on a state or a game: asking what a thing is instead of asking it."""
    if not (isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") and node.args):
        return False
    subject = ast.unparse(node.args[0]).lower()
    return "state" in subject or "game" in subject


def _per_game_switches(path: pathlib.Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [o for o in operands if _names_a_game(o)]
            if named and len(named) < len(operands):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and _sniffs(node):
            found.append(ast.unparse(node))
    return found


def test_no_module_outside_the_games_own_tests_a_game_name_or_sniffs_attributes():
    offenders = []
    for path in sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "arena").rglob("*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative in PER_GAME or relative.startswith(PER_GAME_PACKAGES):
            continue
        offenders += [f"{relative}: {switch}" for switch in _per_game_switches(path)
                      if (relative, switch) not in ALLOWED]
    assert offenders == []


def test_the_scan_finds_what_it_is_meant_to_find(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('if game.name == "gomoku": pass\nif "chess" != spec.name: pass\n'
                     'ok = name in ("chess", "gomoku")\nx = hasattr(state, "cells")\n'
                     'y = getattr(getattr(state, "game", None), "name", None)\n'
                     'fine = "chess" == "chess"\nz = hasattr(os, "getuid")\n')
    assert _per_game_switches(probe) == [
        "game.name == 'gomoku'", "'chess' != spec.name", "name in ('chess', 'gomoku')",
        "hasattr(state, 'cells')", "getattr(getattr(state, 'game', None), 'name', None)",
        "getattr(state, 'game', None)"]


def test_every_game_has_a_codec_and_states_its_facts():
    assert set(codec_names()) == GAMES == {"chess", "gomoku"}
    for name in GAMES:
        cls = game_class(name)
        game = get_game(name)
        assert cls.name == game.name == name
        assert game.protocol in ("uci", "gomocup")
        state = game.initial_state()
        assert state.game.name == name
        profile = game_profile(name)
        heuristic = profile.heuristic()
        assert len(heuristic.evaluate([state])[0].priors) == len(state.legal_moves())
        assert -1.0 <= profile.rollout()(state, random.Random(1)) <= 1.0
        positions = cls.bench_positions()
        assert positions and all(s.game.name == name and s.outcome() is None for _, s in positions)
    with pytest.raises(GameSetupError, match="unknown game 'go'"):
        game_class("go")


def test_game_facts_keep_their_values():
    """The values the name switches had: noise, draw cap, bench depth, labels, board settings."""
    chess, gomoku = get_game("chess"), get_game("gomoku", width=9, height=7)
    assert chess.dirichlet_alpha(20) == 0.3 and chess.max_plies == 300 and chess.bench_depth == 6
    assert gomoku.dirichlet_alpha(63) == pytest.approx(10 / 63) and gomoku.dirichlet_alpha(0) == 10.0
    assert gomoku.max_plies is None and gomoku.bench_depth == 9
    assert (chess.label, gomoku.label) == ("chess", "gomoku 9x7")
    assert (chess.stones, gomoku.stones) == (False, True)
    assert game_on_board("chess", 15, 15) is not None and game_on_board("chess", 15, 15).width == 8
    assert game_on_board("gomoku", 12, 10, "standard") == get_game("gomoku", width=12, height=10, rule="standard")
    with pytest.raises(GameSetupError, match="takes no settings"):
        get_game("chess", width=9)


def test_game_spec_round_trips_through_the_game():
    from engine.train.samples import GameSpec
    chess = GameSpec.named("chess")
    assert chess == GameSpec("chess", 8, 8, "") and chess.label == "chess"
    assert GameSpec.of(chess.make()) == chess
    gomoku = GameSpec.named("gomoku", 9, 7, "standard")
    assert gomoku.label == "gomoku9x7" and GameSpec.of(gomoku.make()) == gomoku
    with pytest.raises(GameSetupError):
        GameSpec.named("gomoku", 4, 4)


def test_mcts_root_noise_uses_the_games_alpha(monkeypatch):
    from engine.evaluators import UniformEvaluator
    from engine.search import mcts as mcts_module
    from engine.types import Limits
    alphas: list[float] = []
    real = mcts_module._dirichlet_alpha

    def spy(state, n_moves, configured):
        alphas.append(real(state, n_moves, configured))
        return alphas[-1]

    monkeypatch.setattr(mcts_module, "_dirichlet_alpha", spy)
    for game, expected in ((get_game("chess"), 0.3), (get_game("gomoku", width=7, height=7), 10 / 49)):
        alphas.clear()
        mcts_module.MCTS(UniformEvaluator(), mcts_module.MCTSConfig(noise=True, seed=1)).search(
            game.initial_state(), Limits(nodes=4))
        assert alphas and alphas[0] == pytest.approx(expected)


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_file_level_import_cycle():
    """Top-level imports between our own modules form no cycle (lazy imports inside functions
    are how a layer reaches what it starts on demand, and do not count)."""
    files = [p for package in ("engine", "protocols", "arena", "weights") for p in (ROOT / package).rglob("*.py")]
    modules = {_module_name(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.parse(path.read_text()).body:          # module level only
            if isinstance(node, ast.ImportFrom) and node.module:
                candidates = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            targets |= {c for c in candidates if c in modules and c != name}
        graph[name] = targets
    # a module importing its own package's __init__ is Python's normal order, not a cycle of files
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:                                # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    assert cycles == []
