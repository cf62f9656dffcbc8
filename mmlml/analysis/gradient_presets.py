"""The gradient figures of the papers, as presets of
:mod:`.loss_gradients`: for each, a title, a description, the curves (loss
config, legend label and kinds of target) and how they are drawn.
:func:`~mmlml.analysis.loss_gradients.preset_curves` turns a preset into
the curves to compute.
"""
from typing import Any, Dict, Optional, Tuple

__all__ = ['PRESETS']


def _curve(label: str,
           loss_type: str,
           targets: Optional[Tuple[str, ...]] = None,
           **kwargs) -> Dict[str, Any]:
    """Return a preset curve: legend label, loss config and kinds of
    target (None: the preset's)."""
    return dict(
        label=label, cfg=dict(type=loss_type, **kwargs), targets=targets)


# GR: ``alpha``'s huge sigmas make the weight v(p) = 1, as in the gradient
# the GR paper plots (its Eq. 18 has no v); constant betas give k at the
# first (w, b) = (0, -2) and the last (10, -8) epoch of its COCO setting.
_GR_FLAT_V: Dict[str, Any] = dict(
    alpha=(0.5, 1e4, 0.5, 1e4), q2=0.01, q3=1.0, max_epochs=1)

#: The papers' gradient figures: title, description, curves (loss ``cfg``,
#: ``label`` and kinds of ``targets``, None for the preset's) and, where
#: they differ from the defaults, how they are drawn: ``targets`` (negative
#: and positive), ``sign`` (signed), ``x_axis`` (prob), ``layout`` (panels)
#: and ``epoch`` (None).
PRESETS: Dict[str, Dict[str, Any]] = {
    'hill-fig3':
    dict(
        title='Gradients for negatives (Hill paper, Fig. 3)',
        description=(
            'Zhang et al., "Simple and Robust Loss Design for Multi-Label '
            'Learning with Missing Labels", Fig. 3: gradient magnitude '
            'against p for negative (here: unannotated) labels of BCE '
            '(ANLoss), Focal (FocalMarginLoss with margin=0, gamma=2), ASL '
            "(MMPretrain's AsymmetricLoss, gamma-=4, m=0.05, the ASL "
            'defaults), MSE (NegativeMSELoss) and Hill (lambda=1.5).'),
        targets=('negative', ),
        sign='magnitude',
        curves=[
            _curve('BCE', 'ANLoss'),
            _curve(
                'Focal (γ=2)',
                'FocalMarginLoss',
                margin=0.0,
                gamma=2.0,
                gamma_neg=2.0),
            _curve(
                'ASL (γ⁻=4, m=0.05)',
                'AsymmetricLoss',
                gamma_pos=0.0,
                gamma_neg=4.0,
                clip=0.05),
            _curve('MSE', 'NegativeMSELoss'),
            _curve('Hill (λ=1.5)', 'HillLoss', lamb=1.5),
        ]),
    'hill-fig4':
    dict(
        title='Gradients for positives (Hill paper, Fig. 4)',
        description=(
            'Zhang et al., Fig. 4: gradient magnitude against p for '
            'positives of BCE (ANLoss) and of the focal margin loss '
            '(gamma=2) with margins m = 0 (the focal loss), 0.5, 1.0 (the '
            'recommended range) and 1.5; the text does not list the '
            'margins of the figure, these bracket the recommended range.'),
        targets=('positive', ),
        sign='magnitude',
        curves=[_curve('BCE', 'ANLoss')] + [
            _curve(
                f'Focal margin (m={m})' if m else 'Focal (m=0)',
                'FocalMarginLoss',
                margin=m,
                gamma=2.0) for m in (0.0, 0.5, 1.0, 1.5)
        ]),
    'hill-fig8':
    dict(
        title='ASL gradients for negatives (Hill paper, Fig. 8)',
        description=(
            'Zhang et al., appendix Fig. 8: gradient magnitude against p '
            'for negatives of ASL with several focusing parameters gamma- '
            "and probability margins m (MMPretrain's AsymmetricLoss); the "
            'text does not list the values, this is a sweep around the ASL '
            'defaults (gamma-=4, m=0.05).'),
        targets=('negative', ),
        sign='magnitude',
        curves=[
            _curve(
                f'ASL (γ⁻={g:g}, m={m:g})',
                'AsymmetricLoss',
                gamma_pos=0.0,
                gamma_neg=g,
                clip=m) for g, m in ((1.0, 0.05), (2.0, 0.05), (4.0, 0.05),
                                     (4.0, 0.1), (4.0, 0.2))
        ]),
    'em-fig2a':
    dict(
        title='Gradients of L+, L- and L∅ (EM paper, Fig. 2(a))',
        description=(
            'Zhou et al., "Acknowledging the Unknown for Multi-label '
            'Learning with Single Positive Labels", Fig. 2(a): the signed '
            'gradients, with respect to the logit g, of L+ = -log p '
            '(annotated positives, AN and EM), L- = -log(1 - p) (assumed '
            'negatives, AN) and L∅ = -alpha H(p) (unannotated labels, EM, '
            'alpha=1), in one panel. The paper writes them as functions '
            'of g (Eq. 2, 5) and discusses them as the logit grows, so '
            'the x-axis is the logit.'),
        x_axis='logit',
        layout='overlay',
        curves=[
            _curve('L+ = -log p (AN and EM), positive', 'ANLoss',
                   ('positive', )),
            _curve('L- = -log(1-p) (AN), unannotated', 'ANLoss',
                   ('negative', )),
            _curve(
                'L∅ = -αH(p), α=1 (EM), unannotated',
                'EMLoss', ('negative', ),
                alpha=1.0),
        ]),
    'gr-fig1b':
    dict(
        title='Gradients on missing labels (GR paper, Fig. 1(b))',
        description=(
            'Chen et al., "Boosting Single Positive Multi-label '
            'Classification with Generalized Robust Loss", Fig. 1(b): the '
            'signed gradient dL/dz against p on a missing (unannotated) '
            'label for GR at the beginning (beta(0): w=0, b=-2) and the end '
            '(beta(T): w=10, b=-8, its COCO setting) of training, with '
            'q2=0.01 and q3=1, and for EM (alpha=1) and Hill (lambda=1.5). '
            "GR is drawn as in the paper's Eq. 18, without the weight "
            'v(p) (made 1 by huge sigmas).'),
        targets=('negative', ),
        epoch=0,
        curves=[
            _curve(
                'GR, β(0) = (w, b) = (0, -2)',
                'GRLoss',
                beta=(0.0, 0.0, -2.0, -2.0),
                **_GR_FLAT_V),
            _curve(
                'GR, β(T) = (w, b) = (10, -8)',
                'GRLoss',
                beta=(10.0, 10.0, -8.0, -8.0),
                **_GR_FLAT_V),
            _curve('EM (α=1)', 'EMLoss', alpha=1.0),
            _curve('Hill (λ=1.5)', 'HillLoss', lamb=1.5),
        ]),
}
