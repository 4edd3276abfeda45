from typing import Any

from sharded.nn.utils import rnn as rnn

def clip_grad_norm_(
    parameters, max_norm, norm_type=..., error_if_nonfinite=..., foreach=...
) -> Any:
    """Scale the gradients of ``parameters`` in place so that their joint ``norm_type``-norm is
    at most ``max_norm`` (by ``max_norm / (total + 1e-6)`` when above); returns the total
    norm (a 0-d tensor), as ``torch.nn.utils.clip_grad_norm_``."""
