"""The gradient ``dL/dx`` of a loss with respect to the logit ``x`` of one
label, as a curve over ``p = sigmoid(x)``.

Any loss of MMPretrain's ``MODELS`` registry can be evaluated: mmlml's losses
and MMPretrain's own (``CrossEntropyLoss`` with ``use_sigmoid=True``,
``AsymmetricLoss``, ``FocalLoss``...). A curve is computed for one kind of
target (:data:`TARGET_KINDS`):

* ``negative``: an unannotated label (target ``0``), i.e. a missing label as
  the loss treats it (assumed negative by BCE / AN, re-weighted by Hill,
  pseudo-labelled by SPLC or GR, entropy-maximised by EM, ...);
* ``positive``: an observed positive (target ``1``);
* ``observed_negative``: an observed negative (target ``-1``).

Sign convention:
    The signed derivative ``dL/dx`` of the loss of the label with respect to
    its own logit. A positive value means that a gradient-descent step
    lowers the logit (pushes ``p`` towards 0), a negative value that it
    raises it. This is the convention of the GR paper (Eq. 18, "when
    g(p) > 0, a decrease of p leads to reduction in loss") and of the EM
    paper (Eq. 2 and 5: ``p - 1`` for positives, ``p`` for assumed
    negatives). Its magnitude ``|dL/dx|`` is the "weight" a loss gives to a
    label, which the Hill paper's gradient figures plot.

Per-element gradients:
    Each grid point is one sample of ``C`` classes (``num_classes`` of
    :class:`EvalSettings`, default 20): its first class carries the grid
    logit and the target under study, the other ``C - 1`` classes are a
    fixed context with logit ``context_logit`` (default 0) and, as in
    single-positive data, the targets of a sample with one observed
    positive: class 1 is an observed positive when the grid label is not
    one, all other context classes are unannotated (``0``). The ``G``
    samples form one batch, the loss is summed (``reduction_override='sum'``)
    and autograd gives ``dL/dx`` of every grid label at once. The loss keeps
    its ``loss_weight``. Context and number of classes do not matter for
    element-wise losses, except through a hyperparameter defined by ``C``
    (``WANLoss`` with ``neg_weight=None`` weighs assumed negatives by
    ``1 / (C - 1)``).

Losses that are not element-wise:
    * Coupling across the classes of a sample (OPML's pairs, ZLPR's
      log-sum-exp over classes): every grid point is its own sample, so the
      curve is the gradient with the other classes of the sample held at the
      context. :func:`gradient_coupling` detects this (the gradient changes
      with the context logit) and :func:`compute_curves` notes it in the
      curve's legend (``[ctx: ...]``).
    * Coupling across the samples of a batch (EPR's batch regulariser,
      LargeLoss's ranking of the batch's losses, a high-rank regulariser over
      the batch): the gradient of one label then depends on the rest of the
      batch, here the rest of the grid. :func:`gradient_coupling` detects it
      (the gradient of a sample changes when half of the grid is left out)
      and such a loss has no curve unless ``batch_context=B`` is set: then
      every grid point is evaluated in its own batch, together with ``B``
      context samples whose logits are all ``context_logit``.
    * Losses are evaluated on a deep copy, so that a loss keeps what it
      was built with. A loss whose forward needs more than
      ``(cls_score, target)`` and the state below fails with the error it
      raised.

Stateful losses:
    A loss with ``state_inputs`` (CRISP, VLPL, GPR, EM + APL, LL-Cp,
    OPML-SP, ROLE) reads, at every training step, what its hook or label
    estimator keeps (see :data:`STATE_VALUES`). Here it gets a
    representative state, the same for every grid point and named in the
    curve's legend (``[state: ...]``): the plotted label has no
    pseudo-label (``pseudo_label`` of :class:`EvalSettings` gives it one,
    e.g. 1 for a CLIP pseudo-positive of VLPL, or APL's soft negative),
    the context labels none; CRISP's prior is estimated for every class,
    ``class_prior`` (default 0.1), with the single-positive rate of
    observed positives ``min(class_prior, 1 / C)``; OPML-SP's class AP is
    0.5; ROLE's label estimates are 0.5 (logit 0).

Target encoding:
    mmlml's losses get the tri-state target (1 observed positive, 0
    unannotated, -1 observed negative). Other losses (MMPretrain's) know only
    1 and 0, where 0 is a negative: they get ``0`` for both kinds of
    negative, which is what training them on partial labels does.

Epochs:
    A loss with ``set_epoch`` (mmlml's ``TrainingProgress``) is evaluated at
    the given 0-based epoch (0 when none is given) of ``max_epochs``; the
    epoch and the number of epochs are also published in MMEngine's
    ``MessageHub`` while the loss runs, for losses that read them there.

The papers' figures are the presets of :mod:`.gradient_presets`, and the
losses are built and inspected by :mod:`.loss_setup`; their names are
importable from here too.
"""
import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn

from .gradient_presets import PRESETS
from .loss_setup import (build_loss, is_epoch_dependent, registered_losses,
                         state_inputs, training_progress,
                         uses_tri_state_targets)

__all__ = [
    'TARGET_KINDS', 'PRESETS', 'CurveSpec', 'GradientCurve', 'EvalSettings',
    'registered_losses', 'build_loss', 'is_epoch_dependent',
    'uses_tri_state_targets', 'training_progress', 'probability_grid',
    'gradient_coupling', 'loss_gradient', 'compute_curves', 'preset_curves',
    'STATE_VALUES', 'state_inputs', 'representative_state', 'state_note'
]

#: Kinds of target: name -> value in mmlml's tri-state encoding.
TARGET_KINDS: Dict[str, int] = {
    'negative': 0,
    'positive': 1,
    'observed_negative': -1,
}
DEFAULT_NUM_CLASSES = 20
DEFAULT_P_RANGE = (0.001, 0.999)
DEFAULT_POINTS = 400


@dataclass
class CurveSpec:
    """One loss to evaluate.

    Attributes:
        cfg (dict): The loss config: ``type`` and constructor keywords.
        label (str, optional): Legend label; by default :meth:`describe`.
        targets (tuple[str], optional): Kinds of target to evaluate this
            loss for; None means those given to :func:`compute_curves`.
    """

    cfg: Dict[str, Any]
    label: Optional[str] = None
    targets: Optional[Tuple[str, ...]] = None

    def describe(self) -> str:
        """Return the loss as ``Type(key=value, ...)``."""
        kwargs = ', '.join(f'{k}={v!r}' for k, v in self.cfg.items()
                           if k != 'type')
        return f'{self.cfg["type"]}({kwargs})' if kwargs else self.cfg['type']

    def display_name(self) -> str:
        """Return the legend label (:meth:`describe` when none is set)."""
        return self.label if self.label is not None else self.describe()


@dataclass
class GradientCurve:
    """The gradient of one loss for one kind of target.

    Attributes:
        spec (CurveSpec): The loss.
        kind (str): Kind of target (a key of :data:`TARGET_KINDS`).
        probs (np.ndarray): Grid of probabilities ``p``.
        grad (np.ndarray): Signed ``dL/dx`` at each grid point.
        notes (list[str]): Evaluation details for the legend (epoch, context
            of a class-coupled loss).
    """

    spec: CurveSpec
    kind: str
    probs: np.ndarray
    grad: np.ndarray
    notes: List[str] = field(default_factory=list)

    @property
    def logits(self) -> np.ndarray:
        """np.ndarray: The grid logits ``x = logit(p)``."""
        return np.log(self.probs) - np.log1p(-self.probs)

    def label(self, with_kind: bool = False) -> str:
        """Return the legend label with the notes (and the target kind)."""
        text = self.spec.display_name()
        if self.notes:
            text += ' [' + '; '.join(self.notes) + ']'
        if with_kind:
            text += f', {self.kind.replace("_", " ")}'
        return text


def preset_curves(name: str) -> List[CurveSpec]:
    """Return the curves of a preset, as copies that may be modified.

    Args:
        name (str): A key of :data:`PRESETS`.

    Returns:
        list[CurveSpec]: The preset's losses with their labels and targets.
    """
    if name not in PRESETS:
        raise ValueError(f'unknown preset {name!r}, expected one of '
                         f'{", ".join(PRESETS)}')
    return [CurveSpec(**copy.deepcopy(c)) for c in PRESETS[name]['curves']]


def probability_grid(points: int = DEFAULT_POINTS,
                     p_range: Sequence[float] = DEFAULT_P_RANGE,
                     uniform_in: str = 'prob') -> np.ndarray:
    """Return a grid of probabilities, uniform in ``p`` or in the logit.

    Args:
        points (int): Number of grid points, at least 2. Defaults to 400.
        p_range (Sequence[float]): ``(low, high)`` with
            ``0 < low < high < 1``. Defaults to ``(0.001, 0.999)``.
        uniform_in (str): ``'prob'`` or ``'logit'``. Defaults to ``'prob'``.

    Returns:
        np.ndarray: Increasing probabilities, float64.
    """
    low, high = (float(v) for v in p_range)
    if not 0 < low < high < 1:
        raise ValueError('p range must satisfy 0 < low < high < 1, got '
                         f'({low}, {high})')
    if points < 2:
        raise ValueError(f'need at least 2 grid points, got {points}')
    if uniform_in == 'prob':
        return np.linspace(low, high, points)
    if uniform_in != 'logit':
        raise ValueError(
            f"uniform_in must be 'prob' or 'logit', got {uniform_in!r}")
    logits = np.linspace(
        math.log(low / (1 - low)), math.log(high / (1 - high)), points)
    return 1 / (1 + np.exp(-logits))


@dataclass(frozen=True)
class EvalSettings:
    """How the grid points are evaluated (see the module docstring).

    Attributes:
        num_classes (int): Classes per sample: the grid label and
            ``num_classes - 1`` context classes, at least 2. Defaults to 20.
        context_logit (float): Logit of the context classes (and of the
            context samples). Defaults to 0.
        batch_context (int, optional): If given, evaluate every grid point
            in its own batch with this many context samples (for losses
            coupling the samples of a batch). Defaults to None: all grid
            points in one batch.
        epoch (int, optional): 0-based epoch; if given, passed to
            ``loss.set_epoch`` and published in the ``MessageHub``.
        max_epochs (int, optional): Number of epochs, likewise.
        pseudo_label (float, optional): The plotted label's pseudo-label in
            ``[0, 1]`` for the losses that read ``pseudo_labels``. Defaults
            to None: none (NaN).
        class_prior (float): Every class prior, in ``(0, 1]``, for the
            losses that read ``class_priors`` (CRISP). Defaults to 0.1.
    """

    num_classes: int = DEFAULT_NUM_CLASSES
    context_logit: float = 0.0
    batch_context: Optional[int] = None
    epoch: Optional[int] = None
    max_epochs: Optional[int] = None
    pseudo_label: Optional[float] = None
    class_prior: float = 0.1

    def __post_init__(self):
        if self.num_classes < 2:
            raise ValueError(
                f'num_classes must be at least 2, got {self.num_classes}')
        if self.pseudo_label is not None and not 0 <= self.pseudo_label <= 1:
            raise ValueError('pseudo_label must lie in [0, 1], got '
                             f'{self.pseudo_label}')
        if not 0 < self.class_prior <= 1:
            raise ValueError(
                f'class_prior must lie in (0, 1], got {self.class_prior}')
        if self.batch_context is not None and self.batch_context < 0:
            raise ValueError(
                f'batch_context must be >= 0, got {self.batch_context}')


def _pseudo_labels(x: torch.Tensor, settings: EvalSettings) -> torch.Tensor:
    state = torch.full_like(x, float('nan'))
    if settings.pseudo_label is not None:
        state[:, 0] = settings.pseudo_label
    return state


def _positive_rate(settings: EvalSettings) -> float:
    return min(settings.class_prior, 1 / settings.num_classes)


#: The representative value of each kind of per-sample state, from the
#: ``(N, C)`` logits and the settings, and how the legend names it.
STATE_VALUES = {
    'pseudo_labels':
    (_pseudo_labels, lambda s: 'no pseudo-label'
     if s.pseudo_label is None else f'pseudo-label {s.pseudo_label:g}'),
    'label_estimates':
    (lambda x, s: torch.zeros_like(x), lambda s: 'label estimates 0.5'),
    'class_ap': (lambda x, s: x.new_full(
        (x.size(1), ), 0.5), lambda s: 'class AP 0.5'),
    'class_priors': (lambda x, s: x.new_full(
        (x.size(1), ), s.class_prior), lambda s: f'prior {s.class_prior:g}'),
    'positive_rates': (lambda x, s: x.new_full(
        (x.size(1), ), _positive_rate(s)),
                       lambda s: f'positive rate {_positive_rate(s):.3g}'),
    'prior_estimated':
    (lambda x, s: x.new_ones(x.size(1)), lambda s: 'prior estimated'),
}


def _state_values(loss: nn.Module):
    unknown = [n for n in state_inputs(loss) if n not in STATE_VALUES]
    if unknown:
        raise ValueError(f'{type(loss).__name__} needs the state {unknown}, '
                         'which has no representative value in '
                         'loss_gradients.STATE_VALUES')
    return [(name, STATE_VALUES[name]) for name in state_inputs(loss)]


def representative_state(loss: nn.Module, x: torch.Tensor,
                         settings: EvalSettings) -> Dict[str, torch.Tensor]:
    """Return the per-sample state a stateful loss is evaluated with on
    the logits ``x`` (see the module docstring; empty for a stateless
    loss)."""
    return {
        name: make(x, settings).detach()
        for name, (make, _) in _state_values(loss)
    }


def state_note(loss: nn.Module, settings: EvalSettings) -> Optional[str]:
    """Return the legend note naming the state :func:`representative_state`
    assumes (``state: no pseudo-label``), or None for a stateless loss."""
    values = _state_values(loss)
    if not values:
        return None
    return 'state: ' + ', '.join(
        describe(settings) for _, (_, describe) in values)


def _layout(loss: nn.Module,
            probs: Union[Sequence[float], np.ndarray],
            target_value: int,
            settings: EvalSettings,
            context_shift: float = 0.0) -> Tuple[torch.Tensor, torch.Tensor]:
    """Return the logits and targets of one sample per grid probability.

    Class 0 is the grid label, the others a single-positive context (class
    1 is the sample's observed positive unless the grid label is one, the
    rest are unannotated) with logit ``context_logit + context_shift``.
    """
    if target_value not in TARGET_KINDS.values():
        raise ValueError(
            f'target_value must be 1, 0 or -1, got {target_value!r}')
    probs = np.asarray(probs, dtype=np.float64).reshape(-1)
    if probs.size == 0 or not np.all((probs > 0) & (probs < 1)):
        raise ValueError('probabilities must lie in (0, 1)')
    if not uses_tri_state_targets(loss):
        target_value = max(target_value, 0)
    x = torch.full((probs.size, settings.num_classes),
                   settings.context_logit + context_shift)
    x[:, 0] = torch.as_tensor(np.log(probs) - np.log1p(-probs))
    t = torch.zeros_like(x)
    if target_value != 1:
        t[:, 1] = 1
    t[:, 0] = target_value
    return x, t


def _sum_gradient(
        loss: nn.Module,
        x: torch.Tensor,
        t: torch.Tensor,
        state: Optional[Dict[str, torch.Tensor]] = None) -> torch.Tensor:
    """Return the gradient of the summed loss of a batch w.r.t. its
    logits (a stateful loss gets ``state`` as keyword arguments)."""
    x = x.detach().clone().requires_grad_(True)
    state = state or {}
    try:
        out = loss(x, t, reduction_override='sum', **state)
    except TypeError as err:
        if 'reduction_override' not in str(err):
            raise
        out = loss(x, t, **state)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f'{type(loss).__name__} returned '
                        f'{type(out).__name__}, not a tensor')
    if not out.requires_grad:
        return torch.zeros_like(x)
    (grad, ) = torch.autograd.grad(out.sum(), x, allow_unused=True)
    return torch.zeros_like(x) if grad is None else grad


def _evaluate(loss: nn.Module, x: torch.Tensor, t: torch.Tensor,
              settings: EvalSettings) -> torch.Tensor:
    """Return :func:`_sum_gradient` of a copy of the loss at the epoch,
    with the representative state of a stateful loss."""
    loss = copy.deepcopy(loss)
    if settings.epoch is not None and is_epoch_dependent(loss):
        getattr(loss, 'set_epoch')(settings.epoch, settings.max_epochs)
    with training_progress(settings.epoch, settings.max_epochs):
        return _sum_gradient(loss, x, t,
                             representative_state(loss, x, settings))


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True))


def gradient_coupling(
        loss: nn.Module,
        probs: Union[Sequence[float], np.ndarray],
        target_value: int,
        settings: Optional[EvalSettings] = None) -> Dict[str, bool]:
    """Find out whether the gradient of a label depends on other labels.

    Args:
        loss (nn.Module): The loss.
        probs (Sequence[float]): Grid of probabilities (at least 2).
        target_value (int): Target of the grid labels (1, 0 or -1).
        settings (EvalSettings, optional): Classes per sample, context
            logit and epoch (``batch_context`` is not used). Defaults to
            ``EvalSettings()``.

    Returns:
        dict: ``batch``: the gradient of a sample changes when the other
        samples of the batch change (half of the grid left out);
        ``classes``: it changes with the logits of the other classes of the
        sample (context logit moved by 1).
    """
    settings = settings or EvalSettings()
    x, t = _layout(loss, probs, target_value, settings)
    full = _evaluate(loss, x, t, settings)
    half = x.size(0) // 2
    halves = (slice(0, half), slice(half, None)) if half else ()
    batch = any(not _close(_evaluate(loss, x[r], t[r], settings), full[r])
                for r in halves)
    x, t = _layout(loss, probs, target_value, settings, context_shift=1.0)
    moved = _evaluate(loss, x, t, settings)
    return dict(batch=batch, classes=not _close(moved[:, 0], full[:, 0]))


def _batch_coupled(loss: nn.Module) -> ValueError:
    return ValueError(
        f'the gradient of {type(loss).__name__} at one label depends on the '
        'other samples of the batch (a batch-level term), so it has no '
        'per-element curve on its own; give batch_context (--batch-context '
        'B) to evaluate every grid point in its own batch with B context '
        'samples')


def loss_gradient(loss: nn.Module,
                  probs: Union[Sequence[float], np.ndarray],
                  target_value: int,
                  settings: Optional[EvalSettings] = None,
                  check_batch: bool = True) -> np.ndarray:
    """Compute the signed gradient ``dL/dx`` of the loss of one label.

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
        settings (EvalSettings, optional): Classes per sample, context,
            batch context and epoch. Defaults to ``EvalSettings()``.
        check_batch (bool): With ``settings.batch_context=None``, first
            check that the gradient of a sample does not depend on the other
            samples. Defaults to True.

    Returns:
        np.ndarray: ``dL/dx`` at each probability, float64.

    Raises:
        ValueError: The loss couples the samples of a batch and
            ``settings.batch_context`` is None, or an argument is out of
            range.
    """
    settings = settings or EvalSettings()
    x, t = _layout(loss, probs, target_value, settings)
    size = settings.batch_context
    if size is None:
        if check_batch and gradient_coupling(loss, probs, target_value,
                                             settings)['batch']:
            raise _batch_coupled(loss)
        grad = _evaluate(loss, x, t, settings)[:, 0]
    else:
        values = []
        for i in range(x.size(0)):
            xb = x.new_full((size + 1, x.size(1)), settings.context_logit)
            xb[0] = x[i]
            tb = t[i].expand(size + 1, -1).clone()
            values.append(_evaluate(loss, xb, tb, settings)[0, 0])
        grad = torch.stack(values)
    return grad.detach().double().numpy()


def compute_curves(
        specs: Sequence[CurveSpec],
        targets: Sequence[str] = ('negative', 'positive'),
        probs: Optional[np.ndarray] = None,
        settings: Optional[EvalSettings] = None,
        override_targets: bool = False
) -> Tuple[List[GradientCurve], List[str]]:
    """Compute the gradient curves of several losses.

    A loss that can not be evaluated for a kind of target (a forward
    needing more inputs, a batch-coupled loss without ``batch_context``, a
    missing number of epochs...) is skipped, with a message saying why.
    ``settings.batch_context`` is used for batch-coupled losses only; an
    epoch-dependent loss is evaluated at epoch 0 if ``settings.epoch`` is
    None (with a message).

    Args:
        specs (Sequence[CurveSpec]): The losses (types must be registered).
        targets (Sequence[str]): Kinds of target for specs without their
            own. Defaults to ``('negative', 'positive')``.
        probs (np.ndarray, optional): Grid; by default
            :func:`probability_grid`.
        settings (EvalSettings, optional): How the grid points are
            evaluated. Defaults to ``EvalSettings()``.
        override_targets (bool): Use ``targets`` even for specs with their
            own. Defaults to False.

    Returns:
        tuple[list[GradientCurve], list[str]]: The curves, in the order of
        ``specs`` then of their kinds of target, and messages on what was
        skipped or assumed.
    """
    probs = probability_grid() if probs is None else np.asarray(probs)
    settings = settings or EvalSettings()
    curves, messages = [], []
    for spec in specs:
        loss = build_loss(spec.cfg)
        name = spec.display_name()
        loss_settings = settings
        notes = []
        if is_epoch_dependent(loss):
            if settings.epoch is None:
                loss_settings = replace(settings, epoch=0)
                messages.append(f'note: {name} depends on the epoch; '
                                'evaluated at epoch 0 (set --epoch)')
            if spec.label is None:
                notes.append(f'epoch {loss_settings.epoch}' +
                             (f'/{settings.max_epochs}' if settings.
                              max_epochs is not None else ''))
        try:
            note = state_note(loss, settings)
        except ValueError as err:
            messages.append(f'skipped {name}: {err}')
            continue
        if note is not None:
            notes.append(note)
        kinds: Optional[Sequence[str]] = spec.targets
        if override_targets or kinds is None:
            kinds = targets
        for kind in kinds:
            value = TARGET_KINDS[kind]
            try:
                coupling = gradient_coupling(loss, probs, value, loss_settings)
                if not coupling['batch']:
                    grad = loss_gradient(
                        loss,
                        probs,
                        value,
                        replace(loss_settings, batch_context=None),
                        check_batch=False)
                elif settings.batch_context is None:
                    raise _batch_coupled(loss)
                else:
                    grad = loss_gradient(loss, probs, value, loss_settings)
            except Exception as err:  # report and go on with the others
                hint = (' (set --max-epochs)' if is_epoch_dependent(loss)
                        and settings.max_epochs is None else '')
                messages.append(f'skipped {name} ({kind}): '
                                f'{type(err).__name__}: {err}{hint}')
                continue
            curve_notes = list(notes)
            if coupling['classes']:
                curve_notes.append(f'ctx: C={settings.num_classes}, '
                                   f'x_ctx={settings.context_logit:g}')
            if coupling['batch']:
                curve_notes.append(f'batch ctx: {settings.batch_context}')
            if not np.all(np.isfinite(grad)):
                messages.append(f'warning: {name} ({kind}) has non-finite '
                                'gradients at some grid points')
            curves.append(GradientCurve(spec, kind, probs, grad, curve_notes))
    return curves, messages
