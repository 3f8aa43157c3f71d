"""The Gomocup brain keeps one game state: the root it hands to search is the state self-play
reaches by the same moves, last move included (stones, key, last move and network planes)."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

from conftest import console_script, engine_env
from engine.players import PlayerOptions, make_searcher
from engine.games import get_game
from engine.games.gomoku import GomokuGame, GomokuState
from engine.games.gomoku import codec as codec_gomoku
from engine.search.mcts import MCTS, MCTSConfig
from engine.types import Evaluation, Limits, SearchResult
from protocols.gomocup import GomocupBrain
from protocols.gomocup_client import GomocupClient
from protocols.gomocup_policy import follow_stones, format_message


class Scripted:
    """A fake searcher: records each root and answers the next scripted cell (else the first legal)."""

    def __init__(self, answers: list[int] | None = None):
        self.roots: list[GomokuState] = []
        self.answers = list(answers or [])

    def factory(self, game, options):
        return self

    def new_game(self) -> None:
        pass

    def search(self, state, limits, *, stop=None, on_info=None):
        self.roots.append(state)
        move = self.answers.pop(0) if self.answers else state.legal_moves()[0]
        return SearchResult(best_move=move, value=0.0)


class Session:
    """A brain driven in-process, one command at a time (the fake transport: a list of lines)."""

    def __init__(self, width: int = 15, answers: list[int] | None = None, rule: int = 0,
                 fake: Scripted | None = None):
        self.out: list[str] = []
        self.fake = fake if fake is not None else Scripted(answers)
        self.brain = GomocupBrain(PlayerOptions(player="random"), self.out.append,
                                  searcher_factory=self.fake.factory)
        self.send(f"INFO rule {rule}", f"START {width}")

    def send(self, *lines: str) -> list[str]:
        start = len(self.out)
        for line in lines:
            self.brain.handle(line)
        self.brain.wait()
        return self.out[start:]

    def board(self, stones: list[tuple[int, int, int]]) -> str:
        answer = self.send("BOARD", *(f"{x},{y},{f}" for x, y, f in stones), "DONE")
        return [line for line in answer if not line.startswith("MESSAGE")][-1]

    @property
    def root(self) -> GomokuState:
        return self.fake.roots[-1]


def assert_same_root(root: GomokuState, expected: GomokuState) -> None:
    assert root.game == expected.game
    assert root.cells == expected.cells and root.key() == expected.key()
    assert root.ply == expected.ply and root.to_play == expected.to_play
    assert root.last_move == expected.last_move
    assert np.array_equal(codec_gomoku.encode([root]), codec_gomoku.encode([expected]))
    assert codec_gomoku.cache_key(root) == codec_gomoku.cache_key(expected)


def cell(game: GomokuGame, text: str) -> int:
    x, y = (int(v) for v in text.split(","))
    return game.index(x, y)


GAME = get_game("gomoku", width=15)


def test_turn_and_answers_play_onto_one_state():
    s = Session()
    s.send("TURN 7,7")
    assert_same_root(s.root, GAME.state_from_moves([112]))
    assert s.root.last_move == 112          # the last-move plane is set at the root
    s.send("TURN 8,8")                      # the fake answered cell 0 before
    assert_same_root(s.root, GAME.state_from_moves([112, 0, 128]))


def test_begin_then_turns_brain_first():
    s = Session(answers=[112, 113])
    s.send("BEGIN")
    assert_same_root(s.root, GAME.initial_state())
    s.send("TURN 6,6")
    assert_same_root(s.root, GAME.state_from_moves([112, 96]))
    s.send("TURN 9,9")
    assert_same_root(s.root, GAME.state_from_moves([112, 96, 113, 144]))


def test_takeback_rewinds_and_the_last_move_comes_back():
    s = Session(answers=[0, 1, 2])
    s.send("TURN 7,7", "TURN 8,8")          # 112, 0, 128, 1
    assert s.send("TAKEBACK 1,0", "TAKEBACK 8,8") == ["OK", "OK"]
    s.send("TURN 9,9")                      # back at [112, 0], then 144
    assert_same_root(s.root, GAME.state_from_moves([112, 0, 144]))
    assert s.send("TAKEBACK 2,0", "TAKEBACK 9,9", "TAKEBACK 0,0", "TAKEBACK 7,7") == ["OK"] * 4
    s.send("BEGIN")
    assert_same_root(s.root, GAME.initial_state())


def test_takeback_of_an_older_stone_keeps_the_last_move():
    s = Session(answers=[0, 1])
    s.send("TURN 7,7", "TURN 8,8")          # 112, 0, 128, then the brain's 1
    s.send("TAKEBACK 7,7")                  # an older opponent stone: now the brain moves first
    s.send("TURN 5,5")                      # brain {0, 1} vs opponent {128, 80}; 80 is the last move
    root = s.root
    assert root.last_move == 80 and root.to_play == 0
    assert root.cells == GAME.state_from_stones([0, 1], [128, 80]).cells
    assert root.key() == GAME.state_from_stones([0, 1], [128, 80]).key()


def test_restart_empties_the_state():
    s = Session()
    s.send("TURN 7,7", "RESTART", "TURN 3,3")
    assert_same_root(s.root, GAME.state_from_moves([48]))


def test_board_continuing_the_game_plays_on():
    s = Session(answers=[0, 1])
    s.send("TURN 7,7")                                       # 112, brain 0
    s.board([(0, 0, 1), (7, 7, 2), (5, 5, 2)])              # listed out of order: one new stone
    assert_same_root(s.root, GAME.state_from_moves([112, 0, 80]))
    # our answer (1) and the opponent's reply are both new: own stone first, then theirs
    s.send("TAKEBACK 1,0")       # forget our answer: BOARD brings it back with the reply
    s.board([(6, 6, 2), (5, 5, 2), (1, 0, 1), (7, 7, 2), (0, 0, 1)])
    assert_same_root(s.root, GAME.state_from_moves([112, 0, 80, 1, 96]))


def test_board_in_play_order_is_replayed_and_shuffled_stones_are_set_up():
    s = Session()
    moves = [112, 113, 128, 97, 144]                 # the opponent moved first: brain second
    s.board([(m % 15, m // 15, 2 if i % 2 == 0 else 1) for i, m in enumerate(moves)])
    assert_same_root(s.root, GAME.state_from_moves(moves))
    s.send("RESTART")
    listed = [moves[i] for i in (4, 0, 2, 1, 3)]     # not alternating: no order can be read
    s.board([(m % 15, m // 15, 1 if m in (113, 97) else 2) for m in listed])
    assert_same_root(s.root, GAME.state_from_stones([112, 128, 144], [113, 97]))


def test_judge_mode_board_every_move_equals_self_play():
    """The Gomocup judge sends only BOARD: every request lists all stones (here shuffled)."""
    rng = random.Random(5)
    game = get_game("gomoku", width=20, rule="standard")
    brain_moves = rng.sample(range(400), 12)
    s = Session(width=20, answers=list(brain_moves), rule=1)
    played: list[int] = []
    owner: dict[int, int] = {}
    for turn in range(12):
        state = game.state_from_moves(played)
        reply = rng.choice([m for m in state.legal_moves() if m not in brain_moves])
        played.append(reply)
        owner[reply] = 2
        stones = [(m % 20, m // 20, owner[m]) for m in owner]
        rng.shuffle(stones)
        answer = s.board(stones)
        assert_same_root(s.root, game.state_from_moves(played))
        mine = cell(game, answer)
        played.append(mine)
        owner[mine] = 1


def test_info_rule_change_mid_game_replays_the_line_under_the_new_rule():
    s = Session(answers=[0, 1])
    s.send("TURN 7,7", "INFO rule 1", "TURN 8,8")
    standard = get_game("gomoku", width=15, rule="standard")
    assert_same_root(s.root, standard.state_from_moves([112, 0, 128]))


def test_follow_stones_rules():
    line = [GAME.initial_state()]
    line.append(line[-1].play(112))
    after = GAME.state_from_moves([112, 0, 80]).cells
    followed = follow_stones(line, after)
    assert [st.last_move for st in followed] == [None, 112, 0, 80]
    # three new stones: too many to play on; without a listed order: set up, no last move
    more = GAME.state_from_moves([112, 0, 80, 1]).cells
    assert follow_stones(line, more)[-1].last_move is None
    assert follow_stones(line, more, [112, 0, 80, 1])[-1].last_move == 1


# ---- MCTS follows the played moves into its old tree -----------------------------------------
class Uniform:
    def evaluate(self, states):
        return [Evaluation(priors=np.full(len(s.legal_moves()), 1.0 / len(s.legal_moves())), value=0.0)
                for s in states]


class Recording(Scripted):
    """Records each root, then lets a real searcher answer."""

    def __init__(self, searcher):
        super().__init__()
        self.searcher = searcher

    def search(self, state, limits, *, stop=None, on_info=None):
        self.roots.append(state)
        return self.searcher.search(state, limits, stop=stop, on_info=on_info)


def test_mcts_reuses_the_subtree_of_the_played_moves():
    game = get_game("gomoku", width=7)
    mcts = MCTS(Uniform(), MCTSConfig(seed=1, default_nodes=400, leaves_per_batch=4, root_tactics=False))
    s = Session(width=7, fake=Recording(mcts))
    s.send("TURN 3,3")
    first_root = mcts._roots[0]
    answer = cell(game, s.out[-1])
    child = first_root.children[first_root.moves.index(answer)]
    assert child.moves is not None and child.children, "the answer's subtree has grandchildren to reuse"
    reply = child.moves[max(child.children, key=lambda a: child.children[a].visit_count)]
    grandchild = child.children[child.moves.index(reply)]
    visits_before = grandchild.visit_count
    s.send(f"TURN {reply % 7},{reply // 7}")
    assert mcts._roots[0] is grandchild and visits_before > 0
    assert_same_root(s.root, game.state_from_moves([24, answer, reply]))


# ---- the real process, driven by our Gomocup client --------------------------------------------
OPTIONS = PlayerOptions(player="mcts", weights="gomoku", nodes=48, seed=7, batch=8)
CANDIDATES = [(7, 7), (8, 6), (6, 8), (9, 9), (5, 5), (9, 5), (5, 9), (10, 10)]


def _reply(taken: set[tuple[int, int]]) -> tuple[int, int]:
    return next(c for c in CANDIDATES if c not in taken)


def _session(judge_mode: bool) -> list[str]:
    """MESSAGE + move lines of a seeded MCTS brain with the shipped net, TURN-driven or
    BOARD-every-move (stones listed in reverse play order)."""
    argv = [console_script("pbrain-plyzero"), "--player", OPTIONS.player, "--weights", str(OPTIONS.weights),
            "--nodes", str(OPTIONS.nodes), "--seed", str(OPTIONS.seed), "--batch", str(OPTIONS.batch)]
    log: list[str] = []
    with GomocupClient(argv, env=engine_env()) as brain:
        brain.start(15)
        brain.info("timeout_turn", 20000)
        stones: list[tuple[int, int, int]] = []
        for _ in range(4):
            x, y = _reply({(sx, sy) for sx, sy, _ in stones})
            stones.append((x, y, 2))
            if judge_mode:
                answer = brain.board(list(reversed(stones)), timeout=60)
            else:
                answer = brain.turn(x, y, timeout=60)
            stones.append((answer[0], answer[1], 1))
            log.append(f"{re.sub(r' time [0-9]+ms', '', brain.last_message or '')} -> {answer}")
    return log


def _self_play_reference() -> list[str]:
    """The same searcher in-process on the directly played states (what self-play sees)."""
    game = get_game("gomoku", width=15)
    searcher = make_searcher(game, OPTIONS)
    state = game.initial_state()
    log: list[str] = []
    for _ in range(4):
        x, y = _reply({game.coords(m) for m, v in enumerate(state.cells) if v})
        state = state.play(game.index(x, y))
        result = searcher.search(state, Limits(nodes=OPTIONS.nodes))
        assert result.info is not None and result.best_move is not None
        message = format_message(result.info, game)[len("MESSAGE "):]
        log.append(f"{re.sub(r' time [0-9]+ms', '', message)} -> {game.coords(result.best_move)}")
        state = state.play(result.best_move)
    return log


def test_process_plays_the_self_play_states_by_turn_and_in_judge_mode():
    """Same moves, same roots: the process (TURN-driven, and BOARD-every-move as the judge
    does) hands search the states self-play reaches, last move included, so the seeded
    searches agree with an in-process search of those states to the last digit."""
    reference = _self_play_reference()
    assert len(reference) == 4 and all("value" in line for line in reference)
    assert _session(False) == reference
    assert _session(True) == reference
