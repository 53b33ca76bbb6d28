"""Trainer (docs/methods.md §1.9): ``train(TrainOptions(...))`` or ``lineup train``.

    from engine.train import TrainOptions, train
    result = train(TrainOptions(config="default", data="world:/tmp/world", out=Path("runs/default")))
    model = engine.models.load(result.model_dir)
"""

from engine.train.config import RunConfig, TrainConfig, TrainConfigError, load_run_config
from engine.train.data import TrainingDataError
from engine.train.losses import LossResult, compose_losses
from engine.train.state import RunFolder, RunFolderError
from engine.train.trainer import Trainer, TrainingError, TrainOptions, TrainResult, train

__all__ = [
    "LossResult",
    "RunConfig",
    "RunFolder",
    "RunFolderError",
    "TrainConfig",
    "TrainConfigError",
    "TrainOptions",
    "TrainResult",
    "Trainer",
    "TrainingDataError",
    "TrainingError",
    "compose_losses",
    "load_run_config",
    "train",
]
