"""What every part of mmlml shares and no part owns: declared, validated
hyperparameters, the constructors' signatures read along their mmlml
parents, and the training progress (the epoch) read during training."""
from .hyperparameters import (REQUIRED, Choice, Flag, Hyperparameter, Integer,
                              IntegerPair, Real, RealTuple, Rule, Text, Typed,
                              check_hyperparameters, check_settings,
                              hyperparameters_of)
from .progress import (ITERS_PER_EPOCH, TrainingProgress, epoch_progress,
                       training_progress)
from .signatures import constructor_parameters

__all__ = [
    'REQUIRED', 'Hyperparameter', 'Real', 'Integer', 'Flag', 'Choice',
    'RealTuple', 'IntegerPair', 'Text', 'Typed', 'Rule',
    'check_hyperparameters', 'hyperparameters_of', 'check_settings',
    'ITERS_PER_EPOCH', 'TrainingProgress', 'epoch_progress',
    'training_progress', 'constructor_parameters'
]
