"""Optimizers with torch's update rules: ``SGD`` (momentum, dampening, Nesterov, weight
decay) and ``Adam``. Updates run in place on the parameters' shards, where they live; for a
replicated parameter every worker applies the same update to its replica."""

from .optimizer import SGD, Adam, Optimizer

__all__ = ["Optimizer", "SGD", "Adam"]
