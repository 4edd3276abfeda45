"""Training utilities (``st.nn.utils``), laid out as torch's: gradient clipping
(:mod:`.clip_grad`) and the packed sequences of the recurrent layers (:mod:`.rnn`)."""

from . import rnn
from .clip_grad import clip_grad_norm_

__all__ = ["clip_grad_norm_", "rnn"]
