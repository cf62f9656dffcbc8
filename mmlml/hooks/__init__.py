"""Training hooks: the missing-label diagnostics, the hooks that keep
per-sample label state (pseudo-labels) in a label store, and the one that
initialises a learnable label estimator (ROLE)."""
from .apl_hook import APLHook
from .class_ap_correction_hook import ClassAPCorrectionHook
from .label_estimator_hook import LabelEstimatorHook
from .label_store_hook import LabelStoreHook
from .large_loss_correction_hook import LargeLossCorrectionHook
from .missing_label_diagnostics_hook import MissingLabelDiagnosticsHook

__all__ = [
    'APLHook', 'LabelEstimatorHook', 'LabelStoreHook',
    'MissingLabelDiagnosticsHook', 'ClassAPCorrectionHook',
    'LargeLossCorrectionHook'
]
