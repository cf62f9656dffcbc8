"""Losses for multi-label learning with partial labels, one file per loss,
named for its class.

Paper losses: Hill, focal margin and SPLC (Zhang et al.), LASD, GR
(generalized robust loss), EM (entropy maximisation), OPML / ZLPR and the
high-rank regulariser, CRISP (class-prior weighted risk), VLPL and AEVLP's
GPR (on vision-language pseudo-labels). Baselines: AN, WAN, AN-LS / N-LS,
EPR, Large Loss (R, Ct), focal, ASL, EntMin and MSE on negatives.
``LossSum`` adds several of them. :data:`LOSS_CATALOG` lists them all with
the arguments they need.
"""
from mmlml.utils.progress import TrainingProgress
from .an_loss import ANLoss, assume_negative_loss
from .anls_loss import ANLSLoss
from .base import PartialLabelLoss, partial_label_loss
from .catalog import EXAMPLE_STATE, LOSS_CATALOG, example_state
from .crisp_loss import CRISPLoss, crisp_loss
from .em_apl_loss import EMAPLLoss, em_apl_loss
from .em_loss import EMLoss, em_loss
from .entmin_loss import EntMinLoss, entmin_loss
from .epr_loss import EPRLoss, epr_loss
from .focal_margin_loss import FocalMarginLoss, focal_margin_loss
from .gpr_loss import GPRLoss, gpr_loss
from .gr_loss import GRLoss, gce_term, gr_loss, gr_loss_with_weights
from .high_rank_regularizer import HighRankRegularizer, high_rank_loss
from .hill_loss import HillLoss, hill_loss
from .large_loss import (LargeLoss, large_loss, large_loss_selection,
                         num_large_losses, select_large_losses)
from .lasd_loss import LASDLoss, lasd_lambda_neg, lasd_loss
from .loss_sum import LossSum
from .negative_mse_loss import NegativeMSELoss, negative_mse_loss
from .opml_loss import OPMLLoss, opml_loss
from .opml_sp_loss import OPMLSPLoss, opml_sp_loss, opml_sp_targets
from .partial_asymmetric_loss import (PartialAsymmetricLoss,
                                      asymmetric_focal_loss)
from .partial_focal_loss import PartialFocalLoss
from .role_loss import ROLELoss, role_loss
from .splc_loss import (SPLC_BASES, SPLCLoss, splc_corrected_target, splc_loss,
                        splc_pseudo_positives)
from .stock_losses import (STOCK_SIGMOID_LOSSES, check_stock_loss_target,
                           stock_loss_name)
from .utils import (NEGATIVE, POSITIVE, UNKNOWN, prepare_inputs,
                    prepare_pseudo_labels, reduce_loss)
from .vlpl_loss import VLPLLoss, vlpl_loss
from .wan_loss import WANLoss
from .zlpr_loss import ZLPRLoss, zlpr_loss

__all__ = [
    'NEGATIVE', 'POSITIVE', 'UNKNOWN', 'PartialLabelLoss', 'TrainingProgress',
    'partial_label_loss', 'prepare_inputs', 'prepare_pseudo_labels',
    'reduce_loss', 'LOSS_CATALOG', 'EXAMPLE_STATE', 'example_state',
    'FocalMarginLoss', 'HillLoss', 'focal_margin_loss', 'hill_loss',
    'SPLCLoss', 'SPLC_BASES', 'splc_corrected_target', 'splc_loss',
    'splc_pseudo_positives', 'LASDLoss', 'lasd_lambda_neg', 'lasd_loss',
    'GRLoss', 'gce_term', 'gr_loss', 'gr_loss_with_weights', 'EMLoss',
    'em_loss', 'EMAPLLoss', 'em_apl_loss', 'OPMLLoss', 'ZLPRLoss', 'opml_loss',
    'zlpr_loss', 'HighRankRegularizer', 'high_rank_loss', 'LossSum',
    'ANLSLoss', 'ANLoss', 'NegativeMSELoss', 'WANLoss', 'assume_negative_loss',
    'negative_mse_loss', 'EPRLoss', 'epr_loss', 'LargeLoss', 'large_loss',
    'num_large_losses', 'select_large_losses', 'large_loss_selection',
    'OPMLSPLoss', 'opml_sp_loss', 'opml_sp_targets', 'PartialAsymmetricLoss',
    'PartialFocalLoss', 'asymmetric_focal_loss', 'EntMinLoss', 'entmin_loss',
    'ROLELoss', 'role_loss', 'CRISPLoss', 'crisp_loss', 'STOCK_SIGMOID_LOSSES',
    'check_stock_loss_target', 'stock_loss_name', 'VLPLLoss', 'vlpl_loss',
    'GPRLoss', 'gpr_loss'
]
