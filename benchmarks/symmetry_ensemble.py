"""Gomoku: how much better a network is when its outputs are averaged over the board's symmetries.

    python benchmarks/symmetry_ensemble.py WEIGHTS.pt SHARDS [SHARDS ...]

On every position of the shards (teacher labels such as `engine teacher --gomocup pbrain-rapfi`
writes, none of them trained on), the network's policy and value are measured three ways: as
played (one view of the board), from one random view, and as the mean of its probabilities over
all eight views (four on rectangles).  Printed per way: policy top-1 agreement with the target,
policy cross-entropy, value MSE against the game result and against the teacher's evaluation.
The gap between the first and the last is what the network has not learned of the game's
symmetry: an upper bound on what distilling the average into it could give (issue 25).
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

from engine.games.gomoku import symmetry_permutations
from engine.nn.checkpoint import load_checkpoint
from engine.train.samples import read_shards, sample_batch, shard_paths
from engine.train.trainer import policy_log_probs
from engine.train.validate import validation_indices

WAYS = ("as played", "one random view", "mean of the views")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weights")
    parser.add_argument("shards", nargs="+")
    args = parser.parse_args()
    try:   # CheckpointError, ShardError: one line each
        model, _ = load_checkpoint(args.weights, expect_game="gomoku")
        data = read_shards(shard_paths(args.shards), expect_game="gomoku")
    except ValueError as exc:
        raise SystemExit(f"symmetry_ensemble: {exc}") from None
    model.eval()
    rng = np.random.default_rng(0)
    sums = {way: np.zeros(4) for way in WAYS}
    teacher_count = total = 0
    for bucket, indices in validation_indices(data, 10**9):
        for start in range(0, indices.size, 256):
            batch = sample_batch(data, 0, rng, augment=False, indices=indices[start:start + 256], bucket=bucket)
            planes = torch.from_numpy(batch.planes[:, :model.config.in_planes])
            legal, target = torch.from_numpy(batch.legal), torch.from_numpy(batch.target)
            probs, values = [], []
            b, c, height, width = planes.shape
            flat = planes.reshape(b, c, -1)
            with torch.no_grad():
                for perm in map(torch.tensor, symmetry_permutations(width, height)):   # identity first
                    moved = torch.empty_like(flat)
                    moved[:, :, perm] = flat                   # cell i goes to perm[i]
                    policy, wdl = model(moved.reshape(b, c, height, width))
                    policy = policy.reshape(b, -1)[:, perm]    # back to the position's own frame
                    probs.append(policy_log_probs("gomoku", (policy,), legal).exp())
                    wdl = wdl.float().softmax(dim=1)
                    values.append((wdl[:, 0] - wdl[:, 2]).numpy())
            n = len(values[0])
            pick = rng.integers(0, len(values), size=n)
            stacked, value_stack = torch.stack(probs), np.stack(values)
            ways = {WAYS[0]: (probs[0], values[0]),
                    WAYS[1]: (stacked[pick, np.arange(n)], value_stack[pick, np.arange(n)]),
                    WAYS[2]: (stacked.mean(dim=0), value_stack.mean(axis=0))}
            result = 1.0 - batch.wdl.astype(np.float64)
            teacher = batch.teacher_wdl
            has = ~np.isnan(teacher).any(axis=1) if teacher is not None else np.zeros(n, dtype=bool)
            for way, (p, v) in ways.items():
                log_p = p.clamp_min(1e-30).log().masked_fill(~legal, -1e9)
                best = log_p.argmax(dim=1)
                top1 = (target.gather(1, best[:, None]).squeeze(1) >= target.max(dim=1).values - 1e-6).sum()
                ce = -(target * log_p.masked_fill(~legal, 0.0)).sum()
                teacher_mse = ((v[has] - (teacher[has, 0] - teacher[has, 2])) ** 2).sum() if has.any() else 0.0
                sums[way] += [float(top1), float(ce), float(((v - result) ** 2).sum()), float(teacher_mse)]
            teacher_count += int(has.sum())
            total += n
    print(f"{total} positions ({teacher_count} with a teacher's evaluation), {args.weights}")
    for way, s in sums.items():
        print(f"{way:18s} top-1 {s[0] / total:.4f}  cross-entropy {s[1] / total:.4f}  "
              f"value MSE vs result {s[2] / total:.4f}  vs teacher {s[3] / max(1, teacher_count):.4f}")


if __name__ == "__main__":
    main()
