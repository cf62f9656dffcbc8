"""Plot the gradient of a loss with respect to the logit against ``p``.

For every loss given, the tool evaluates the gradient ``dL/dx`` of the loss
of one label with respect to its logit ``x`` on a grid of probabilities
``p = sigmoid(x)`` (``[0.001, 0.999]`` by default), once per kind of
target:

* ``negative``: an unannotated label (target ``0``), i.e. a missing label as
  the loss treats it (assumed negative by BCE / AN, re-weighted by Hill,
  pseudo-labelled by SPLC or GR, entropy-maximised by EM, ...);
* ``positive``: an observed positive (target ``1``);
* ``observed_negative``: an observed negative (target ``-1``).

It then draws one panel per kind of target (or all curves in one panel with
``--layout overlay``) and can write the raw numbers as CSV. Any loss in
MMPretrain's ``MODELS`` registry can be plotted once ``mmlml`` is imported:
mmlml's losses and MMPretrain's own (``CrossEntropyLoss`` with
``use_sigmoid=True``, ``AsymmetricLoss``, ``FocalLoss``...).

Usage::

    # Any registered losses, with keyword overrides.
    python tools/analysis/plot_loss_gradients.py \\
        --losses ANLoss HillLoss 'FocalMarginLoss(margin=0.5)' SPLCLoss \\
        --out work_dirs/grad.png --csv work_dirs/grad.csv

    # An epoch-dependent loss at a given (0-based) epoch; '@E/T' sets the
    # epoch of one curve only.
    python tools/analysis/plot_loss_gradients.py \\
        --losses GRLoss 'GRLoss@7/8' --epoch 0 --max-epochs 8 \\
        --out work_dirs/gr.png

    # A dict literal (the keys starting with '_' are options of the tool:
    # _label, _targets, _epoch, _max_epochs).
    python tools/analysis/plot_loss_gradients.py --out work_dirs/wan.png \\
        --losses "{'type': 'WANLoss', 'neg_weight': 0.1, '_label': 'DW'}"

    # Override a keyword of every loss of one type.
    python tools/analysis/plot_loss_gradients.py --losses HillLoss \\
        --cfg-options HillLoss.margin=0.5 --out work_dirs/hill.png

    # The loss of a training config (``model.head.loss``).
    python tools/analysis/plot_loss_gradients.py --config configs/demo/an.py \\
        --out work_dirs/an.png

    # The figures of the papers, and what is available.
    python tools/analysis/plot_loss_gradients.py --preset hill-fig3 \\
        --out work_dirs/hill_fig3.png
    python tools/analysis/plot_loss_gradients.py --list-presets
    python tools/analysis/plot_loss_gradients.py --list-losses

Sign convention:
    The tool computes the signed derivative ``dL/dx`` of the loss of the
    label with respect to its own logit. A positive value means that a
    gradient-descent step lowers the logit (pushes ``p`` towards 0), a
    negative value that it raises it. This is the convention of the GR paper
    (Eq. 18, "when g(p) > 0, a decrease of p leads to reduction in loss")
    and of the EM paper (Eq. 2 and 5: ``p - 1`` for positives, ``p`` for
    assumed negatives). ``--sign magnitude`` plots ``|dL/dx|`` instead, the
    "weight" a loss gives to a label, as the Hill paper's gradient figures
    do: for positives that is ``-dL/dx``, for negatives it changes nothing.
    The CSV always holds the signed value, and the plotted one.

Per-element gradients:
    Each grid point is one sample of ``C`` classes (``--num-classes``,
    default 20): its first class carries the grid logit and the target under
    study, the other ``C - 1`` classes are a fixed context with logit
    ``--context-logit`` (default 0) and, as in single-positive data, the
    targets of a sample with one observed positive: class 1 is an observed
    positive when the grid label is not one, all other context classes are
    unannotated (``0``). The ``G`` samples form one batch,
    the loss is summed (``reduction_override='sum'``) and autograd gives
    ``dL/dx`` of every grid label at once. The loss keeps its
    ``loss_weight``. Context and number of classes do not matter for
    element-wise losses, except through a hyperparameter defined by ``C``
    (``WANLoss`` with ``neg_weight=None`` weighs assumed negatives by
    ``1 / (C - 1)``).

Losses that are not element-wise:
    * Coupling across the classes of a sample (OPML's pairs, ZLPR's
      log-sum-exp over classes): every grid point is its own sample, so the
      curve is the gradient with the other classes of the sample held at
      the context. The tool detects this (the gradient changes with
      ``--context-logit``) and says so in the legend (``[ctx: ...]``).
    * Coupling across the samples of a batch (EPR's batch regulariser,
      LargeLoss's ranking of the batch's losses, a high-rank regulariser
      over the batch): the gradient of one label then depends on the rest of
      the batch, here the rest of the grid, so the tool detects it (the
      gradient of a sample changes when half of the grid is left out) and
      skips the loss with a message, unless ``--batch-context B`` is given:
      then every grid point is evaluated in its own batch, together with
      ``B`` context samples whose logits are all ``--context-logit``.
    * Stateful losses are evaluated on a deep copy, so that their state is
      the state they were built with. A loss whose forward needs more than
      ``(cls_score, target)`` is skipped with the error it raised.

Target encoding:
    mmlml's losses get the tri-state target (1 observed positive, 0
    unannotated, -1 observed negative). Other losses (MMPretrain's) know
    only 1 and 0, where 0 is a negative: they get ``0`` for both kinds of
    negative, which is what training them on partial labels does.

Epochs:
    A loss with ``set_epoch`` (mmlml's ``TrainingProgress``) is evaluated at
    ``--epoch`` (0-based; 0 when not given) of ``--max-epochs``; the epoch
    and the number of epochs are also published in MMEngine's
    ``MessageHub`` while the loss runs, for losses that read them there.
"""
import argparse
import ast
import contextlib
import copy
import csv
import difflib
import json
import math
import os
import os.path as osp
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0,
                osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))

import mmpretrain.models  # noqa: E402,F401  (registers MMPretrain's losses)
from mmengine.logging import MessageHub  # noqa: E402
from mmpretrain.registry import MODELS  # noqa: E402

import mmlml  # noqa: E402,F401  (registers mmlml's modules)

#: Kinds of target: name -> value in mmlml's tri-state encoding.
TARGET_KINDS: Dict[str, int] = {
    'negative': 0,
    'positive': 1,
    'observed_negative': -1,
}
TARGET_TITLES: Dict[str, str] = {
    'negative': 'Unannotated labels (target 0)',
    'positive': 'Observed positives (target 1)',
    'observed_negative': 'Observed negatives (target -1)',
}
SIGNS = ('signed', 'magnitude')
X_AXES = ('prob', 'logit')
LAYOUTS = ('panels', 'overlay')
RESERVED_KEYS = ('_label', '_targets', '_epoch', '_max_epochs')

DEFAULT_NUM_CLASSES = 20
DEFAULT_P_RANGE = (0.001, 0.999)
DEFAULT_POINTS = 400

_EPOCH_SUFFIX = re.compile(
    r'^(?P<body>.*?)\s*@\s*(?P<epoch>\d+)'
    r'(?:\s*/\s*(?P<max_epochs>\d+))?\s*$', re.S)


class UnknownLossError(ValueError):
    """A loss type that is not in the ``MODELS`` registry."""


class LossSpecError(ValueError):
    """A loss description that can not be parsed or built."""


class NotElementwiseError(RuntimeError):
    """The gradient of one label depends on the other samples of the
    batch."""


@dataclass
class CurveSpec:
    """One loss to plot.

    Attributes:
        cfg (dict): The loss config: ``type`` and constructor keywords.
        label (str, optional): Legend label; by default the loss as written.
        targets (tuple[str], optional): Kinds of target to plot this loss
            for; None means those of the command line.
        epoch (int, optional): 0-based epoch for epoch-dependent losses;
            None means the command line's.
        max_epochs (int, optional): Number of epochs for epoch-dependent
            losses; None means the command line's.
    """

    cfg: Dict[str, Any]
    label: Optional[str] = None
    targets: Optional[Tuple[str, ...]] = None
    epoch: Optional[int] = None
    max_epochs: Optional[int] = None

    @property
    def type(self) -> str:
        """The registered type name."""
        return self.cfg['type']

    def describe(self) -> str:
        """The loss as ``Type(key=value, ...)``."""
        kwargs = ', '.join(f'{k}={v!r}' for k, v in self.cfg.items()
                           if k != 'type')
        return f'{self.type}({kwargs})' if kwargs else self.type

    def display_name(self) -> str:
        """The legend label."""
        return self.label if self.label is not None else self.describe()


@dataclass
class GradientCurve:
    """The gradient of one loss for one kind of target.

    Attributes:
        spec (CurveSpec): The loss.
        kind (str): Kind of target (a key of :data:`TARGET_KINDS`).
        probs (np.ndarray): Grid of probabilities ``p``.
        grad (np.ndarray): Signed ``dL/dx`` at each grid point.
        notes (list[str]): Evaluation details shown in the legend (epoch,
            context of a class-coupled loss).
    """

    spec: CurveSpec
    kind: str
    probs: np.ndarray
    grad: np.ndarray
    notes: List[str] = field(default_factory=list)

    @property
    def logits(self) -> np.ndarray:
        """The grid logits ``x = logit(p)``."""
        return np.log(self.probs) - np.log1p(-self.probs)

    def label(self, with_kind: bool = False) -> str:
        """Legend label, with the evaluation notes (and the target kind)."""
        text = self.spec.display_name()
        if self.notes:
            text += ' [' + '; '.join(self.notes) + ']'
        if with_kind:
            text += f', {self.kind.replace("_", " ")}'
        return text


@dataclass
class Preset:
    """A paper figure: its curves and how it is drawn.

    Attributes:
        title (str): Figure title.
        description (str): What the paper plots and how it is reproduced.
        curves (list[tuple]): ``(candidates, label, targets)`` per curve;
            the first candidate spec whose type is registered is used.
        targets (tuple[str]): Default kinds of target.
        sign (str): ``'signed'`` or ``'magnitude'``.
        x_axis (str): ``'prob'`` or ``'logit'``.
        layout (str): ``'panels'`` or ``'overlay'``.
    """

    title: str
    description: str
    curves: List[Tuple[Tuple[str, ...], str, Optional[Tuple[str, ...]]]]
    targets: Tuple[str, ...] = ('negative', )
    sign: str = 'signed'
    x_axis: str = 'prob'
    layout: str = 'panels'


# GR: ``alpha``'s huge sigmas make the weight v(p) = 1, as in the gradient
# the GR paper plots (its Eq. 18 has no v); constant betas give k at the
# first (w, b) = (0, -2) and the last (10, -8) epoch of its COCO setting.
_GR_FLAT_V = 'alpha=(0.5, 1e4, 0.5, 1e4), q2=0.01, q3=1.0'

PRESETS: Dict[str, Preset] = {
    'hill-fig3':
    Preset(
        title='Gradients for negatives (Hill paper, Fig. 3)',
        description=(
            'Zhang et al., "Simple and Robust Loss Design for Multi-Label '
            'Learning with Missing Labels", Fig. 3: gradient magnitude '
            'against p for negative (here: unannotated) labels of BCE, '
            'Focal (gamma=2), ASL (gamma-=4, m=0.05, the ASL defaults), '
            'MSE and Hill (lambda=1.5). BCE is ANLoss (else MMPretrain\'s '
            'sigmoid CrossEntropyLoss), Focal is FocalMarginLoss(margin=0, '
            'gamma_neg=2) (else MMPretrain\'s FocalLoss, alpha=0.5 and '
            'loss_weight=2), ASL is MMPretrain\'s AsymmetricLoss, MSE is '
            'NegativeMSELoss.'),
        curves=[
            (('ANLoss', 'CrossEntropyLoss(use_sigmoid=True)'), 'BCE', None),
            (('FocalMarginLoss(margin=0.0, gamma=2.0, gamma_neg=2.0)',
              'FocalLoss(gamma=2.0, alpha=0.5, loss_weight=2.0)'),
             'Focal (γ=2)', None),
            (('AsymmetricLoss(gamma_pos=0.0, gamma_neg=4.0, clip=0.05)', ),
             'ASL (γ⁻=4, m=0.05)', None),
            (('NegativeMSELoss', ), 'MSE', None),
            (('HillLoss(lamb=1.5)', ), 'Hill (λ=1.5)', None),
        ],
        targets=('negative', ),
        sign='magnitude'),
    'hill-fig4':
    Preset(
        title='Gradients for positives (Hill paper, Fig. 4)',
        description=(
            'Zhang et al., Fig. 4: gradient magnitude against p for '
            'positives of BCE and of the focal margin loss (gamma=2) with '
            'margins m = 0 (the focal loss), 0.5, 1.0 (the recommended '
            'range) and 1.5; the text does not list the margins of the '
            'figure, these bracket the recommended range.'),
        curves=[
            (('ANLoss', 'CrossEntropyLoss(use_sigmoid=True)'), 'BCE', None),
            (('FocalMarginLoss(margin=0.0, gamma=2.0)',
              'FocalLoss(gamma=2.0, alpha=0.5, loss_weight=2.0)'),
             'Focal (m=0)', None),
            (('FocalMarginLoss(margin=0.5, gamma=2.0)', ),
             'Focal margin (m=0.5)', None),
            (('FocalMarginLoss(margin=1.0, gamma=2.0)', ),
             'Focal margin (m=1.0)', None),
            (('FocalMarginLoss(margin=1.5, gamma=2.0)', ),
             'Focal margin (m=1.5)', None),
        ],
        targets=('positive', ),
        sign='magnitude'),
    'hill-fig8':
    Preset(
        title='ASL gradients for negatives (Hill paper, Fig. 8)',
        description=(
            'Zhang et al., appendix Fig. 8: gradient magnitude against p '
            'for negatives of ASL with several focusing parameters gamma- '
            'and probability margins m (MMPretrain\'s AsymmetricLoss); the '
            'text does not list the values, this is a sweep around the ASL '
            'defaults (gamma-=4, m=0.05).'),
        curves=[((f'AsymmetricLoss(gamma_pos=0.0, gamma_neg={g}, clip={m})', ),
                 f'ASL (γ⁻={g:g}, m={m:g})', None)
                for g, m in ((1.0, 0.05), (2.0, 0.05), (4.0, 0.05), (4.0, 0.1),
                             (4.0, 0.2))],
        targets=('negative', ),
        sign='magnitude'),
    'em-fig2a':
    Preset(
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
        curves=[
            (('ANLoss', 'CrossEntropyLoss(use_sigmoid=True)'),
             'L+ = -log p (AN and EM), positive', ('positive', )),
            (('ANLoss', 'CrossEntropyLoss(use_sigmoid=True)'),
             'L- = -log(1-p) (AN), unannotated', ('negative', )),
            (('EMLoss(alpha=1.0)', ), 'L∅ = -αH(p), α=1 (EM), unannotated',
             ('negative', )),
        ],
        targets=('negative', 'positive'),
        sign='signed',
        x_axis='logit',
        layout='overlay'),
    'gr-fig1b':
    Preset(
        title='Gradients on missing labels (GR paper, Fig. 1(b))',
        description=(
            'Chen et al., "Boosting Single Positive Multi-label '
            'Classification with Generalized Robust Loss", Fig. 1(b): the '
            'signed gradient dL/dz against p on a missing (unannotated) '
            'label for GR at the beginning (beta(0): w=0, b=-2) and the end '
            '(beta(T): w=10, b=-8, its COCO setting) of training, with '
            'q2=0.01 and q3=1, and for EM (alpha=1) and Hill (lambda=1.5). '
            'GR is drawn as in the paper\'s Eq. 18, without the weight '
            'v(p) (made 1 by huge sigmas).'),
        curves=[
            ((f'GRLoss(beta=(0.0, 0.0, -2.0, -2.0), {_GR_FLAT_V})@0/1', ),
             'GR, β(0) = (w, b) = (0, -2)', None),
            ((f'GRLoss(beta=(10.0, 10.0, -8.0, -8.0), {_GR_FLAT_V})@0/1', ),
             'GR, β(T) = (w, b) = (10, -8)', None),
            (('EMLoss(alpha=1.0)', ), 'EM (α=1)', None),
            (('HillLoss(lamb=1.5)', ), 'Hill (λ=1.5)', None),
        ],
        targets=('negative', ),
        sign='signed'),
}


def _note(message: str) -> None:
    print(message, file=sys.stderr)


def registered_losses() -> List[str]:
    """Names of the registered types that end with ``Loss``."""
    return sorted(name for name in MODELS.module_dict if name.endswith('Loss'))


def check_registered(type_name: str) -> None:
    """Raise :class:`UnknownLossError` if ``type_name`` is not registered.

    Args:
        type_name (str): A type name of MMPretrain's ``MODELS`` registry.
    """
    if not isinstance(type_name, str) or MODELS.get(type_name) is None:
        known = registered_losses()
        close = difflib.get_close_matches(str(type_name), known, n=3)
        hint = f' Did you mean {", ".join(close)}?' if close else ''
        raise UnknownLossError(
            f'unknown loss {type_name!r}: no such type in MMPretrain\'s '
            f'MODELS registry (after importing mmlml).{hint} Registered '
            f'losses: {", ".join(known)}.')


def _literal(node: ast.AST, text: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise LossSpecError(
            f'cannot parse loss {text!r}: keyword values must be Python '
            f'literals, got {ast.unparse(node)!r}') from None


def _targets_arg(value: Any, text: str) -> Tuple[str, ...]:
    kinds = (value, ) if isinstance(value, str) else tuple(value)
    for kind in kinds:
        if kind not in TARGET_KINDS:
            raise LossSpecError(
                f'loss {text!r}: unknown target kind {kind!r}, expected '
                f'one of {", ".join(TARGET_KINDS)}')
    return kinds


def parse_loss_spec(text: str) -> CurveSpec:
    """Parse a loss written on the command line.

    Accepted forms (parsed with :mod:`ast`, nothing is executed):

    * ``Name``: a registered type with its default arguments;
    * ``Name(key=value, ...)``: keyword overrides, values Python literals;
    * a dict literal (Python or JSON) with a ``type`` key;

    each optionally followed by ``@E`` or ``@E/T`` to evaluate it at the
    0-based epoch ``E`` of ``T``. Dict keys (or keywords) starting with
    ``_`` are options of the tool: ``_label`` (legend label), ``_targets``
    (kinds of target), ``_epoch`` and ``_max_epochs``.

    Args:
        text (str): The loss as written.

    Returns:
        CurveSpec: The parsed loss (not checked against the registry).

    Raises:
        LossSpecError: The text is none of the accepted forms.
    """
    if not isinstance(text, str) or not text.strip():
        raise LossSpecError(f'empty loss description {text!r}')
    body, epoch, max_epochs = text.strip(), None, None
    match = _EPOCH_SUFFIX.match(body)
    if match:
        body = match.group('body')
        epoch = int(match.group('epoch'))
        if match.group('max_epochs') is not None:
            max_epochs = int(match.group('max_epochs'))
    try:
        node = ast.parse(body, mode='eval').body
    except SyntaxError:
        node = None
    if isinstance(node, ast.Dict) or body.startswith('{'):
        try:
            cfg = ast.literal_eval(body)
        except (ValueError, SyntaxError):
            try:
                cfg = json.loads(body)
            except ValueError:
                raise LossSpecError(
                    f'cannot parse loss {text!r}: not a dict literal'
                ) from None
        if not isinstance(cfg, dict) or not isinstance(cfg.get('type'), str):
            raise LossSpecError(f'loss {text!r}: a dict needs a string '
                                "'type' key")
        cfg = dict(cfg)
    elif isinstance(node, ast.Name):
        cfg = dict(type=node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.args:
            raise LossSpecError(
                f'cannot parse loss {text!r}: use keyword arguments only, '
                'e.g. FocalMarginLoss(margin=0.5)')
        cfg = dict(type=node.func.id)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise LossSpecError(
                    f'cannot parse loss {text!r}: ** is not supported')
            cfg[keyword.arg] = _literal(keyword.value, text)
    else:
        raise LossSpecError(
            f'cannot parse loss {text!r}: expected a registered type name, '
            "Name(key=value, ...) or a dict literal such as "
            "\"{'type': 'HillLoss', 'margin': 0.5}\", optionally followed "
            'by @EPOCH or @EPOCH/MAX_EPOCHS')

    label = cfg.pop('_label', None)
    targets = cfg.pop('_targets', None)
    epoch = cfg.pop('_epoch', epoch)
    max_epochs = cfg.pop('_max_epochs', max_epochs)
    unknown = [k for k in cfg if k.startswith('_')]
    if unknown:
        raise LossSpecError(f'loss {text!r}: unknown option(s) {unknown}, '
                            f'the options are {", ".join(RESERVED_KEYS)}')
    return CurveSpec(
        cfg=cfg,
        label=None if label is None else str(label),
        targets=None if targets is None else _targets_arg(targets, text),
        epoch=None if epoch is None else int(epoch),
        max_epochs=None if max_epochs is None else int(max_epochs))


def build_loss(spec: Union[CurveSpec, str, Dict[str, Any]]) -> nn.Module:
    """Build a registered loss.

    Args:
        spec (CurveSpec | str | dict): The loss, or its description as
            accepted by :func:`parse_loss_spec`, or a config dict.

    Returns:
        nn.Module: The loss module.

    Raises:
        UnknownLossError: The type is not registered.
        LossSpecError: The description is invalid or the constructor
            rejected the arguments.
    """
    if isinstance(spec, str):
        spec = parse_loss_spec(spec)
    cfg = dict(spec.cfg) if isinstance(spec, CurveSpec) else dict(spec)
    check_registered(cfg.get('type'))
    try:
        return MODELS.build(cfg)
    except (TypeError, ValueError, AssertionError) as err:
        name = spec.describe() if isinstance(spec, CurveSpec) else cfg
        raise LossSpecError(f'cannot build {name}: {err}') from err


def is_epoch_dependent(loss: nn.Module) -> bool:
    """Whether the loss takes the epoch (has ``set_epoch``)."""
    return callable(getattr(loss, 'set_epoch', None))


def uses_tri_state_targets(loss: nn.Module) -> bool:
    """Whether the loss understands mmlml's -1 / 0 / 1 encoding (mmlml's
    own losses); other losses take 0 for every negative."""
    return type(loss).__module__.split('.')[0] == 'mmlml'


_MISSING = object()


@contextlib.contextmanager
def training_progress(epoch: Optional[int],
                      max_epochs: Optional[int]) -> Iterator[None]:
    """Publish ``epoch`` and ``max_epochs`` in MMEngine's ``MessageHub``
    (as a Runner does) for the duration of the block, then restore them."""
    info = MessageHub.get_current_instance().runtime_info
    saved = {key: info.get(key, _MISSING) for key in ('epoch', 'max_epochs')}
    try:
        if epoch is not None:
            info['epoch'] = epoch
        if max_epochs is not None:
            info['max_epochs'] = max_epochs
        yield
    finally:
        for key, value in saved.items():
            if value is _MISSING:
                info.pop(key, None)
            else:
                info[key] = value


def probability_grid(points: int = DEFAULT_POINTS,
                     p_range: Sequence[float] = DEFAULT_P_RANGE,
                     uniform_in: str = 'prob') -> np.ndarray:
    """Grid of probabilities, uniform in ``p`` or in the logit.

    Args:
        points (int): Number of grid points, at least 2.
        p_range (Sequence[float]): ``(low, high)`` with
            ``0 < low < high < 1``.
        uniform_in (str): ``'prob'`` or ``'logit'``.

    Returns:
        np.ndarray: Increasing probabilities, float64.
    """
    low, high = (float(v) for v in p_range)
    if not 0 < low < high < 1:
        raise ValueError(f'p range must satisfy 0 < low < high < 1, got '
                         f'({low}, {high})')
    if points < 2:
        raise ValueError(f'need at least 2 grid points, got {points}')
    if uniform_in == 'logit':
        logits = np.linspace(
            math.log(low / (1 - low)), math.log(high / (1 - high)), points)
        return 1 / (1 + np.exp(-logits))
    if uniform_in != 'prob':
        raise ValueError(f'uniform_in must be prob or logit, got '
                         f'{uniform_in!r}')
    return np.linspace(low, high, points)


def _layout(logits: torch.Tensor, target_value: int, num_classes: int,
            context_logit: float,
            tri_state: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """One sample per grid logit: class 0 is the grid label, the others
    a single-positive context (class 1 is the sample's observed positive
    unless the grid label is one, the rest are unannotated)."""
    grid_target = target_value if tri_state else max(target_value, 0)
    x = logits.new_full((logits.numel(), num_classes), context_logit)
    x[:, 0] = logits
    t = torch.zeros_like(x)
    if target_value != 1:
        t[:, 1] = 1
    t[:, 0] = grid_target
    return x, t


def _sum_gradient(loss: nn.Module, x: torch.Tensor,
                  t: torch.Tensor) -> torch.Tensor:
    """Gradient of the summed loss of a batch w.r.t. all its logits."""
    x = x.detach().clone().requires_grad_(True)
    try:
        out = loss(x, t, reduction_override='sum')
    except TypeError as err:
        if 'reduction_override' not in str(err):
            raise
        out = loss(x, t)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f'{type(loss).__name__} returned '
                        f'{type(out).__name__}, not a tensor')
    total = out.sum() if out.dim() else out
    if not total.requires_grad:
        return torch.zeros_like(x)
    (grad, ) = torch.autograd.grad(total, x, allow_unused=True)
    return torch.zeros_like(x) if grad is None else grad


def _evaluate(loss: nn.Module, x: torch.Tensor, t: torch.Tensor,
              epoch: Optional[int], max_epochs: Optional[int]) -> torch.Tensor:
    """Gradient on a fresh copy of the loss at the given epoch."""
    loss = copy.deepcopy(loss)
    if epoch is not None and is_epoch_dependent(loss):
        loss.set_epoch(epoch, max_epochs)
    with training_progress(epoch, max_epochs):
        return _sum_gradient(loss, x, t)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True))


def gradient_coupling(loss: nn.Module,
                      probs: Sequence[float],
                      target_value: int,
                      num_classes: int = DEFAULT_NUM_CLASSES,
                      context_logit: float = 0.0,
                      epoch: Optional[int] = None,
                      max_epochs: Optional[int] = None,
                      dtype: torch.dtype = torch.float32) -> Dict[str, bool]:
    """Find out whether the gradient of a label depends on other labels.

    Args:
        loss (nn.Module): The loss.
        probs (Sequence[float]): Grid of probabilities (at least 2).
        target_value (int): Target of the grid labels (1, 0 or -1).
        num_classes (int): Classes per sample.
        context_logit (float): Logit of the context classes.
        epoch (int, optional): 0-based epoch for epoch-dependent losses.
        max_epochs (int, optional): Number of epochs.
        dtype (torch.dtype): Floating-point type of the logits.

    Returns:
        dict: ``batch``: the gradient of a sample changes when the other
        samples of the batch change (half of the grid left out);
        ``classes``: it changes with the logits of the other classes of the
        sample (context logit moved by 1).
    """
    logits = _logits(probs, dtype)
    tri_state = uses_tri_state_targets(loss)
    x, t = _layout(logits, target_value, num_classes, context_logit, tri_state)
    full = _evaluate(loss, x, t, epoch, max_epochs)
    batch = False
    half = x.size(0) // 2
    if half >= 1:
        for rows in (slice(0, half), slice(half, None)):
            part = _evaluate(loss, x[rows], t[rows], epoch, max_epochs)
            batch = batch or not _close(part, full[rows])
    x2, t2 = _layout(logits, target_value, num_classes, context_logit + 1,
                     tri_state)
    moved = _evaluate(loss, x2, t2, epoch, max_epochs)
    classes = not _close(moved[:, 0], full[:, 0])
    return dict(batch=batch, classes=classes)


def _logits(probs: Sequence[float], dtype: torch.dtype) -> torch.Tensor:
    probs = np.asarray(probs, dtype=np.float64).reshape(-1)
    if probs.size == 0 or not np.all((probs > 0) & (probs < 1)):
        raise ValueError('probabilities must lie in (0, 1)')
    return torch.as_tensor(np.log(probs) - np.log1p(-probs), dtype=dtype)


def loss_gradient(loss: nn.Module,
                  probs: Sequence[float],
                  target_value: int,
                  *,
                  num_classes: int = DEFAULT_NUM_CLASSES,
                  context_logit: float = 0.0,
                  batch_context: Optional[int] = None,
                  epoch: Optional[int] = None,
                  max_epochs: Optional[int] = None,
                  check_batch: bool = True,
                  dtype: torch.dtype = torch.float32) -> np.ndarray:
    """Signed gradient ``dL/dx`` of the loss of one label w.r.t. its logit.

    Every probability of ``probs`` is the label of class 0 of one sample
    (logit ``x = logit(p)``, target ``target_value``), the other classes
    being the context described in the module docstring; the batch loss is
    summed and differentiated with autograd. The loss is evaluated on a
    deep copy, with its ``loss_weight``.

    Args:
        loss (nn.Module): A loss with MMPretrain's signature
            ``loss(cls_score, target, weight=None, avg_factor=None,
            reduction_override=None)``.
        probs (Sequence[float]): Probabilities in ``(0, 1)``.
        target_value (int): 1 (observed positive), 0 (unannotated) or -1
            (observed negative). Losses other than mmlml's get 0 for -1.
        num_classes (int): Classes per sample, at least 2. Defaults to 20.
        context_logit (float): Logit of the context classes (and of the
            context samples). Defaults to 0.
        batch_context (int, optional): If given, evaluate every grid point
            in its own batch with this many context samples (for losses
            coupling the samples of a batch). Defaults to None: all grid
            points in one batch.
        epoch (int, optional): 0-based epoch; if given, passed to
            ``loss.set_epoch`` and published in the ``MessageHub``.
        max_epochs (int, optional): Number of epochs, likewise.
        check_batch (bool): With ``batch_context=None``, first check that
            the gradient of a sample does not depend on the other samples.
            Defaults to True.
        dtype (torch.dtype): Floating-point type of the logits. Defaults to
            float32.

    Returns:
        np.ndarray: ``dL/dx`` at each probability, float64.

    Raises:
        NotElementwiseError: The loss couples the samples of a batch and
            ``batch_context`` is None.
    """
    if target_value not in TARGET_KINDS.values():
        raise ValueError(f'target_value must be 1, 0 or -1, got '
                         f'{target_value!r}')
    if num_classes < 2:
        raise ValueError(f'num_classes must be at least 2, got '
                         f'{num_classes}')
    logits = _logits(probs, dtype)
    tri_state = uses_tri_state_targets(loss)
    x, t = _layout(logits, target_value, num_classes, context_logit, tri_state)
    if batch_context is None:
        if check_batch and gradient_coupling(loss, probs, target_value,
                                             num_classes, context_logit, epoch,
                                             max_epochs, dtype)['batch']:
            raise NotElementwiseError(
                f'the gradient of {type(loss).__name__} at one label '
                'depends on the other samples of the batch (a batch-level '
                'term), so it has no per-element curve on its own; pass '
                'batch_context (--batch-context B) to evaluate every grid '
                'point in its own batch with B fixed context samples')
        grad = _evaluate(loss, x, t, epoch, max_epochs)[:, 0]
    else:
        if batch_context < 0:
            raise ValueError(f'batch_context must be >= 0, got '
                             f'{batch_context}')
        values = []
        for i in range(x.size(0)):
            xb = x.new_full((batch_context + 1, num_classes), context_logit)
            xb[0] = x[i]
            tb = t[i].expand(batch_context + 1, num_classes).clone()
            values.append(_evaluate(loss, xb, tb, epoch, max_epochs)[0, 0])
        grad = torch.stack(values)
    return grad.detach().double().numpy()


def compute_curves(specs: Sequence[CurveSpec],
                   targets: Sequence[str] = ('negative', 'positive'),
                   probs: Optional[np.ndarray] = None,
                   *,
                   num_classes: int = DEFAULT_NUM_CLASSES,
                   context_logit: float = 0.0,
                   batch_context: Optional[int] = None,
                   epoch: Optional[int] = None,
                   max_epochs: Optional[int] = None,
                   override_targets: bool = False) -> List[GradientCurve]:
    """Gradient curves of several losses.

    A loss that can not be evaluated (a forward needing more inputs, a
    batch-coupled loss without ``batch_context``, a missing number of
    epochs...) is skipped with a message on stderr.

    Args:
        specs (Sequence[CurveSpec]): The losses (types must be registered).
        targets (Sequence[str]): Kinds of target for specs without their
            own.
        probs (np.ndarray, optional): Grid; by default
            :func:`probability_grid`.
        num_classes, context_logit, batch_context: See
            :func:`loss_gradient`.
        epoch (int, optional): Epoch of epoch-dependent losses without
            their own (0 when None).
        max_epochs (int, optional): Number of epochs, likewise.
        override_targets (bool): Use ``targets`` even for specs with their
            own. Defaults to False.

    Returns:
        list[GradientCurve]: The curves, in the order of ``specs`` then
        ``targets``.
    """
    probs = probability_grid() if probs is None else np.asarray(probs)
    curves = []
    for spec in specs:
        loss = build_loss(spec)
        kinds = (
            targets
            if override_targets or spec.targets is None else spec.targets)
        notes = []
        spec_epoch = spec.epoch if spec.epoch is not None else epoch
        spec_max = (
            spec.max_epochs if spec.max_epochs is not None else max_epochs)
        if is_epoch_dependent(loss):
            if spec_epoch is None:
                spec_epoch = 0
                _note(f'note: {spec.display_name()} depends on the epoch; '
                      'evaluated at epoch 0 (set --epoch)')
        if is_epoch_dependent(loss) and spec.label is None:
            notes.append(f'epoch {spec_epoch}' +
                         (f'/{spec_max}' if spec_max is not None else ''))
        for kind in kinds:
            value = TARGET_KINDS[kind]
            try:
                coupling = gradient_coupling(loss, probs, value, num_classes,
                                             context_logit, spec_epoch,
                                             spec_max)
                if coupling['batch'] and batch_context is None:
                    raise NotElementwiseError(
                        'its gradient at one label depends on the other '
                        'samples of the batch (a batch-level term), so it '
                        'has no per-element curve on its own; pass '
                        '--batch-context B to evaluate each grid point in '
                        'its own batch with B context samples')
                grad = loss_gradient(
                    loss,
                    probs,
                    value,
                    num_classes=num_classes,
                    context_logit=context_logit,
                    batch_context=(batch_context
                                   if coupling['batch'] else None),
                    epoch=spec_epoch,
                    max_epochs=spec_max,
                    check_batch=False)
            except Exception as err:  # report and go on with the others
                hint = (' (set --max-epochs)' if is_epoch_dependent(loss)
                        and spec_max is None else '')
                _note(f'skipped {spec.display_name()} ({kind}): '
                      f'{type(err).__name__}: {err}{hint}')
                continue
            curve_notes = list(notes)
            if coupling['classes']:
                curve_notes.append(f'ctx: C={num_classes}, '
                                   f'x_ctx={context_logit:g}')
            if coupling['batch']:
                curve_notes.append(f'batch ctx: {batch_context}')
            if not np.all(np.isfinite(grad)):
                _note(f'warning: {spec.display_name()} ({kind}) has '
                      'non-finite gradients at some grid points')
            curves.append(GradientCurve(spec, kind, probs, grad, curve_notes))
    return curves


_LINESTYLES = ('-', '--', '-.', ':')


def _plotted(curve: GradientCurve, sign: str) -> np.ndarray:
    return np.abs(curve.grad) if sign == 'magnitude' else curve.grad


def plot(curves: Sequence[GradientCurve],
         out: str,
         sign: str = 'signed',
         x_axis: str = 'prob',
         layout: str = 'panels',
         title: Optional[str] = None,
         ylim: Optional[Sequence[float]] = None,
         dpi: int = 150) -> str:
    """Draw gradient curves into a PNG (matplotlib, Agg backend).

    Args:
        curves (Sequence[GradientCurve]): The curves.
        out (str): Output path (its folder is created).
        sign (str): ``'signed'`` (``dL/dx``) or ``'magnitude'``
            (``|dL/dx|``).
        x_axis (str): ``'prob'`` (``p``) or ``'logit'`` (``x``).
        layout (str): ``'panels'``: one panel per kind of target;
            ``'overlay'``: everything in one panel.
        title (str, optional): Figure title.
        ylim (Sequence[float], optional): y-axis limits.
        dpi (int): Resolution. Defaults to 150.

    Returns:
        str: ``out``.
    """
    if sign not in SIGNS:
        raise ValueError(f'sign must be one of {SIGNS}, got {sign!r}')
    if x_axis not in X_AXES:
        raise ValueError(f'x_axis must be one of {X_AXES}, got {x_axis!r}')
    if layout not in LAYOUTS:
        raise ValueError(f'layout must be one of {LAYOUTS}, got {layout!r}')
    if not curves:
        raise ValueError('no curves to plot')
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    if layout == 'overlay':
        groups = [(None, list(curves))]
    else:
        kinds = list(dict.fromkeys(curve.kind for curve in curves))
        groups = [(kind, [c for c in curves if c.kind == kind])
                  for kind in kinds]
    fig, axes = plt.subplots(
        1, len(groups), figsize=(6.4 * len(groups), 4.8), squeeze=False)
    ylabel = '|dL/dx|' if sign == 'magnitude' else 'dL/dx'
    xlabel = 'p = sigmoid(x)' if x_axis == 'prob' else 'logit x'
    for ax, (kind, group) in zip(axes[0], groups):
        for i, curve in enumerate(group):
            xs = curve.probs if x_axis == 'prob' else curve.logits
            with_kind = layout == 'overlay' and curve.spec.label is None
            # Dash patterns keep coinciding curves apart.
            ax.plot(
                xs,
                _plotted(curve, sign),
                linestyle=_LINESTYLES[i % len(_LINESTYLES)],
                linewidth=1.6,
                label=curve.label(with_kind))
        if sign == 'signed':
            ax.axhline(0.0, color='0.6', linewidth=0.8)
        if x_axis == 'logit':
            ax.axvline(0.0, color='0.8', linewidth=0.8)
        else:
            ax.set_xlim(0, 1)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(TARGET_TITLES[kind] if kind else 'Gradients')
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize='small')
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out_dir = osp.dirname(osp.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out


def write_csv(curves: Sequence[GradientCurve],
              path: str,
              sign: str = 'signed') -> str:
    """Write the curves in long format: one row per curve and grid point.

    Columns: ``label, loss, target, target_value, p, logit, dL_dx``
    (signed) and ``plotted`` (the value drawn with ``sign``).

    Returns:
        str: ``path``.
    """
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(('label', 'loss', 'target', 'target_value', 'p',
                         'logit', 'dL_dx', 'plotted'))
        for curve in curves:
            plotted = _plotted(curve, sign)
            for p, x, g, v in zip(curve.probs, curve.logits, curve.grad,
                                  plotted):
                writer.writerow(
                    (curve.label(), curve.spec.describe(), curve.kind,
                     TARGET_KINDS[curve.kind], f'{p:.6g}', f'{x:.6g}',
                     f'{g:.8g}', f'{v:.8g}'))
    return path


def preset_specs(name: str) -> List[CurveSpec]:
    """The curves of a preset whose loss types are registered.

    For each curve the first registered candidate is used; a curve with
    none is left out with a message on stderr.

    Raises:
        KeyError: Unknown preset.
    """
    if name not in PRESETS:
        raise KeyError(f'unknown preset {name!r}, expected one of '
                       f'{", ".join(PRESETS)}')
    specs = []
    for candidates, label, targets in PRESETS[name].curves:
        for text in candidates:
            spec = parse_loss_spec(text)
            if MODELS.get(spec.type) is not None:
                spec.label = label
                spec.targets = targets
                specs.append(spec)
                break
        else:
            types = ', '.join(parse_loss_spec(c).type for c in candidates)
            _note(f'note: preset {name}: left out {label!r}, {types} not '
                  'registered')
    return specs


def _apply_overrides(specs: List[CurveSpec], options: Dict[str, Any]) -> None:
    """``key=value`` for every loss, ``Type.key=value`` for one type."""
    types = {spec.type for spec in specs}
    for key, value in options.items():
        scope, _, name = key.rpartition('.')
        if scope and scope not in types:
            raise LossSpecError(f'--cfg-options {key}: no loss of type '
                                f'{scope!r} among {sorted(types)}')
        for spec in specs:
            if not scope or spec.type == scope:
                spec.cfg[name] = value


def _config_spec(path: str, options: Optional[Dict[str, Any]]) -> CurveSpec:
    from mmengine.config import Config
    cfg = Config.fromfile(path)
    if options:
        cfg.merge_from_dict(options)
    try:
        loss_cfg = cfg.model.head.loss
    except AttributeError:
        raise LossSpecError(f'{path} has no model.head.loss') from None
    loss_cfg = loss_cfg.to_dict() if hasattr(loss_cfg,
                                             'to_dict') else dict(loss_cfg)
    max_epochs = cfg.get('train_cfg', {}).get('max_epochs')
    return CurveSpec(
        cfg=loss_cfg,
        label=f'{osp.basename(path)}: {CurveSpec(loss_cfg).describe()}',
        max_epochs=max_epochs)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """Command-line arguments."""
    from mmengine.config import DictAction
    preset_help = '; '.join(f'{k}: {v.title}' for k, v in PRESETS.items())
    parser = argparse.ArgumentParser(
        description='Plot dL/dx, the gradient of a loss w.r.t. the logit, '
        'against p = sigmoid(x) for unannotated labels and positives.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='Sign: dL/dx > 0 means gradient descent lowers the logit.')
    parser.add_argument(
        '--losses',
        nargs='+',
        default=[],
        metavar='LOSS',
        help="registered type names, 'Name(key=value, ...)' or dict "
        "literals, optionally with '@EPOCH' or '@EPOCH/MAX_EPOCHS'")
    parser.add_argument(
        '--preset',
        choices=sorted(PRESETS),
        help=f'a paper figure (its curves come before --losses): '
        f'{preset_help}')
    parser.add_argument(
        '--config', help='also plot model.head.loss of this training config')
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='with --config: override config settings '
        '(model.head.loss.gamma=1); otherwise loss keywords, key=value for '
        'every loss or Type.key=value for the losses of one type')
    parser.add_argument('--out', help='output PNG')
    parser.add_argument('--csv', help='also write the numbers to this CSV')
    parser.add_argument(
        '--targets',
        nargs='+',
        choices=list(TARGET_KINDS),
        help='kinds of target (panels): negative (unannotated, 0), '
        'positive (1), observed_negative (-1); default: negative positive, '
        "or the preset's")
    parser.add_argument(
        '--epoch',
        type=int,
        help='0-based epoch for epoch-dependent losses (default 0)')
    parser.add_argument(
        '--max-epochs',
        type=int,
        help='number of epochs for epoch-dependent losses')
    parser.add_argument(
        '--sign',
        choices=SIGNS,
        help="plot dL/dx ('signed') or |dL/dx| ('magnitude'); default "
        "signed, or the preset's")
    parser.add_argument(
        '--x-axis',
        choices=X_AXES,
        help="x-axis: probability p or logit x; default prob, or the "
        "preset's")
    parser.add_argument(
        '--layout',
        choices=LAYOUTS,
        help="one panel per target kind, or all in one; default panels, or "
        "the preset's")
    parser.add_argument(
        '--points',
        type=int,
        default=DEFAULT_POINTS,
        help=f'grid points (default {DEFAULT_POINTS})')
    parser.add_argument(
        '--p-range',
        nargs=2,
        type=float,
        default=DEFAULT_P_RANGE,
        metavar=('LOW', 'HIGH'),
        help='probability range (default 0.001 0.999)')
    parser.add_argument(
        '--num-classes',
        type=int,
        default=DEFAULT_NUM_CLASSES,
        help='classes per sample: the grid label and C - 1 context labels '
        f'(default {DEFAULT_NUM_CLASSES})')
    parser.add_argument(
        '--context-logit',
        type=float,
        default=0.0,
        help='logit of the context labels (default 0)')
    parser.add_argument(
        '--batch-context',
        type=int,
        help='evaluate losses that couple the samples of a batch one grid '
        'point at a time, with this many context samples')
    parser.add_argument('--ylim', nargs=2, type=float, metavar=('LOW', 'HIGH'))
    parser.add_argument('--title', help='figure title')
    parser.add_argument('--dpi', type=int, default=150)
    parser.add_argument(
        '--list-presets',
        action='store_true',
        help='describe the presets and exit')
    parser.add_argument(
        '--list-losses',
        action='store_true',
        help='list the registered losses and exit')
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    args = parse_args(argv)
    if args.list_presets:
        for name, preset in PRESETS.items():
            print(f'{name}: {preset.title}\n  {preset.description}\n')
        return 0
    if args.list_losses:
        print('\n'.join(registered_losses()))
        return 0
    if not args.out and not args.csv:
        _note('error: give --out (PNG) and/or --csv')
        return 2

    preset = PRESETS[args.preset] if args.preset else None
    try:
        specs = preset_specs(args.preset) if preset else []
        loss_specs = [parse_loss_spec(text) for text in args.losses]
        for spec in loss_specs:
            check_registered(spec.type)
        if args.cfg_options and not args.config:
            _apply_overrides(loss_specs, args.cfg_options)
        specs += loss_specs
        if args.config:
            specs.append(_config_spec(args.config, args.cfg_options))
        if not specs:
            _note('error: nothing to plot: give --losses, --preset or '
                  '--config')
            return 2
        for spec in specs:
            build_loss(spec)  # fail early on bad arguments
    except (UnknownLossError, LossSpecError) as err:
        _note(f'error: {err}')
        return 2

    def pick(value, attr, default):
        if value is not None:
            return value
        return getattr(preset, attr) if preset else default

    targets = pick(args.targets, 'targets', ('negative', 'positive'))
    sign = pick(args.sign, 'sign', 'signed')
    x_axis = pick(args.x_axis, 'x_axis', 'prob')
    layout = pick(args.layout, 'layout', 'panels')
    title = args.title or (preset.title if preset else 'Loss gradients')
    probs = probability_grid(args.points, args.p_range,
                             'logit' if x_axis == 'logit' else 'prob')
    curves = compute_curves(
        specs,
        targets,
        probs,
        num_classes=args.num_classes,
        context_logit=args.context_logit,
        batch_context=args.batch_context,
        epoch=args.epoch,
        max_epochs=args.max_epochs,
        override_targets=args.targets is not None)
    if not curves:
        _note('error: none of the losses could be evaluated')
        return 1
    if args.out:
        plot(curves, args.out, sign, x_axis, layout, title, args.ylim,
             args.dpi)
        print(f'wrote {args.out}')
    if args.csv:
        write_csv(curves, args.csv, sign)
        print(f'wrote {args.csv}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
