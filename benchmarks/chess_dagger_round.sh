#!/bin/bash
# One CPU DAgger round for chess (issue 25, item 3), the recipe behind dagger5, dagger6 and dagger7 on a
# two-core machine: Stockfish labels on the positions our MCTS reached in its games, anchored training
# from the current network on every round's labels, then the candidate against it at fixed playouts.
# Each step is skipped when its output exists, so a killed round reruns with the same command:
#   starts.epd   distinct positions of the games in DBS (arena databases where our player played)
#   data/t       (data/t.done) DATA_S [1500] seconds of Stockfish depth-8 labels, Stockfish playing on from each start
#   run/         STEPS [6000] steps from W, anchored to W (weight 1), on data/t plus OLD_DATA's shard folders
#                (resumed from run/state.pt when it exists)
#   cand/NAME.pt the last checkpoint, with its ONNX and int8 exports
#   ab.sqlite    AB_GAMES [200] games, NAME against W, 400 playouts a move, colours swapped per opening
# Usage (a work folder outside the checkout; Debian's Stockfish at /usr/games/stockfish):
#   W=weights/chess-dagger6-res6x64.pt NAME=chess-dagger7-res6x64 DBS="ab.sqlite sf.sqlite" \
#   OLD_DATA="/work/c16/t /work/c16/g /work/c17/t /work/c18/t" WORK=/work/c19 bash benchmarks/chess_dagger_round.sh
# About 25 + 45 + 25 minutes on two quiet cores (teacher ~145 positions/s, training ~2.3 steps/s at batch 256).
# A smoke run of every step in about 2 minutes: DATA_S=40 STEPS=200 AB_GAMES=2 (STEPS must pass the warmup's 100).
set -e
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
W=$(realpath "${W:?the network to start from, e.g. weights/chess-dagger6-res6x64.pt}")
NAME=${NAME:?the candidate\'s name, e.g. chess-dagger7-res6x64}
SEED=${SEED:-1901}
mkdir -p "${WORK:?a work folder}" && cd "$WORK"
if [ ! -s starts.epd ]; then
  PGNS=""
  for DB in ${DBS:?arena databases of our player\'s games}; do
    PGN=$(basename "$DB" .sqlite).pgn
    arena report "$DB" --pgn "$PGN" --html /dev/null > /dev/null && PGNS="$PGNS $PGN"
  done
  python "$CHECKOUT/benchmarks/pgn_positions.py" starts.epd $PGNS
fi
if [ ! -f data/t.done ]; then
  # A round killed while labelling starts its data again (same seed); timeout, the planned end,
  # stops the teacher mid-shard with the shards already written whole, and marks the data done.
  rm -rf data/t
  timeout "${DATA_S:-1500}" engine teacher --game chess --uci /usr/games/stockfish --uci-option Hash=16 \
    --uci-option Threads=1 --depth 8 --multipv 4 --epsilon 0.05 --max-plies 200 --games 100000 \
    --games-per-shard 8 --openings starts.epd --opening-plies 0 --seed "$SEED" --workers 2 --out data/t \
    > teacher.log 2>&1 || [ $? = 124 ]
  touch data/t.done
fi
STEPS=${STEPS:-6000}
if [ ! -f "run/ckpt-$(printf %07d "$STEPS").pt" ]; then
  DATA="--data data/t"; for D in ${OLD_DATA:-}; do DATA="$DATA --data $D"; done
  START="--init $W"; [ -f run/state.pt ] && START="--resume"
  engine train --game chess $DATA $START --anchor "$W" --anchor-weight 1 --value-blend 1.0 --steps "$STEPS" \
    --batch-size 256 --lr 1e-3 --warmup 100 --decay-steps $(( STEPS - 100 )) --checkpoint-every 1500 \
    --log-every 250 --val-fraction 0.03 --val-samples 4096 --no-progress --no-plot --threads 2 --device cpu \
    --seed $(( SEED + 16 )) --run run >> train.log 2>&1
fi
if [ ! -f "cand/$NAME.int8.onnx" ]; then
  mkdir -p cand && cp "run/ckpt-$(printf %07d "$STEPS").pt" "cand/$NAME.pt"
  python -m engine.nn.onnx_backend "cand/$NAME.pt" >> train.log 2>&1
  engine quantize "cand/$NAME.pt" >> train.log 2>&1
fi
# arena run resumes a database with the same settings, and returns at once from a finished one.
arena run --game chess --engine "name=${NAME%-res*},player=mcts,weights=$WORK/cand/$NAME.pt" \
  --engine "name=$(basename "$W" .pt | sed 's/-res.*//'),player=mcts,weights=$W" \
  --games "${AB_GAMES:-200}" --nodes 400 --concurrency 2 --seed $(( SEED + 10 )) \
  --resign 'movecount=4 score=1000' --db ab.sqlite >> ab.log 2>&1
tail -n 3 ab.log
