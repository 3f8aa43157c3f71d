#!/bin/bash
# One CPU self-play round for gomoku (issue 25 item 1, issue 27's leagues): the recipe behind caro1-3,
# standard2 and renju2 on a two-core machine.  The network plays itself with the shipped search
# (threat solver included) plus the self-play settings, then trains from itself on those games with
# an anchor towards itself, then meets itself in three matches.  Each step is skipped when its output
# exists, so a killed round reruns with the same command:
#   data/sp       (selfplay.done) SELFPLAY_S [2400] seconds of self-play, at most GAMES [4000] games
#                 on BOARDS [15] under RULE [freestyle]: 200 playouts on half the moves (kept), 50 on
#                 the rest, 8 sampled opening plies, resignation at -0.9 with a fifth played out
#   data/teacher  (teacher.done) instead, with TEACHER (a Gomocup brain's command, e.g. pbrain-rapfi)
#                 and OPENINGS (a .psq of our players' games, `arena report DB --pgn`): the data that made
#                 renju1, the teacher at TEACHER_NODES [100000] nodes a move playing on from partway
#                 through those games, for SELFPLAY_S seconds
#   run/          STEPS [1600] steps from W, anchored to W (weight 0.5), resumed from run/state.pt;
#                 OLD_DATA (shard folders, space-separated) joins the round's data as a replay window
#   cand/NAME.pt  the last checkpoint with its ONNX and int8 exports; validate.txt: W and the
#                 checkpoints on the held-out games of the round's data and of each OLD_DATA folder
#                 (policy top-1, value MSE, sign)
#   gate-*.sqlite NAME against BASE [W] (the shipped default when W is an unshipped round) under RULE,
#                 opening pairs with colours swapped (`--openings even` where the swap2 book has the
#                 rule and board, else random three-stone openings; GATE_OPENINGS=random): 15x15 at 1 s
#                 (GATE_GAMES [100]), 15x15 at 0.2 s (GATE_GAMES), 20x20 at 1 s (GATE20_GAMES [40])
# Usage (a work folder outside the checkout; the environment with `engine` and `arena` active):
#   W=weights/gomoku-renju2-res6x32.pt NAME=gomoku-renju3-res6x32 RULE=renju SEED=4501 WORK=/work/r45 \
#     bash benchmarks/gomoku_selfplay_round.sh
# A teacher round with the last round's games as openings and its shards as the replay window:
#   W=weights/gomoku-renju3-res6x32.pt NAME=gomoku-renju4-res6x32 RULE=renju SEED=5101 STEPS=2000 \
#     TEACHER=/path/to/pbrain-rapfi OPENINGS=ours-renju.psq OLD_DATA=/work/k50/data/sp WORK=/work/k51 \
#     bash benchmarks/gomoku_selfplay_round.sh
# About 40 + 8-15 + 30 + 6 + 15 minutes on two quiet cores (caro: 40 + 11 + 80 + 10 + 20, its games
# often fill the board).  The matches are timed: run nothing else CPU-heavy beside them (the
# self-play counts playouts, not time, and may share the machine).
# A smoke run of every step in about 5 minutes: SELFPLAY_S=60 GAMES=32 STEPS=120 GATE_GAMES=2 GATE20_GAMES=2.
set -e
W=$(realpath "${W:?the network to start from, e.g. weights/gomoku-renju2-res6x32.pt}")
NAME=${NAME:?the candidate\'s name, e.g. gomoku-renju3-res6x32}
RULE=${RULE:-freestyle}
SEED=${SEED:-4501}
STEPS=${STEPS:-1600}
BASE=$(realpath "${BASE:-$W}")
OLD_DIRS=(); for D in ${OLD_DATA:-}; do OLD_DIRS+=("$(realpath "$D")"); done    # resolved before the cd
OLD=(); for D in "${OLD_DIRS[@]}"; do OLD+=(--data "$D"); done
DATA=data/sp; [ -n "${TEACHER:-}" ] && DATA=data/teacher && OPENINGS=$(realpath "${OPENINGS:?a .psq of games to start from}")
mkdir -p "${WORK:?a work folder}" && cd "$WORK"
if [ -n "${TEACHER:-}" ] && [ ! -f teacher.done ]; then
  # 8 games a shard: a killed run loses little, and a rerun finishes the missing shards.
  timeout "${SELFPLAY_S:-2400}" engine teacher --game gomoku --board "${BOARDS:-15}" --rule "$RULE" \
    --gomocup "$TEACHER" --nodes "${TEACHER_NODES:-100000}" --gomocup-info max_memory=67108864 \
    --opening-plies 0 --games 20000 --openings "$OPENINGS" --games-per-shard 8 --workers 2 --seed "$SEED" \
    --out "$DATA" > teacher.log 2>&1 || [ $? = 124 ]
  touch teacher.done
fi
if [ -z "${TEACHER:-}" ] && [ ! -f selfplay.done ]; then
  # timeout, the planned end, stops the workers with the shards already written whole; a rerun
  # skips the finished shards and plays the rest.
  timeout "${SELFPLAY_S:-2400}" engine selfplay --game gomoku --board "${BOARDS:-15}" --rule "$RULE" \
    --weights "$W" --games "${GAMES:-4000}" --nodes 200 --full-share 0.5 --fast-nodes 50 --resign -0.9 \
    --resign-playthrough 0.2 --temp-plies 8 --lockstep 16 --workers 2 --seed "$SEED" --out data/sp \
    > selfplay.log 2>&1 || [ $? = 124 ]
  touch selfplay.done
fi
LAST=run/ckpt-$(printf %07d "$STEPS").pt
if [ ! -f "$LAST" ]; then
  START="--init $W"; [ -f run/state.pt ] && START="--resume"
  WARMUP=$(( STEPS < 1000 ? STEPS / 10 : 100 ))
  engine train --game gomoku --data "$DATA" "${OLD[@]}" $START --anchor "$W" --anchor-weight 0.5 --steps "$STEPS" \
    --batch-size 256 --lr 4e-4 --warmup "$WARMUP" --decay-steps $(( STEPS - WARMUP )) \
    --checkpoint-every $(( STEPS / 4 )) --no-progress --threads 2 --device cpu --seed $(( SEED + 50 )) \
    --run run >> train.log 2>&1
fi
if [ ! -f "cand/$NAME.int8.onnx" ]; then
  mkdir -p cand && cp "$LAST" "cand/$NAME.pt"
  python -m engine.nn.onnx_backend "cand/$NAME.pt" >> train.log 2>&1
  engine quantize "cand/$NAME.pt" --seed $(( SEED % 1000 )) >> train.log 2>&1
fi
if [ ! -s validate.txt ]; then
  for HELD in "$DATA" "${OLD_DIRS[@]}"; do
    for NET in "$W" run/ckpt-*.pt; do
      echo "== $HELD: $NET"; engine validate --game gomoku --data "$HELD" --weights "$NET"
    done
  done > validate.tmp 2>&1 && mv validate.tmp validate.txt
fi
short() { echo "$1" | sed -e 's/^gomoku-//' -e 's/-res.*//'; }    # gomoku-renju3-res6x32 -> renju3
# arena run resumes a database with the same settings, and returns at once from a finished one.
# Openings: the swap2 book's even ones where it has the rule and board (fewer pairs split), else
# seeded random three-stone ones; GATE_OPENINGS=random for the random ones everywhere.
openings() {
  if [ "${GATE_OPENINGS:-even}" = even ] && python -c "import sys; from engine.games.gomoku.swap2_book \
import EVEN_OPENINGS; sys.exit(('$RULE', $1) not in EVEN_OPENINGS)"; then echo "--openings even"
  else echo "--opening-plies 3"; fi
}
gate() {
  arena run --game gomoku --rule "$RULE" --engine "name=$(short "$NAME"),player=mcts,weights=$WORK/cand/$NAME.pt" \
    --engine "name=$(short "$(basename "$BASE" .pt)"),player=mcts,weights=$BASE" $(openings "$1") \
    --concurrency 2 --board "$@" >> gate.log 2>&1
}
gate 15 --games "${GATE_GAMES:-100}" --movetime 1 --seed $(( SEED + 3 )) --db gate-15-1.sqlite
gate 15 --games "${GATE_GAMES:-100}" --movetime 0.2 --seed $(( SEED + 2 )) --db gate-15-0.2.sqlite
gate 20 --games "${GATE20_GAMES:-40}" --movetime 1 --seed $(( SEED + 4 )) --db gate-20-1.sqlite
grep -E "^(Board|Score of|Elo difference|Ptnml)" gate.log | tail -n 12
