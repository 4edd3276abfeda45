"""The layer, container and loss classes of ``st.nn``, one module per kind as torch's
``nn/modules``: ``module`` (Module, Parameter), ``container``, ``linear``, ``activation``,
``attention`` (MultiheadAttention), ``conv``, ``pooling``, ``normalization``, ``dropout``,
``sparse`` (Embedding, EmbeddingBag), ``rnn`` (RNN, LSTM, GRU and their cells), ``flatten``,
``fold``, ``distance``, ``loss``, ``transformer``, ``pixelshuffle`` and ``upsampling``;
``sharded.nn`` re-exports every class named here.
"""

from . import (
    activation,
    attention,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    linear,
    loss,
    module,
    normalization,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .module import IncompatibleKeys as IncompatibleKeys  # load_state_dict's result
from .normalization import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

__all__ = [
    *module.__all__,
    *container.__all__,
    *linear.__all__,
    *activation.__all__,
    *attention.__all__,
    *conv.__all__,
    *pooling.__all__,
    *normalization.__all__,
    *dropout.__all__,
    *sparse.__all__,
    *flatten.__all__,
    *distance.__all__,
    *loss.__all__,
    *transformer.__all__,
    *fold.__all__,
    *pixelshuffle.__all__,
    *upsampling.__all__,
    *rnn.__all__,
]
