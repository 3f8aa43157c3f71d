"""Draw a run's log.jsonl as a PNG: training losses and validation metrics over steps.

matplotlib is optional (the `plot` extra) and imported here only, lazily: training works
without it and says once that no plot is drawn.  `python -m engine.train.plot RUN_DIR`
redraws a run's plot by hand.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["plot_run", "plot_generations", "read_log", "PLOT_FILE"]

PLOT_FILE = "training.png"


def read_log(path: str | Path) -> tuple[list[dict], list[dict]]:
    """(train entries, validation entries) of a log.jsonl, in step order."""
    train: list[dict] = []
    val: list[dict] = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            (val if entry.get("kind") == "val" else train).append(entry)
    return train, val


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> Path | None:
    """Write run_dir/training.png (or `out`) from run_dir/log.jsonl.  None when matplotlib
    is not installed or the log is empty."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    from engine.nn.files import atomic_write

    run_dir = Path(run_dir)
    log = run_dir / "log.jsonl"
    if not log.is_file():
        return None
    train, val = read_log(log)
    if not train and not val:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    losses, ce, top1, value = axes.flat
    for key in ("loss", "policy", "value"):
        losses.plot([e["step"] for e in train], [e[key] for e in train], label=f"train {key}")
    if val:
        steps = [e["step"] for e in val]
        losses.plot(steps, [e["policy_ce"] + e["value_ce"] for e in val], "o-", label="val loss")
        ce.plot(steps, [e["policy_ce"] for e in val], "o-", label="val policy cross-entropy")
        top1.plot(steps, [e["policy_top1"] for e in val], "o-", label="val policy top-1 agreement")
        top1.plot(steps, [e["value_sign"] for e in val], "s-", label="val value sign accuracy")
        for key, label in (("value_mse", "val value MSE (trained target)"),
                           ("value_mse_result", "val value MSE (game result)"),
                           ("value_mse_teacher", "val value MSE (teacher)")):
            points = [(e["step"], e[key]) for e in val if e.get(key) is not None]
            if points:
                value.plot(*zip(*points), "o-", label=label)
    for ax, title in ((losses, "loss"), (ce, "policy cross-entropy"), (top1, "accuracy"),
                      (value, "value MSE")):
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    fig.suptitle(run_dir.name)
    fig.tight_layout()
    target = Path(out) if out is not None else run_dir / PLOT_FILE
    atomic_write(target, lambda handle: fig.savefig(handle, format="png", dpi=80))
    plt.close(fig)
    return target


def plot_generations(run_dir: str | Path, baseline: dict[str, dict], history: list[dict]) -> Path | None:
    """Write a loop's run_dir/training.png: each held-out set's policy top-1, value MSE
    against the result and value sign accuracy, per generation (0: the starting network).
    None when matplotlib is not installed or nothing was measured."""
    names = sorted({*baseline, *(name for h in history for name in h.get("validation", {}))})
    if not names:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    from engine.nn.files import atomic_write

    points = [(0, baseline)] if baseline else []
    points += [(h["generation"], h.get("validation", {})) for h in history]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, key, title in zip(axes, ("policy_top1", "value_mse_result", "value_sign"),
                              ("policy top-1", "value MSE vs result", "value sign accuracy")):
        for name in names:
            series = [(g, m[name][key]) for g, m in points if name in m and m[name].get(key) is not None]
            if series:
                ax.plot(*zip(*series), "o-", label=name)
        ax.set_title(title)
        ax.set_xlabel("generation")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    fig.suptitle(f"{Path(run_dir).name}: held-out validation per generation")
    fig.tight_layout()
    target = Path(run_dir) / PLOT_FILE
    atomic_write(target, lambda handle: fig.savefig(handle, format="png", dpi=80))
    plt.close(fig)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m engine.train.plot RUN_DIR")
    written = plot_run(sys.argv[1])
    print(written if written is not None else "nothing drawn (no log, or matplotlib is not installed)")
