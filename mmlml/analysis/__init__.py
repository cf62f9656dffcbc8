"""Analysis maths: the gradients of losses with respect to the logits
(:mod:`.loss_gradients`), how a trained model scores the missing labels
(:mod:`.missing_label_scores`, from the scores of
:mod:`mmlml.apis.model_scores`). Training code does not import it. The
benchmark sweep is :mod:`mmlml.benchmark`."""
from . import loss_gradients, missing_label_scores
from .loss_gradients import *  # noqa: F401,F403

__all__ = [*loss_gradients.__all__, 'loss_gradients', 'missing_label_scores']
