"""The player layer: options declared once, network resolution, build_player's fallbacks."""
from __future__ import annotations

import math

import pathlib

import pytest
from click.testing import CliRunner

from arena.config import BUILTIN_SETTINGS, ConfigError, parse_engine
from engine.games import get_game
from engine.nn.spec import CheckpointError
from engine.players import (PLAYER_NAMES, PLAYER_OPTIONS, PlayerBuildError, PlayerOptions, build_player,
                            make_searcher, network_evaluator, resolve_network)
from engine.players import networks
from engine.search.alphabeta import AlphaBeta
from engine.search.mcts import MCTS
from engine.search.random_player import RandomPlayer
from engine.cli import main
from protocols.uci_options import player_option_lines, set_player_option

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_option_has_a_spec_with_the_field_default():
    names = PlayerOptions.field_names()
    assert [spec.name for spec in PLAYER_OPTIONS] == names
    defaults = PlayerOptions()
    assert all(spec.default == getattr(defaults, spec.name) for spec in PLAYER_OPTIONS)
    assert next(s for s in PLAYER_OPTIONS if s.name == "player").choices == (*PLAYER_NAMES, "auto")


def test_click_flags_are_generated_from_the_schema():
    out = CliRunner().invoke(main, ["uci", "--help"]).output
    for spec in PLAYER_OPTIONS:
        assert f"--{spec.key}" in out, spec.key
    assert CliRunner().invoke(main, ["uci", "--hash", "0"]).exit_code == 2   # the declared range


def test_uci_option_lines_and_setoption_come_from_the_schema():
    lines = player_option_lines(PlayerOptions(hash_mb=32))
    uci_specs = [spec for spec in PLAYER_OPTIONS if spec.uci]
    assert [line.split()[2] for line in lines] == [spec.uci for spec in uci_specs]
    assert "option name Hash type spin default 32 min 1 max 65536" in lines
    assert "option name Nodes type spin default 0 min 0 max 1000000000" in lines
    assert "option name WeightsFile type string default <empty>" in lines
    options = set_player_option(PlayerOptions(), "minibatchsize", "8")
    assert options is not None and options.batch == 8
    assert set_player_option(PlayerOptions(nodes=5), "nodes", "0").nodes is None
    assert set_player_option(PlayerOptions(), "player", "RANDOM").player == "random"
    assert set_player_option(PlayerOptions(), "move overhead", "30") is None   # a server option
    with pytest.raises(ValueError, match="unknown player"):
        set_player_option(PlayerOptions(), "player", "nonsense")
    with pytest.raises(ValueError, match=">= 0"):
        set_player_option(PlayerOptions(), "cpuct", "-1")


def test_arena_settings_are_the_schema_keys_and_are_checked():
    assert set(BUILTIN_SETTINGS) == {spec.key for spec in PLAYER_OPTIONS} - {"player"}
    assert dict(parse_engine("alphabeta:hash=16").settings) == {"hash": "16"}
    with pytest.raises(ConfigError, match="hash"):
        parse_engine("alphabeta:hash=lots")


def test_resolve_network_by_path_name_or_shipped_default(monkeypatch, tmp_path):
    net = tmp_path / "mine.pt"
    net.write_bytes(b"x")
    assert resolve_network("chess", str(net)) == str(net)
    shipped = resolve_network("gomoku", networks.shipped_weights("gomoku").stem)
    assert shipped is not None and pathlib.Path(shipped).is_file()
    monkeypatch.setattr(networks, "shipped_weights", lambda game_name: None)
    assert resolve_network("gomoku", None) is None


def test_mcts_without_a_network_plays_with_the_heuristic_and_says_so(monkeypatch):
    monkeypatch.setattr(networks, "shipped_weights", lambda game_name: None)
    built = build_player(get_game("gomoku", width=9), PlayerOptions(player="mcts", nodes=10))
    assert isinstance(built.searcher, MCTS) and built.player == "mcts"
    assert any("heuristic" in note for note in built.notes)


def test_build_player_falls_back_and_reports_why():
    game = get_game("chess")
    built = build_player(game, PlayerOptions(player="mcts", weights="/nonexistent/net.pt"))
    assert isinstance(built.searcher, AlphaBeta) and built.player == "alphabeta"
    assert built.options.player == "alphabeta" and built.options.weights is None
    assert built.notes[0].startswith("player mcts unavailable (CheckpointError")
    assert built.notes[-1] == "playing with alphabeta"
    with pytest.raises(PlayerBuildError, match="player mcts unavailable"):
        build_player(game, PlayerOptions(player="mcts", weights="/nonexistent/net.pt"), fallbacks=())


def test_a_player_that_cannot_play_the_game_falls_back(monkeypatch):
    """A game whose profile offers no alpha-beta board (a new game, before it has one)."""
    from dataclasses import replace

    import engine.games.gomoku
    monkeypatch.setattr(engine.games.gomoku, "PROFILE", replace(engine.games.gomoku.PROFILE, alphabeta_board=None))
    built = build_player(get_game("gomoku", width=9), PlayerOptions(player="alphabeta"))
    assert isinstance(built.searcher, RandomPlayer)
    assert "alphabeta does not play 'gomoku'" in built.notes[0]


def test_network_evaluator_needs_a_network_for_the_right_game(tmp_path):
    from engine.nn.checkpoint import create_random_checkpoint
    net = tmp_path / "gomoku.pt"
    create_random_checkpoint(net, "gomoku", "res2x32", seed=1)
    with pytest.raises(CheckpointError, match="cannot play chess"):
        network_evaluator(get_game("chess"), str(net), PlayerOptions(device="cpu"), cache_dir=tmp_path)
    with pytest.raises(CheckpointError, match="cannot play chess"):
        make_searcher(get_game("chess"), PlayerOptions(player="mcts", weights=str(net), device="cpu"))


def _imports(path: pathlib.Path) -> list[str]:
    """Module names imported by a source file (any depth: lazy imports count too)."""
    import ast
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


@pytest.mark.parametrize("package, forbidden", [
    ("engine/search", ("engine.players", "engine.cli", "engine.bench", "protocols", "arena")),
    ("engine/nn", ("engine.players", "engine.cli", "engine.bench", "protocols", "arena")),
    ("engine", ("protocols", "arena")),
])
def test_import_directions(package, forbidden):
    """search/ and nn/ import nothing from the player layer above them; engine never
    imports protocols or arena, but for engine/cli, the composition root (the commands that
    start external engines and run the loop's gate)."""
    offenders = [f"{path.relative_to(ROOT)}: {name}" for path in (ROOT / package).rglob("*.py")
                 if not path.relative_to(ROOT).as_posix().startswith("engine/cli/")
                 for name in _imports(path)
                 if any(name == f or name.startswith(f + ".") for f in forbidden)]
    assert offenders == []


def test_protocols_use_no_click():
    """The protocol servers and clients translate; every command line is engine/cli or arena/cli.py."""
    offenders = [path.name for path in (ROOT / "protocols").rglob("*.py")
                 if any(n == "click" or n.startswith("click.") for n in _imports(path))]
    assert offenders == []


def test_version_is_declared_once():
    import engine
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "engine.__version__"' in pyproject
    assert "\nversion = \"" not in pyproject
    from protocols.uci import UciServer
    lines: list[str] = []
    UciServer(PlayerOptions(), lines.append).handle("uci")
    assert lines[0].startswith(f"id name PlyZero {engine.__version__} ")


def test_gomocup_about_names_the_package_version():
    import engine
    from protocols.gomocup import GomocupBrain
    lines: list[str] = []
    GomocupBrain(PlayerOptions(player="random"), lines.append).handle("ABOUT")
    assert f'version="{engine.__version__}"' in lines[0]


def test_uci_server_starts_without_numpy():
    """The option schema and the codec registry load nothing heavy: `uciok` stays fast."""
    import subprocess
    import sys
    probe = "import protocols.uci, engine.players, engine.nn.codecs\nimport sys\nprint('numpy' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class _Named:
    """A searcher stand-in that says who answered."""

    def __init__(self, name: str):
        self.name, self.new_games = name, 0

    def new_game(self) -> None:
        self.new_games += 1

    def search(self, state, limits, *, stop=None, on_info=None):
        return self.name


class _FixedRate:
    """A playout rate stand-in: fixed playouts a second, counting its probes."""

    def __init__(self, per_second: float):
        self.per_second, self.probes = per_second, 0

    def probe(self) -> None:
        self.probes += 1


def test_clock_switch_gives_moves_too_short_for_its_playouts_to_the_fast_searcher():
    from engine.players.clock_switch import ClockSwitch
    from engine.types import Limits
    switch = ClockSwitch(_Named("mcts"), _Named("alphabeta"), 150, _FixedRate(1000))
    state = get_game("chess").initial_state()
    assert switch.search(state, Limits(time=0.1, soft_time=0.03)) == "alphabeta"     # 1+0.01: 30 playouts
    assert switch.search(state, Limits(time=0.9, soft_time=0.3)) == "mcts"           # 10+0.1: 300
    assert switch.search(state, Limits(time=0.97)) == "mcts"                          # movetime 1000
    assert switch.search(state, Limits(time=0.05)) == "alphabeta"                     # movetime 50
    for untimed in (Limits(nodes=400), Limits(depth=6), Limits(infinite=True)):
        assert switch.search(state, untimed) == "mcts"
    switch.new_game()
    assert switch.slow.new_games == switch.fast.new_games == switch.rate.probes == 1


def test_clock_switch_whose_fast_searcher_wins_at_every_clock_analyses_with_it_but_node_limits_stay_mcts():
    """An infinite threshold (chess's compiled alpha-beta): depth limits, infinite analysis and
    a bare `go` go to alpha-beta as every clock does; a node count is MCTS's playouts."""
    from engine.players.clock_switch import ClockSwitch
    from engine.types import Limits
    switch = ClockSwitch(_Named("mcts"), _Named("alphabeta"), math.inf, _FixedRate(1000))
    state = get_game("chess").initial_state()
    for limits in (Limits(time=600.0), Limits(depth=12), Limits(infinite=True), Limits(),
                   Limits(infinite=True, multipv=3), Limits(time=5.0, soft_time=2.0, ponder=True)):
        assert switch.search(state, limits) == "alphabeta", limits
    for limits in (Limits(nodes=800), Limits(nodes=800, time=0.05)):
        assert switch.search(state, limits) == "mcts", limits
    told = ClockSwitch(_Named("mcts"), _Named("alphabeta"), math.inf, _FixedRate(1000), slow_default_nodes=True)
    assert told.search(state, Limits()) == "mcts"              # UCI Nodes set: a bare `go` searches them
    assert told.search(state, Limits(infinite=True)) == "alphabeta"


def test_clock_switch_follows_the_machine_not_the_seconds():
    """The same 5+0.05 budget goes to MCTS on a fast machine and to alpha-beta on one a third as fast."""
    from engine.players.clock_switch import ClockSwitch
    from engine.types import Limits
    five_plus = Limits(time=0.48, soft_time=0.16)
    state = get_game("chess").initial_state()
    fast_machine = ClockSwitch(_Named("mcts"), _Named("alphabeta"), 140, _FixedRate(1450))
    slow_machine = ClockSwitch(_Named("mcts"), _Named("alphabeta"), 140, _FixedRate(480))
    assert fast_machine.search(state, five_plus) == "mcts"
    assert slow_machine.search(state, five_plus) == "alphabeta"
    assert slow_machine.search(state, Limits(time=0.96, soft_time=0.32)) == "mcts"    # 10+0.1 there


class _TimedSearcher:
    """Answers each search with 100 nodes, after `durations` seconds of a fake clock."""

    def __init__(self, clock: list[float], durations: list[float]):
        self.clock, self.durations, self.states, self.new_games = clock, list(durations), [], 0

    def search(self, state, limits, *, stop=None, on_info=None):
        from engine.types import SearchInfo, SearchResult
        self.states.append(state)
        self.clock[0] += self.durations.pop(0)
        return SearchResult(None, 0.0, SearchInfo(depth=1, seldepth=1, value=0.0, nodes=100, time=0.05))

    def new_game(self) -> None:
        self.new_games += 1


def test_playout_rate_is_the_median_of_its_probes_each_from_a_fresh_position():
    from engine.players.clock_switch import PlayoutRate
    clock = [0.0]
    searcher = _TimedSearcher(clock, [0.05, 0.5, 0.05, 0.04])       # the second probe meets a stall
    chess = get_game("chess")
    rate = PlayoutRate(searcher, [chess.initial_state()], clock=lambda: clock[0])
    assert rate.per_second == 0.0                                      # not probed yet
    for _ in range(3):
        rate.probe()
    assert rate.per_second == pytest.approx(2000.0)                   # 100 nodes in 0.05 s; the stall's 200 ignored
    rate.probe()
    assert rate.per_second == pytest.approx(2000.0)                   # median of 2000, 200, 2000, 2500
    assert searcher.new_games == 4                                     # each probe's tree dropped
    assert len({state.key() for state in searcher.states}) == 4       # no probe meets the evaluator's cache
    assert all(state.ply == 4 for state in searcher.states)


def test_player_auto_hands_bullet_moves_to_alphabeta_where_a_game_sets_a_threshold(monkeypatch):
    from dataclasses import replace

    import engine.games.chess
    from engine.players.clock_switch import ClockSwitch
    gomoku = build_player(get_game("gomoku", width=15), PlayerOptions(player="auto"))
    assert isinstance(gomoku.searcher, MCTS)          # gomoku: MCTS at every clock
    chess_profile = engine.games.chess.PROFILE
    monkeypatch.setattr(engine.games.chess, "PROFILE", replace(chess_profile, auto_alphabeta_below_playouts=None))
    assert isinstance(build_player(get_game("chess"), PlayerOptions(player="auto")).searcher, MCTS)
    monkeypatch.setattr(engine.games.chess, "PROFILE", replace(chess_profile, auto_alphabeta_below_playouts=150))
    built = build_player(get_game("chess"), PlayerOptions(player="auto"))
    assert isinstance(built.searcher, ClockSwitch) and built.player == "mcts"
    assert isinstance(built.searcher.slow, MCTS) and isinstance(built.searcher.fast, AlphaBeta)
    assert built.searcher.fast_below_playouts == 150
    assert len(built.searcher.rate.samples) == 2 and built.searcher.rate.per_second > 0   # probed at build
    mcts = build_player(get_game("chess"), PlayerOptions(player="mcts"))
    assert isinstance(mcts.searcher, MCTS)          # asked for by name: MCTS at every clock


def test_chess_auto_plays_alphabeta_at_every_clock_with_the_compiled_tree_and_below_300_playouts_without(
        monkeypatch):
    """The compiled alpha-beta outplays MCTS up to 3 s a move (player-auto.md); the Python one
    only on a bullet clock."""
    from engine.games.chess import native_search
    from engine.players.clock_switch import ClockSwitch
    from engine.types import Limits
    if native_search.kernel is not None:
        built = build_player(get_game("chess"), PlayerOptions(player="auto"))
        assert isinstance(built.searcher, ClockSwitch) and built.searcher.fast_below_playouts == math.inf
        assert built.searcher.pick(Limits(time=600.0)) is built.searcher.fast     # ten minutes a move
        assert built.searcher.pick(Limits(infinite=True)) is built.searcher.fast   # analysis
        assert built.searcher.pick(Limits(nodes=400)) is built.searcher.slow       # playouts
        assert built.searcher.pick(Limits()) is built.searcher.fast
        told = build_player(get_game("chess"), PlayerOptions(player="auto", nodes=300))
        assert told.searcher.pick(Limits()) is told.searcher.slow                 # UCI Nodes 300
    import engine.games.chess
    threshold = engine.games.chess.PROFILE.auto_alphabeta_below_playouts
    monkeypatch.setattr(native_search, "kernel", None)
    assert threshold() == 300
