#!/bin/bash
# One GPU-machine DAgger round for chess (issue 25, item 3): the scale bench, then DATA_S seconds of
# Stockfish labels on all the machine's cores, Stockfish playing on from the positions our MCTS
# reached in its games (DAgger: the teacher labels where the student goes; GENERIC_WORKERS [4] of them
# from the built-in suite instead), then GPU training from W
# on those labels, one run per entry of NETS x ANCHOR_WEIGHTS.
# Needs (carried; .dev/ and .whl/ are git-ignored): python-chess and click as wheels in .whl/, Debian's
# Stockfish 15.1 binary xz-compressed at .dev/stockfish.xz (it embeds its NNUE; glibc >= 2.34),
# .dev/plyzero_cli.py (calls engine.cli.main under `if __name__ == "__main__":`, since the teacher's
# worker processes are spawned and re-import it), our games' positions as OURS (EPD, one FEN a line:
# every position of `arena report DB --pgn`'s games after the first ply: benchmarks/pgn_positions.py).
# Usage there: W=weights/chess-dagger6-res6x64.pt OURS=.dev/c16/ours.epd bash benchmarks/device_chess_dagger_round.sh
# (DEVICE [cuda], PASSES [4], OLD_DATA, WORKERS [nproc], DEPTH [8], MULTIPV [4], DATA_S, BENCH_S, STEPS, BATCH, LR, CKPT_EVERY, TRAIN_S, SEED_ADD;
# NETS: 'same' and/or deeper shapes grown from W such as res8x64 [same]; ANCHOR_WEIGHTS [1: the anchored run validated best].)
# Comes back in $OUT (the device returns at most 8 files, 16 MiB each): bench.txt, data-<n>.tar (the
# new shards in parts), run-<net>-a<weight>.tar per training run (last checkpoint, log.jsonl), logs.tar.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
mkdir -p .dev/logs
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
python3 setup.py build_ext --inplace > .dev/logs/build.log 2>&1
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.dev/stockfish.xz'), open('/tmp/stockfish', 'wb'))" && chmod +x /tmp/stockfish
echo "uci" | timeout 5 /tmp/stockfish | grep -m1 "^id name" || { echo "stockfish does not start here"; exit 1; }
nproc; nvidia-smi -L
E="python3 .dev/plyzero_cli.py"
W=${W:-weights/chess-dagger6-res6x64.pt}
el "bench"
[ "${BENCH_S:-30}" -gt 0 ] && timeout ${BENCH_S:-30} $E bench --scale --game chess --weights $W --device ${DEVICE:-cuda} 2>&1 | tee $OUT/bench.txt
D=${DATA_S:-300}
el "data $D s, depth ${DEPTH:-8}, ${WORKERS:-$(nproc)} workers"
TW=$(( ${WORKERS:-$(nproc)} - ${GENERIC_WORKERS:-4} ))
TEACH="--game chess --uci /tmp/stockfish --uci-option Hash=16 --uci-option Threads=1 --depth ${DEPTH:-8} --multipv ${MULTIPV:-4} --epsilon 0.05 --max-plies 200 --games 100000 --games-per-shard 8"
timeout $D $E teacher $TEACH --openings ${OURS:-.dev/c16/ours.epd} --opening-plies 0 --seed $((161 + ${SEED_ADD:-0})) \
  --workers $TW --out data/t > .dev/logs/teacher.log 2>&1 &
# GENERIC_WORKERS play from the built-in opening suite with 4 random plies: positions beyond our few games.
[ "${GENERIC_WORKERS:-4}" -gt 0 ] && timeout $D $E teacher $TEACH --opening-plies 4 --seed $((162 + ${SEED_ADD:-0})) \
  --workers ${GENERIC_WORKERS:-4} --out data/g > .dev/logs/generic.log 2>&1 &
wait
pkill -f /tmp/stockfish; pkill -f multiprocessing.spawn; pkill -f 'plyzero_cli.py teacher'   # a timed-out teacher's workers and engines
el "data done: $(ls data/t/*.npz | wc -l) + $(ls data/g/*.npz 2>/dev/null | wc -l) shards"; tail -n 1 .dev/logs/teacher.log .dev/logs/generic.log
# The shards in parts of at most 15 MiB each (the device returns 16 MiB a file), at most 3 parts
# (64 MiB in all comes back).
ls data/*/*.npz | python3 -c "
import os, sys, tarfile
part, size, out = 0, 0, None
paths = sys.stdin.read().split()
for index, path in enumerate(paths):
    n = os.path.getsize(path)
    if out is None or size + n > 15 * 2**20:
        if out: out.close()
        if part == 3:
            print(f'{len(paths) - index} shards did not fit in 3 parts and stay on the machine')
            break
        part, size = part + 1, 0
        out = tarfile.open(os.path.join(os.environ['OUT'], f'data-{part}.tar'), 'w')
    out.add(path); size += n
out and out.close()"
ls -la $OUT
# This round's shards plus earlier rounds' (OLD_DATA: folders that each hold one folder of shards per set,
# e.g. .dev/c16/d/data from the last round's data-1.tar), so a window can grow over several device tasks.
DIRS=$(echo $(ls -d data/* $(for o in ${OLD_DATA:-}; do echo $o/*; done))); DATA=""; for d in $DIRS; do DATA="$DATA --data $d"; done
# STEPS unset: a 150-step probe measures this machine's steps/s and the runs take what fits in TRAIN_S
# (the learning rate's cosine must end inside the time, or the last checkpoint is taken mid-decay).
if [ -z "$STEPS" ]; then
  $E train --game chess $DATA --init $W --value-blend 1.0 --steps 150 --batch-size ${BATCH:-512} --lr 1e-4 \
    --log-every 50 --checkpoint-every 150 --val-samples 256 --no-progress --no-plot --device ${DEVICE:-cuda} --run runs/probe > .dev/logs/probe.txt 2>&1
  RATE=$(python3 -c "import json; print([d for d in map(json.loads, open('runs/probe/log.jsonl')) if d.get('kind') == 'train'][-1]['steps_per_s'])")
  STEPS=$(python3 -c "print(max(500, int(${RATE:-0} * ${TRAIN_S:-120} * 0.7) // 100 * 100))")
  el "probe: $RATE steps/s at batch ${BATCH:-512}, so $STEPS steps fit in ${TRAIN_S:-120} s"
  # ... but at most PASSES [4] over the data: 17 passes over 186k positions overfitted (issue25-chess-loop.md).
  POSITIONS=$(python3 -c "import glob, numpy; print(sum(len(numpy.load(f)['value']) for d in '$DIRS'.split() for f in glob.glob(d + '/*.npz')))")
  STEPS=$(python3 -c "print(max(500, min($STEPS, ${PASSES:-4} * $POSITIONS // ${BATCH:-512} // 100 * 100)))")
  el "$POSITIONS positions: $STEPS steps a run"
fi
CKPT_EVERY=${CKPT_EVERY:-$(( STEPS / 4 ))}
for NET in ${NETS:-same}; do
for AW in ${ANCHOR_WEIGHTS:-1}; do
  RUN=runs/gpu-$(date +%s)-$NET-a$AW; A=""; [ "$AW" != 0 ] && A="--anchor $W --anchor-weight $AW"
  N=""; [ "$NET" != same ] && N="--net $NET"
  el "train $NET, anchor $AW into $RUN"
  timeout ${TRAIN_S:-120} $E train --game chess $DATA --init $W $N $A --value-blend 1.0 --steps $STEPS \
    --batch-size ${BATCH:-512} --lr ${LR:-1e-3} --warmup 100 --decay-steps $((STEPS - 100)) \
    --checkpoint-every $CKPT_EVERY --log-every 500 --val-fraction 0.03 --val-samples 8192 --no-progress --no-plot \
    --device ${DEVICE:-cuda} --seed $((71 + ${SEED_ADD:-0})) --run $RUN 2>&1 | tee .dev/logs/train-$NET-a$AW.txt | tail -8
  LAST=$(ls $RUN/ckpt-*.pt | tail -1)
  tar cf $OUT/run-$NET-a$AW.tar $LAST $RUN/log.jsonl; ls $RUN
done
done
tar cf $OUT/logs.tar -C .dev logs
el "end"
