"""What every part of mmlml shares and no part owns: declared, validated
hyperparameters and the training progress (the epoch) read during
training."""
from .hyperparameters import (REQUIRED, Choice, Flag, Hyperparameter, Integer,
                              Real, RealTuple, check_hparam,
                              check_hyperparameters, hyperparameters_of)
from .progress import (ITERS_PER_EPOCH, TrainingProgress, epoch_progress,
                       training_progress)

__all__ = [
    'REQUIRED', 'Hyperparameter', 'Real', 'Integer', 'Flag', 'Choice',
    'RealTuple', 'check_hparam', 'check_hyperparameters', 'hyperparameters_of',
    'ITERS_PER_EPOCH', 'TrainingProgress', 'epoch_progress',
    'training_progress'
]
