"""Trainer (docs/methods.md §1.9): ``train(TrainOptions(...))`` or ``lineup train``.

    from engine.lab.train import TrainOptions, train
    result = train(TrainOptions(config="default", data="world:/tmp/world", out=Path("runs/default")))
    model = engine.retrieval.models.load(result.model_dir)
"""

from engine.lab.train.config import RunConfig, TrainConfig, TrainConfigError, load_run_config
from engine.lab.train.data import TrainingDataError
from engine.lab.train.losses import LossResult, compose_losses
from engine.lab.train.state import RunFolder, RunFolderError
from engine.lab.train.trainer import Trainer, TrainingError, TrainOptions, TrainResult, train

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
