"""Validation metrics of a network on held-out samples: what tells a run is learning.

`validate(model, dataset, ...) -> dict` measures, without augmentation and on a fixed
subset (the same positions at every checkpoint and for every network):
  policy_ce      mean cross-entropy of the target against the player's policy
  policy_top1    share of positions where the policy's best move is the target's best
                 (the teacher's move for one-hot targets: agreement with the teacher)
  value_mse      mean (v - t)^2, v = P(win) - P(loss) of the WDL head and t the trained
                 value target (game result blended with the teacher's evaluation)
  value_mse_result   the same against the plain game result (+1 / 0 / -1)
  value_mse_teacher  the same against the teacher's evaluation alone, where there is one
  value_sign     share of decisive positions where sign(v) is the result's sign
  value_ce       cross-entropy of the WDL head against the trained target
All values are from the side to move, in [-1, 1]; MSEs are on that scale (a constant
0 prediction scores 1.0 against decisive results).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from engine.nn.spec import NetConfig
from engine.train.samples import Dataset, sample_batch, value_targets

__all__ = ["validate", "validation_indices"]


def validation_indices(dataset: Dataset, max_samples: int) -> list[tuple[int, np.ndarray]]:
    """(bucket, sorted sample indices) pairs: at most max_samples in all, each bucket in
    proportion to its size, drawn with a fixed seed so every call picks the same ones."""
    total = len(dataset)
    picks = []
    rng = np.random.default_rng(20240601)
    for b, bucket in enumerate(dataset.buckets):
        take = len(bucket) if total <= max_samples else max(1, round(max_samples * len(bucket) / total))
        chosen = np.sort(rng.permutation(len(bucket))[:take]) if take < len(bucket) else np.arange(len(bucket))
        picks.append((b, chosen))
    return picks


@torch.no_grad()
def validate(model: nn.Module, dataset: Dataset, *, value_blend: float, device: str = "cpu",
             max_samples: int = 4096, batch_size: int = 256) -> dict[str, Any]:
    """The metrics of the module docstring, plus `samples` (how many were measured)."""
    from engine.train.trainer import autocast, policy_log_probs

    was_training = model.training
    model.eval()
    sums: dict[str, float] = {k: 0.0 for k in ("policy_ce", "policy_top1", "value_mse", "value_mse_result",
                                                  "value_mse_teacher", "value_sign", "value_ce")}
    counts = {"all": 0, "teacher": 0, "decisive": 0}
    rng = np.random.default_rng(0)   # unused by fixed indices without augmentation
    config: NetConfig = model.config  # type: ignore[assignment]
    in_planes = config.in_planes      # a network of an older codec version reads a prefix
    for bucket, indices in validation_indices(dataset, max_samples):
        for start in range(0, indices.size, batch_size):
            batch = sample_batch(dataset, 0, rng, augment=False, indices=indices[start:start + batch_size],
                                 bucket=bucket)
            with autocast(device):
                outputs = model(torch.from_numpy(batch.planes[:, :in_planes]).to(device))
            legal = torch.from_numpy(batch.legal).to(device)
            target = torch.from_numpy(batch.target).to(device)
            log_p = policy_log_probs(dataset.game, tuple(outputs[:-1]), legal)
            sums["policy_ce"] += float(-(target * log_p.masked_fill(~legal, 0.0)).sum(dim=1).sum())
            best = log_p.masked_fill(~legal, -float("inf")).argmax(dim=1)
            sums["policy_top1"] += float((target.gather(1, best[:, None]).squeeze(1)
                                          >= target.max(dim=1).values - 1e-6).float().sum())
            wdl_log = outputs[-1].float().log_softmax(dim=1)
            wdl = wdl_log.exp().cpu().numpy()
            v = wdl[:, 0] - wdl[:, 2]
            trained = value_targets(batch, value_blend)
            t = trained[:, 0] - trained[:, 2]
            result = 1.0 - batch.wdl.astype(np.float64)   # class 0 win -> +1, 2 loss -> -1
            sums["value_ce"] += float(-(torch.from_numpy(trained).to(device) * wdl_log).sum())
            sums["value_mse"] += float(((v - t) ** 2).sum())
            sums["value_mse_result"] += float(((v - result) ** 2).sum())
            teacher = batch.teacher_wdl
            if teacher is not None:
                has = ~np.isnan(teacher).any(axis=1)
                tv = teacher[has, 0] - teacher[has, 2]
                sums["value_mse_teacher"] += float(((v[has] - tv) ** 2).sum())
                counts["teacher"] += int(has.sum())
            decisive = result != 0
            sums["value_sign"] += float((np.sign(v[decisive]) == result[decisive]).sum())
            counts["decisive"] += int(decisive.sum())
            counts["all"] += int(indices[start:start + batch_size].size)
    if was_training:
        model.train()
    n = max(1, counts["all"])
    metrics: dict[str, Any] = {k: sums[k] / n for k in ("policy_ce", "policy_top1", "value_mse",
                                                          "value_mse_result", "value_ce")}
    metrics["value_mse_teacher"] = sums["value_mse_teacher"] / counts["teacher"] if counts["teacher"] else None
    metrics["value_sign"] = sums["value_sign"] / counts["decisive"] if counts["decisive"] else None
    metrics["samples"] = counts["all"]
    return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in metrics.items()}
