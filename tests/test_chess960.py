"""Chess960 (Fischer random): the rules, the network's castling index, alpha-beta's board,
`plyzero-uci` with UCI_Chess960 driven by python-chess, and `arena run --openings chess960`."""
from __future__ import annotations

import json
import random
import sqlite3

import chess
import chess.engine
import chess.pgn
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_main
from conftest import console_script, engine_env
from engine.games.base import GameSetupError
from engine.games.chess import CHESS960, ChessGame, ChessState, legal_move_list
from engine.games.chess import codec
from engine.games.chess.alphabeta import ChessSearchBoard
from engine.games.chess.openings import ChessOpenings, chess960_suite
from engine.games.chess.rules import board_from_fen_or_epd, chess960_start, needs_chess960

# king f1, rooks b1 and g1 (start position 0 is bbqnnrkr): after 1. Nc3 ... the queenside is
# still closed; this one has both castlings open for white
BOTH_WAYS = "1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R3KR1 w GBgb - 0 1"


def _random_chess960_games(count: int, plies: int, seed: int):
    """(board before, move) along random Chess960 games that castle whenever they may (70 %)."""
    rng = random.Random(seed)
    for _ in range(count):
        board = chess960_start(rng.randrange(960))
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if board.is_castling(m)]
            move = rng.choice(castles) if castles and rng.random() < 0.7 else rng.choice(moves)
            yield board, move
            board.push(move)


def test_chess960_positions_read_as_chess960_and_others_as_standard_chess():
    start = chess960_start(0)
    assert start.chess960 and needs_chess960(start.fen()) and needs_chess960(start.fen(shredder=True))
    assert not needs_chess960(chess.STARTING_FEN)
    assert not needs_chess960(chess960_start(518).fen(shredder=True))      # 518 is standard chess
    assert not needs_chess960("8/8/8/8/8/8/8/K6k w - - 0 1")
    assert not needs_chess960("not a fen")
    assert board_from_fen_or_epd(start.fen(shredder=True))[0].chess960
    board, ops = board_from_fen_or_epd(start.epd(shredder=True) + ' id "sp0";')
    assert board.chess960 and ops == {"id": "sp0"} and board.castling_rights == start.castling_rights
    assert not board_from_fen_or_epd(chess.STARTING_FEN)[0].chess960
    suite = chess960_suite()
    assert len(suite) == 960 and len({o.fen for o in suite}) == 960


def test_the_chess960_game_reads_xfen_and_shredder_fen_and_castles_onto_the_rook():
    for fen in (BOTH_WAYS, BOTH_WAYS.replace("GBgb", "KQkq")):
        state = CHESS960.state_from_fen(fen)
        assert state.game is CHESS960 and state.game.label == "chess960"
        castles = sorted(CHESS960.format_move(state, m) for m in state.legal_moves() if state.board.is_castling(m))
        assert castles == ["f1b1", "f1g1"]
        after = state.play(CHESS960.parse_move(state, "f1g1"))
        assert after.board.piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE)
        assert after.board.piece_at(chess.F1) == chess.Piece(chess.ROOK, chess.WHITE)
    standard = ChessGame().initial_state()
    assert standard.game is not CHESS960 and not standard.board.chess960
    with pytest.raises(GameSetupError):
        CHESS960.state_from_fen("8/8/8 w - - 0 1")


def test_legal_moves_and_policy_indices_on_chess960_boards():
    positions = 0
    for board, _ in _random_chess960_games(40, 80, seed=1):
        state = ChessState(board.copy())
        assert legal_move_list(board) == list(board.legal_moves)
        index = codec.legal_index(state)
        assert len(set(index.tolist())) == len(index), board.fen()          # one index a move
        assert [codec.move_index(state, m) for m in state.legal_moves()] == index.tolist()
        positions += 1
    assert positions > 2000


def test_chess960_castling_has_the_index_the_network_learned_castling_with():
    standard = ChessGame().state_from_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    as_960 = CHESS960.state_from_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w HAha - 0 1")
    for king_to, rook in ((chess.G1, chess.H1), (chess.C1, chess.A1)):
        assert codec.move_index(as_960, chess.Move(chess.E1, rook)) == \
            codec.move_index(standard, chess.Move(chess.E1, king_to))
    # king on f1: O-O-O goes to c1 (three files: learned as such); O-O to g1 is one step, which a
    # plain king move would share, so it keeps the king-onto-rook index
    state = CHESS960.state_from_fen(BOTH_WAYS)
    assert codec.move_index(state, chess.Move(chess.F1, chess.B1)) == \
        codec.move_index(state, chess.Move(chess.F1, chess.C1))
    assert codec.move_index(state, chess.Move(chess.F1, chess.G1)) == chess.F1 * codec.SLOTS + chess.G1


def test_alpha_beta_board_keeps_its_evaluation_through_chess960_castling():
    castles = 0
    for board, move in _random_chess960_games(30, 60, seed=2):
        search_board = ChessSearchBoard(board.copy())
        search_board.push(move)
        assert search_board._evals[-1] == search_board._full_eval(), (board.fen(), move)
        castles += board.is_castling(move)
    assert castles > 20


def test_arena_opening_start_plays_chess960_from_its_fen():
    book = ChessOpenings()
    assert book.load("chess960", [], "") == chess960_suite()
    start, moves = book.start(ChessGame(), chess960_suite()[0])
    assert start.board.chess960 and moves == []
    start, _ = book.start(ChessGame(), chess960_suite()[518])
    assert not start.board.chess960


def test_a_chess_teacher_plays_chess960_from_a_chess960_suite(tmp_path):
    """`engine teacher --openings FILE` with Chess960 positions: its games are Chess960 ones
    (the teacher engine gets UCI_Chess960), not standard chess with the castling rights lost."""
    import sys
    from pathlib import Path
    from engine.train.teacher import TeacherConfig, teacher_batch
    from engine.train.samples import GameSpec, make_sample
    from protocols.uci_teacher import uci_teacher
    suite = tmp_path / "frc.epd"
    suite.write_text(chess960_start(0).epd() + "\n")          # X-FEN: KQkq
    starts = ChessOpenings().teacher_starts(str(suite))["openings"]
    assert starts == (chess960_start(0).fen(shredder=True),)
    fake = (sys.executable, str(Path(__file__).parent / "fakes" / "uci_fake.py"))
    config = TeacherConfig(depth=1, max_plies=4, opening_plies=0, epsilon=0.0, uci=fake, openings=starts)
    samples = teacher_batch(GameSpec("chess", 8, 8, ""), 1, config, seed=0, make_teacher=uci_teacher)
    start = CHESS960.state_from_fen(starts[0])
    assert len(samples) == 4
    assert (samples[0].planes == make_sample(start, [1.0] * len(start.legal_moves())).planes).all()
    assert samples[0].planes[25:29].any()                           # castling rights kept


def test_the_web_board_sets_up_a_chess960_fen_as_chess960():
    from engine.games import board_view
    view = board_view(ChessGame())
    state, setup = view.position(ChessGame(), BOTH_WAYS)
    assert state.board.chess960 and setup == []
    assert {"f1g1", "f1b1"} <= set(view.snapshot(state.game, state)["legal"])
    assert not view.position(ChessGame(), chess.STARTING_FEN)[0].board.chess960


# ------------------------------------------------------------------ as a process

def test_uci_chess960_through_python_chess():
    """python-chess sends UCI_Chess960 and Shredder-FEN for a chess960 board and refuses an
    engine without the option; ours offers it, castles king-onto-rook and plays legal moves."""
    command = [console_script("engine"), "uci", "--player", "alphabeta"]
    with chess.engine.SimpleEngine.popen_uci(command, env=engine_env()) as engine:
        assert engine.options["UCI_Chess960"].type == "check"
        assert engine.options["UCI_Chess960"].default is False
        board = chess.Board(BOTH_WAYS, chess960=True)
        for castle in (chess.Move(chess.F1, chess.G1), chess.Move(chess.F1, chess.B1)):
            result = engine.play(board, chess.engine.Limit(depth=1), root_moves=[castle])
            assert result.move == castle
        rng = random.Random(5)
        board = chess960_start(rng.randrange(960))
        while not board.is_game_over(claim_draw=True) and board.ply() < 40:
            if board.turn == chess.WHITE:
                move = engine.play(board, chess.engine.Limit(time=0.02)).move
                assert move in board.legal_moves
            else:
                moves = list(board.legal_moves)
                castles = [m for m in moves if board.is_castling(m)]
                move = castles[0] if castles else rng.choice(moves)
            board.push(move)
        assert board.ply() >= 20 or board.is_checkmate()


def test_a_bad_uci_chess960_value_is_an_error_line_and_the_option_stays():
    from protocols.uci import UciServer
    from engine.players import PlayerOptions
    lines: list[str] = []
    server = UciServer(PlayerOptions(player="random"), lines.append)
    server.handle("setoption name UCI_Chess960 value perhaps")
    assert lines[-1].startswith("info string error: option 'uci_chess960': expected true or false")
    assert server.game.chess960 is False
    server.handle("setoption name UCI_Chess960 value true")
    server.handle("position fen " + BOTH_WAYS + " moves f1g1")
    assert server.state.board.chess960 and server.state.board.piece_at(chess.G1).piece_type == chess.KING
    server.handle("setoption name UCI_Chess960 value false")
    assert server.game.chess960 is False and not server.state.board.chess960


def test_arena_runs_a_chess960_match_and_writes_chess960_pgn(tmp_path):
    db, pgn = tmp_path / "c960.sqlite", tmp_path / "c960.pgn"
    result = CliRunner().invoke(arena_main, [
        "run", "--game", "chess", "--openings", "chess960", "--engine", "random", "--engine", "alphabeta:depth=1",
        "--games", "4", "--seed", "9", "--maxmoves", "40", "--concurrency", "2",
        "--db", str(db), "--pgn-out", str(pgn)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Games: 4/4" in result.output
    stored = [json.loads(moves) for (moves,) in sqlite3.connect(db).execute("SELECT moves FROM games ORDER BY seq")]
    with open(pgn) as handle:
        games = [chess.pgn.read_game(handle) for _ in range(4)]
    for game, moves in zip(games, stored):
        assert game.headers["Variant"] == "Chess960" and game.headers["Opening"].startswith("chess960 #")
        assert not game.errors and game.board().chess960
        assert [m.uci() for m in game.mainline_moves()] == moves          # every stored move replays
    assert games[0].headers["FEN"] == games[1].headers["FEN"]          # one opening, both colours
    assert games[0].headers["White"] == games[1].headers["Black"]
