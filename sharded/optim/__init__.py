"""Optimizers with torch's update rules: ``SGD`` (momentum, dampening, Nesterov, weight
decay), ``Adam``, ``AdamW``, ``RMSprop`` and ``Adagrad``, and the learning-rate schedulers of
``st.optim.lr_scheduler``. Updates run in place on the parameters' shards, where they live;
for a replicated parameter every worker applies the same update to its replica."""

from . import lr_scheduler
from .adaptive import Adagrad, Adam, AdamW, RMSprop
from .optimizer import SGD, Optimizer

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
