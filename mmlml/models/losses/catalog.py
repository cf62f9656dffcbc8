"""Every registered mmlml loss with the arguments it needs to build: the
table that the loss contract tests and the cost benchmark
(``tools/analysis/benchmark_losses.py``) iterate over.

A loss with a required hyperparameter gets a typical value; every other
loss is built with its defaults. Epoch-dependent losses (those with a
``set_epoch`` method) need ``loss.set_epoch(epoch, max_epochs)`` outside
a Runner.
"""
from typing import Dict

__all__ = ['LOSS_CATALOG']

LOSS_CATALOG: Dict[str, dict] = {
    # Paper losses.
    'HillLoss': {},
    'FocalMarginLoss': {},
    'SPLCLoss': {},
    'LASDLoss':
    dict(expected_positives=2.9),
    'GRLoss':
    dict(max_epochs=10),
    'EMLoss': {},
    'OPMLLoss': {},
    'ZLPRLoss': {},
    'HighRankRegularizer': {},
    'LossSum':
    dict(losses=[
        dict(type='ANLoss'),
        dict(type='HighRankRegularizer'),
    ]),
    # Baselines.
    'ANLoss': {},
    'WANLoss': {},
    'ANLSLoss': {},
    'EPRLoss':
    dict(expected_positives=2.9),
    'LargeLoss': {},
    'PartialFocalLoss': {},
    'PartialAsymmetricLoss': {},
    'EntMinLoss':
    dict(alpha=0.1),
    'NegativeMSELoss': {},
}
