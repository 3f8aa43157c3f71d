#!/bin/bash
# One GPU-machine round for gomoku (issue 25), as run on an H200 box with 16 cores: the scale
# bench, then 400 s of data on all cores (Rapfi teaching the positions of our own games on 8,
# self-play with the shipped network on 8), then a short training run on the GPU.
# Needs: python-chess as a wheel in .whl/, Rapfi (AVX2 build) at .dev/pbrain-rapfi, our games as
# .dev/ours.psq (`arena report DB --pgn`), and .dev/plyzero_cli.py calling engine.cli.main
# under `if __name__ == "__main__"` (or pip install the project there and call `engine`).
# Usage there: DATA_S=400 TRAIN_S=60 bash benchmarks/device_gomoku_round.sh  (files land in $OUT)
export PYTHONUNBUFFERED=1
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; ls engine/search/*.so
nproc; lscpu | grep -E "Model name|Flags" | cut -c1-200; nvidia-smi -L
E="python3 .dev/plyzero_cli.py"
# The recorded round (gomoku-sp1-res6x32) started from gomoku-dagger2-res6x32, retired since:
# `git show dcc3b24:weights/gomoku-dagger2-res6x32.pt > gomoku-dagger2-res6x32.pt`, then W=that file.
W=${W:-weights/gomoku-sp1-res6x32.pt}
RAPFI=$PWD/.dev/pbrain-rapfi
$RAPFI < /dev/null > /dev/null 2>&1; echo "rapfi exit $?"
el "bench"
timeout 50 $E bench --scale --game gomoku --weights $W --device cuda 2>&1 | tee $OUT/bench.txt
el "data"
mkdir -p data/teach data/sp
timeout ${DATA_S:-400} $E teacher --game gomoku --board 15,20 --games 20000 --gomocup $RAPFI --nodes 100000 --gomocup-info max_memory=67108864 --opening-plies 0 --openings .dev/ours.psq --games-per-shard 8 --seed 601 --workers 8 --out data/teach > $OUT/teach.log 2>&1 &
timeout ${DATA_S:-400} $E selfplay --game gomoku --board 15 --weights $W --games 20000 --lockstep 8 --nodes 200 --fast-nodes 50 --full-share 0.25 --temp-plies 8 --resign -0.9 --resign-playthrough 0.2 --seed 602 --workers 8 --out data/sp > $OUT/sp.log 2>&1 &
wait
el "data done"; ls data/teach | wc -l; ls data/sp | wc -l
tar cf $OUT/data.tar data
grep -v "#" $OUT/teach.log | tail -2; grep -v "#" $OUT/sp.log | tail -2
el "train"
timeout ${TRAIN_S:-60} $E train --game gomoku --data data/teach --data data/sp --init $W --steps 400 --batch-size 256 --lr 3e-4 --warmup 20 --checkpoint-every 200 --log-every 50 --no-progress --no-plot --device cuda --run runs/gpu 2>&1 | tee $OUT/train.txt | tail -15
cp runs/gpu/ckpt-*.pt $OUT/ 2>/dev/null; ls runs/gpu
el "end"
