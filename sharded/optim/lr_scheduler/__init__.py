"""Learning-rate schedulers with torch's formulas (``st.optim.lr_scheduler``); see
:mod:`.core` for the base class and the classic schedules, :mod:`.extra` for warm-ups and
combinators, :mod:`.plateau` for ``ReduceLROnPlateau``."""

from .core import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LRScheduler,
    MultiStepLR,
    OneCycleLR,
    StepLR,
)
from .extra import (
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingWarmRestarts,
    LinearLR,
    MultiplicativeLR,
    PolynomialLR,
    SequentialLR,
)
from .plateau import ReduceLROnPlateau

__all__ = [
    "LRScheduler",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LambdaLR",
    "OneCycleLR",
    "ConstantLR",
    "LinearLR",
    "MultiplicativeLR",
    "PolynomialLR",
    "CosineAnnealingWarmRestarts",
    "SequentialLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
]
