"""Training pipeline: samples (npz shards), selfplay (lockstep games), teacher, trainer, jobs.

samples, selfplay, teacher and jobs are numpy-only (the network runs through
engine.nn's evaluator); trainer is the torch training loop.  Import the modules
directly: `from engine.train.selfplay import selfplay_batch`.
"""
__all__ = ["samples", "selfplay", "teacher", "trainer", "jobs"]
