"""Losses for multi-label learning with partial labels.

Paper losses: Hill, focal margin and SPLC (Zhang et al.), LASD, GR (generalized
robust loss), EM (entropy maximisation), OPML / ZLPR and the high-rank
regulariser. Baselines: AN, WAN, AN-LS / N-LS, EPR, Large Loss (R, Ct),
focal, ASL, EntMin and MSE on negatives.
"""
from .assume_negative import (ANLoss, ANLSLoss, NegativeMSELoss, WANLoss,
                              assume_negative_loss, negative_mse_loss)
from .base import (NEGATIVE, POSITIVE, UNKNOWN, PartialLabelLoss,
                   TrainingProgress, check_hparam, partial_label_loss,
                   prepare_inputs, reduce_loss)
from .combined import LossSum
from .em import EMLoss, em_loss
from .entmin import EntMinLoss, entmin_loss
from .epr import EPRLoss, epr_loss
from .focal import (PartialAsymmetricLoss, PartialFocalLoss,
                    asymmetric_focal_loss)
from .gr import GRLoss, gce_term, gr_loss, gr_loss_with_weights
from .high_rank import HighRankRegularizer, high_rank_loss
from .hill import FocalMarginLoss, HillLoss, focal_margin_loss, hill_loss
from .large_loss import (LargeLoss, large_loss, num_large_losses,
                         select_large_losses)
from .lasd import LASDLoss, lasd_lambda_neg, lasd_loss
from .opml import OPMLLoss, ZLPRLoss, opml_loss, zlpr_loss
from .splc import (SPLC_BASES, SPLCLoss, splc_corrected_target, splc_loss,
                   splc_pseudo_positives)

__all__ = [
    'NEGATIVE', 'POSITIVE', 'UNKNOWN', 'PartialLabelLoss', 'TrainingProgress',
    'check_hparam', 'partial_label_loss', 'prepare_inputs', 'reduce_loss',
    'FocalMarginLoss', 'HillLoss', 'focal_margin_loss', 'hill_loss',
    'SPLCLoss', 'SPLC_BASES', 'splc_corrected_target', 'splc_loss',
    'splc_pseudo_positives', 'LASDLoss',
    'lasd_lambda_neg', 'lasd_loss', 'GRLoss', 'gce_term', 'gr_loss',
    'gr_loss_with_weights', 'EMLoss', 'em_loss', 'OPMLLoss', 'ZLPRLoss',
    'opml_loss', 'zlpr_loss', 'HighRankRegularizer', 'high_rank_loss',
    'LossSum', 'ANLSLoss', 'ANLoss', 'NegativeMSELoss', 'WANLoss',
    'assume_negative_loss', 'negative_mse_loss', 'EPRLoss', 'epr_loss',
    'LargeLoss', 'large_loss', 'num_large_losses', 'select_large_losses',
    'PartialAsymmetricLoss', 'PartialFocalLoss', 'asymmetric_focal_loss',
    'EntMinLoss', 'entmin_loss'
]
