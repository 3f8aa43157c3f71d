#!/bin/bash
# One device call (issue 27 item 4 + issue 25): rule-aware gomoku data on 16 cores (Rapfi renju
# teacher, renju / caro / freestyle self-play of the shipped network), then GPU fine-tuning of
# the shipped network widened to the codec-2 planes on that data plus the last round's.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
python3 setup.py build_ext --inplace > $OUT/build.log 2>&1; ls engine/search/*.so
nproc; nvidia-smi -L
E="python3 .dev/plyzero_cli.py"
RAPFI=$PWD/.dev/pbrain-rapfi
W=${W:-weights/gomoku-sp1-res6x32.pt}
D=${DATA_S:-300}
el "data"
mkdir -p data
SP="--weights $W --nodes 200 --fast-nodes 50 --full-share 0.25 --temp-plies 8 --resign -0.9 --resign-playthrough 0.2 --games 20000 --lockstep ${LOCK:-8}"
timeout $D $E teacher --game gomoku --board 15 --rule renju --games 20000 --gomocup $RAPFI --nodes 50000 --gomocup-info max_memory=67108864 --opening-plies 6 --games-per-shard ${GPS:-8} --seed $((701 + ${SEED_ADD:-0})) --workers 5 --out data/teach_renju > $OUT/teach_renju.log 2>&1 &
timeout $D $E selfplay --game gomoku --board 15 --rule renju $SP --seed $((702 + ${SEED_ADD:-0})) --workers 3 --out data/sp_renju > $OUT/sp_renju.log 2>&1 &
timeout $D $E selfplay --game gomoku --board 15 --rule caro $SP --seed $((703 + ${SEED_ADD:-0})) --workers 4 --out data/sp_caro > $OUT/sp_caro.log 2>&1 &
timeout $D $E selfplay --game gomoku --board 15,20 --rule freestyle $SP --seed $((704 + ${SEED_ADD:-0})) --workers 4 --out data/sp_free > $OUT/sp_free.log 2>&1 &
wait
el "data done"; for d in data/*; do echo "$d $(ls $d | wc -l)"; done
tar cf $OUT/data.tar data
for f in $OUT/*.log; do echo "$f: $(grep -v '#' $f | grep -v '^\s*$' | tail -1)"; done
el "train"
DATA=""; for d in data/teach_renju data/sp_renju data/sp_caro data/sp_free .dev/old/teach .dev/old/sp .dev/r1/data/*; do ls $d/*.npz > /dev/null 2>&1 && DATA="$DATA --data $d"; done
timeout ${TRAIN_S:-150} $E train --game gomoku $DATA --init ${INIT:-$W} --steps ${STEPS:-1200} --batch-size 256 --lr 3e-4 --warmup 20 --checkpoint-every 300 --log-every 100 --no-progress --device ${DEV:-cuda} --run runs/gpu 2>&1 | tee $OUT/train.txt | tail -25
cp runs/gpu/ckpt-*.pt runs/gpu/*.png runs/gpu/log.jsonl $OUT/ 2>/dev/null; ls runs/gpu
el "end"
