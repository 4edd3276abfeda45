"""Learning-rate schedulers with torch's formulas (``st.optim.lr_scheduler``); see
:mod:`.core` for the base class and the classic schedules, :mod:`.extra` for warm-ups and
combinators, :mod:`.plateau` for ``ReduceLROnPlateau``."""

from . import core, extra
from .core import *  # noqa: F403
from .extra import *  # noqa: F403
from .plateau import ReduceLROnPlateau

__all__ = [*core.__all__, *extra.__all__, "ReduceLROnPlateau"]
