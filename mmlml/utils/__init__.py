"""What every part of mmlml shares and no part owns: declared, validated
hyperparameters and the training progress (the epoch) read during
training."""
from .hyperparameters import (REQUIRED, Choice, Flag, Hyperparameter, Integer,
                              IntegerPair, Real, RealTuple, Rule, Setting,
                              Text, Typed, check_hparam, check_hyperparameters,
                              check_run_rules, check_settings,
                              hyperparameters_of)
from .progress import (ITERS_PER_EPOCH, TrainingProgress, epoch_progress,
                       training_progress)

__all__ = [
    'REQUIRED', 'Hyperparameter', 'Real', 'Integer', 'Flag', 'Choice',
    'RealTuple', 'IntegerPair', 'Setting', 'Text', 'Typed', 'Rule',
    'check_hparam', 'check_hyperparameters', 'hyperparameters_of',
    'check_settings', 'check_run_rules', 'ITERS_PER_EPOCH', 'TrainingProgress',
    'epoch_progress', 'training_progress'
]
