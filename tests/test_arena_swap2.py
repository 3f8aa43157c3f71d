"""`arena run --swap2`: the engines place the opening by swap2 (arena/swap2.py), driven through
the Gomocup client against fake brains whose answers are scripted (tests/fakes/gomocup_fake.py)."""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import build_config

FAKE = Path(__file__).parent / "fakes" / "gomocup_fake.py"


@pytest.fixture(autouse=True)
def _no_unbuffered(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)


def play(tmp_path: Path, mode_a: str, mode_b: str) -> list[dict]:
    """Two games (a pair) between fakes A and B on 9x9 with --swap2; the stored rows, in order."""
    engines = []
    for name, mode in (("A", mode_a), ("B", mode_b)):
        engines += ["--engine", f"name={name},cmd={sys.executable} {FAKE} {mode},proto=gomocup"]
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(main, ["run", "--game", "gomoku", "--board", "9", "--swap2", "--games", "2",
                                       "--movetime", "0.05", "--margin", "0.3", "--concurrency", "1",
                                       "--db", str(db), "--no-check", *engines])
    assert result.exit_code == 0, result.output
    assert "Games: 2/2" in result.output
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    rows = [dict(row) for row in connection.execute("SELECT * FROM games ORDER BY seq")]
    for row in rows:
        row["moves"], row["times"] = json.loads(row["moves"]), json.loads(row["times"])
    return rows


PROPOSAL = ["4,4", "4,3", "5,5"]      # the fake's three stones on 9x9


def test_the_chooser_that_swaps_plays_black_and_the_proposer_white_moves_next(tmp_path):
    first, second = play(tmp_path, "ok", "swap2-swap")
    # game 1: A proposes, B swaps: B is black, A (white) plays the fourth stone as a timed move
    assert (first["first"], first["second"]) == ("B", "A") and first["forfeit"] is None
    assert first["moves"][:3] == PROPOSAL and first["opening_plies"] == 3
    assert first["opening"] == "swap2: " + " ".join(PROPOSAL)
    assert len(first["times"]) == len(first["moves"]) - 3
    # game 2: B proposes, A stays white with its fourth stone: B is black again
    assert (second["first"], second["second"]) == ("B", "A") and second["forfeit"] is None
    assert second["moves"][:3] == PROPOSAL and second["moves"][3] not in PROPOSAL
    assert len(second["times"]) == len(second["moves"]) - 3


def test_two_more_stones_hand_the_choice_back_to_the_proposer(tmp_path):
    first, _ = play(tmp_path, "ok", "swap2-place")
    # A proposes, B places the fourth and fifth, A stays white and plays the sixth: B is black
    assert (first["first"], first["second"]) == ("B", "A") and first["forfeit"] is None
    assert first["opening_plies"] == 5 and first["moves"][:3] == PROPOSAL
    assert len(set(first["moves"][:6])) == 6
    assert len(first["times"]) == len(first["moves"]) - 5


def test_a_bad_proposal_loses_for_the_proposer_only(tmp_path):
    first, second = play(tmp_path, "swap2-bad", "ok")
    assert first["forfeit"] == "A" and first["first"] == "A" and first["score"] == 0.0
    assert "bad swap2 answer (2 stones, expected 3)" in first["reason"]
    assert second["forfeit"] is None and second["opening_plies"] == 3


@pytest.mark.parametrize("extra,message", [
    (["--game", "chess"], "swap2 is a gomoku opening"),
    (["--game", "gomoku", "--opening-plies", "3"], "leave out openings and opening_plies"),
])
def test_swap2_with_settings_it_replaces_is_refused(tmp_path, extra, message):
    result = CliRunner().invoke(main, ["run", "--swap2", "--engine", "random", "--engine", "alphabeta",
                                       "--db", str(tmp_path / "x.sqlite"), "--no-check", *extra])
    assert result.exit_code != 0 and message in result.output


def test_swap2_off_leaves_the_resume_keys_of_older_databases_alone():
    import hashlib
    from dataclasses import asdict

    flags = {"game": "gomoku", "engine": ["random", "alphabeta"]}
    plain = build_config({}, flags)
    assert build_config({}, {**flags, "swap2": True}).fingerprint() != plain.fingerprint()
    # the fingerprint of a config without swap2 is the one the code before swap2 computed
    payload = {k: v for k, v in asdict(plain).items()
               if k not in ("games", "format", "concurrency", "db", "pgn_out", "sprt", "boards", "swap2")}
    text = json.dumps(payload, sort_keys=True, default=str)
    assert plain.fingerprint() == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_the_client_sends_the_stones_as_board_lines_seen_by_the_side_to_move(tmp_path):
    """Rapfi refuses SWAP2BOARD's stones without a field: each goes as `x,y,field`, 1 for the
    stones of the brain asked (the side to move), 2 for the others."""
    from protocols.gomocup_client import GomocupClient

    log = tmp_path / "commands.log"
    with GomocupClient([sys.executable, str(FAKE), "ok", "1", "0", str(log)]) as client:
        client.start(9)
        assert client.swap2board([(4, 4), (4, 3), (5, 5)], timeout=5.0) is not None
        assert client.swap2board([(4, 4), (4, 3), (5, 5), (3, 3), (6, 6)], timeout=5.0) is not None
    lines = log.read_text().splitlines()
    assert lines[1:6] == ["SWAP2BOARD", "4,4,2", "4,3,1", "5,5,2", "DONE"]
    assert lines[6:13] == ["SWAP2BOARD", "4,4,2", "4,3,1", "5,5,2", "3,3,1", "6,6,2", "DONE"]
