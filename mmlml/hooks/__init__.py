"""Training hooks: the missing-label diagnostics; the hooks that keep
per-sample label state (pseudo-labels) in a label store; the one that
initialises a learnable label estimator (ROLE); and the two that keep a run
honest: epoch-dependent losses following an iteration-based loop
(``TrainingProgressHook``) and no resuming from another run's checkpoint
(``ResumeCheckHook``); and the check of settings that disagree with each
other (``TrainingSetupCheckHook``); and the model card of a run
(``ModelCardHook``). The hook that prunes a benchmark
sweep's trials lives with the sweep
(:mod:`mmlml.benchmark.training.optuna_pruning_hook`)."""
from .apl_hook import APLHook
from .class_ap_correction_hook import ClassAPCorrectionHook
from .class_prior_hook import ClassPriorHook
from .epoch_scores_hook import EpochScoresHook
from .label_estimator_hook import LabelEstimatorHook
from .label_store_hook import LabelStoreHook
from .large_loss_correction_hook import LargeLossCorrectionHook
from .missing_label_diagnostics_hook import MissingLabelDiagnosticsHook
from .model_card_hook import ModelCardHook
from .random_state_hook import RandomStateHook
from .resume_check_hook import ResumeCheckHook
from .training_progress_hook import TrainingProgressHook
from .training_setup_check_hook import TrainingSetupCheckHook
from .vl_pseudo_label_hook import VLPseudoLabelHook

__all__ = [
    'APLHook', 'LabelEstimatorHook', 'LabelStoreHook',
    'MissingLabelDiagnosticsHook', 'ModelCardHook', 'ClassAPCorrectionHook',
    'ClassPriorHook', 'EpochScoresHook', 'LargeLossCorrectionHook',
    'RandomStateHook', 'ResumeCheckHook', 'TrainingProgressHook',
    'TrainingSetupCheckHook', 'VLPseudoLabelHook'
]
