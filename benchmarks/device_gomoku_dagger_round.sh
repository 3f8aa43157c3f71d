#!/bin/bash
# One GPU-machine round for gomoku (issue 25, sixth round; H200 with 16 cores, 436 s + 85 s):
# the scale bench, then DATA_S seconds of data on all 16 cores: Rapfi (100k nodes a move) plays on
# from partway through our own recent games on 10 workers (DAgger labels), the network W plays
# itself on 6 (the played MCTS plus the self-play settings), both on 15x15 and 20x20; then GPU
# training from W on the new data plus every earlier round's, cosine-decayed.
# Needs (carried; .dev/ is git-ignored): python-chess as a wheel in .whl/, Rapfi's AVX2 build at
# .dev/pbrain-rapfi, .dev/plyzero_cli.py (calls engine.cli.main), W with its int8 export beside it,
# our games as OURS15 / OURS20 (.psq from `arena report DB --pgn`), earlier shards under the
# folders OLD_DATA names (space-separated; each holds one folder of shards per set).
# (.dev/plyzero_cli.py: `from engine.cli import main` then `sys.exit(main())` under `if __name__ == "__main__":`,
# since the worker processes are spawned and re-import it.)
# Usage there: W=.dev/r6/net/gomoku-loop5.pt bash benchmarks/device_gomoku_dagger_round.sh
# (T15_WORKERS, T20_WORKERS, S15_WORKERS, S20_WORKERS: processes per set, 16 in all; STEPS, LR,
# CKPT_EVERY, DATA_S, TRAIN_S, BENCH_S; OLD_DATA= none to train on this round's data alone;
# ANCHOR_WEIGHTS: one training run per weight of the anchor loss towards W, 0 = none [0];
# NETS: one run per shape, 'same' or ones grown from W: deeper (res8x32), reading the line planes
# (res6x32-lines, docs/measurements/issue25-loop.md, sixty-first and sixty-second sessions: about 9 % fewer
# nodes a second, level in play after two CPU rounds) or both (res8x32-lines) [same].)
# Comes back in $OUT, a few files (the device returns at most 8): bench.txt, data.tar (the new shards),
# run-<net>-a<weight>.tar per training run (checkpoints and log.jsonl), logs.tar (every process's log).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
mkdir -p .dev/logs   # the logs come back as one tar: the device returns at most 8 files from $OUT
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
python3 setup.py build_ext --inplace > .dev/logs/build.log 2>&1; ls engine/search/*.so engine/games/gomoku/*.so
nproc; nvidia-smi -L
E="python3 .dev/plyzero_cli.py"
R=$PWD/.dev/pbrain-rapfi
W=${W:-.dev/r6/net/gomoku-loop5.pt}
el "bench"
[ "${BENCH_S:-30}" -gt 0 ] && timeout ${BENCH_S:-30} $E bench --scale --game gomoku --weights $W --device cuda 2>&1 | tee $OUT/bench.txt
D=${DATA_S:-330}
el "data $D s"
mkdir -p data
T="--gomocup $R --nodes 100000 --gomocup-info max_memory=67108864 --opening-plies 0 --games 20000"
timeout $D $E teacher --game gomoku --board 15 $T --openings ${OURS15:-.dev/r6/ours6-15.psq} --games-per-shard 8 --seed $((1001 + ${SEED_ADD:-0})) --workers ${T15_WORKERS:-7} --out data/t15 > .dev/logs/t15.log 2>&1 &
timeout $D $E teacher --game gomoku --board 20 $T --openings ${OURS20:-.dev/r6/ours6-20.psq} --games-per-shard 4 --seed $((1002 + ${SEED_ADD:-0})) --workers ${T20_WORKERS:-3} --out data/t20 > .dev/logs/t20.log 2>&1 &
SP="--weights $W --nodes 200 --fast-nodes 50 --full-share 0.25 --temp-plies 8 --resign -0.9 --resign-playthrough 0.2 --games 20000 --lockstep 8"
timeout $D $E selfplay --game gomoku --board 15 $SP --seed $((1003 + ${SEED_ADD:-0})) --workers ${S15_WORKERS:-4} --out data/s15 > .dev/logs/s15.log 2>&1 &
timeout $D $E selfplay --game gomoku --board 20 $SP --seed $((1004 + ${SEED_ADD:-0})) --workers ${S20_WORKERS:-2} --out data/s20 > .dev/logs/s20.log 2>&1 &
wait
el "data done"; for d in data/*; do echo "$d $(ls $d/*.npz | wc -l)"; done
tar cf $OUT/data.tar data; ls -la $OUT
el "train"
STEPS=${STEPS:-3600}
DATA=""; for d in data/* $(for o in ${OLD_DATA:-.dev/r6/data}; do echo $o/*; done); do ls $d/*.npz > /dev/null 2>&1 && DATA="$DATA --data $d"; done
# One run per network shape and anchor weight (0 = no anchor loss; above 0 the run is also trained
# towards W's own policy and value), each into a fresh run folder: a warm machine keeps the last
# call's runs/.  NETS: W's own shape ("same") and/or ones grown from W ("res8x32", "res6x32-lines").
for NET in ${NETS:-same}; do
for AW in ${ANCHOR_WEIGHTS:-0}; do
  RUN=runs/gpu-$(date +%s)-$NET-a$AW; A=""; [ "$AW" != 0 ] && A="--anchor $W --anchor-weight $AW"
  N=""; [ "$NET" != same ] && N="--net $NET"
  el "train $NET, anchor $AW into $RUN"
  timeout ${TRAIN_S:-110} $E train --game gomoku $DATA --init $W $N $A --steps $STEPS --batch-size 256 --lr ${LR:-4e-4} --warmup 100 --decay-steps $((STEPS - 100)) --checkpoint-every ${CKPT_EVERY:-1200} --log-every 400 --no-progress --no-plot --device cuda --seed $((62 + ${SEED_ADD:-0})) --run $RUN 2>&1 | tee .dev/logs/train-$NET-a$AW.txt | tail -8
  tar cf $OUT/run-$NET-a$AW.tar $RUN/ckpt-*.pt $RUN/log.jsonl; ls $RUN   # one file a run: the device returns at most 8 from $OUT
done
done
tar cf $OUT/logs.tar -C .dev logs
el "end"
