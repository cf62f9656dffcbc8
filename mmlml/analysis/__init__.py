"""Analysis maths: the gradients of losses with respect to the logits
(:mod:`.loss_gradients`), how a trained model scores the missing labels
(:mod:`.missing_label_scores`, from the scores of
:mod:`mmlml.apis.model_scores`). Training code does not import it. The
benchmark sweep is :mod:`mmlml.benchmark`."""
from . import missing_label_scores
from .loss_gradients import (PRESETS, TARGET_KINDS, CurveSpec, EvalSettings,
                             GradientCurve, build_loss, compute_curves,
                             gradient_coupling, is_epoch_dependent,
                             loss_gradient, preset_curves, probability_grid,
                             registered_losses, training_progress,
                             uses_tri_state_targets)

__all__ = [
    'TARGET_KINDS', 'PRESETS', 'CurveSpec', 'GradientCurve', 'EvalSettings',
    'registered_losses', 'build_loss', 'is_epoch_dependent',
    'uses_tri_state_targets', 'training_progress', 'probability_grid',
    'gradient_coupling', 'loss_gradient', 'compute_curves', 'preset_curves',
    'missing_label_scores'
]
