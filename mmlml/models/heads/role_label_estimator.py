"""ROLE's label estimator (Cole et al., CVPR 2021): a learnable logit per
(training sample, class)."""
import math
import warnings
from typing import Dict, Optional

import torch
import torch.nn as nn
from mmengine.dist import get_rank
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import REQUIRED, Integer, Real, check_settings

__all__ = ['ROLELabelEstimator', 'size_warning']

#: Bytes of persistent training state per entry: the float32 parameter and
#: Adam's two float32 moments (the float32 gradient adds 4 more while
#: training, and DDP all-reduces it at every iteration).
BYTES_PER_ENTRY = 12
#: Above this persistent state the estimator warns that it is impractical
#: (1 GiB, about 89 M entries). The single-positive benchmarks stay far
#: below (the training splits of COCO, 65,665 x 80, and NUS-WIDE,
#: 120,000 x 81, need 63 MB and 117 MB); OpenImages (1.74 M x 567,
#: 11.9 GB) is far above. At the threshold the gradient that DDP
#: all-reduces every iteration is 358 MB, 3.5 times a ResNet-50's.
WARN_BYTES = 2**30
#: Rows initialised at a time (bounds the temporary float32 copy).
_INIT_CHUNK_ENTRIES = 2**22


def _logit(prob: float) -> float:
    return math.log(prob / (1 - prob))


def size_warning(num_samples: int, num_classes: int) -> Optional[str]:
    """The warning for an estimator of ``num_samples x num_classes``
    logits whose training state exceeds :data:`WARN_BYTES`, else None."""
    entries = num_samples * num_classes
    state = entries * BYTES_PER_ENTRY
    if state <= WARN_BYTES:
        return None
    return (f'ROLELabelEstimator: {num_samples} samples x {num_classes} '
            f'classes = {entries / 1e6:.1f} M learnable logits: '
            f'{state / 1e9:.1f} GB of float32 parameter and Adam states, '
            f'{entries * 4 / 1e9:.1f} GB more for the gradient, which DDP '
            'all-reduces at every iteration (it is dense). ROLE is '
            'impractical at this size (warning above '
            f'{WARN_BYTES / 2**30:.0f} GiB of state).')


def _probability(default: float, low: float = 0.0) -> Real:
    """A probability in ``(low, 1)``."""
    return Real(default, low=low, high=1, low_open=True, high_open=True)


_SIZE = Integer(low=1)


@MODELS.register_module()
class ROLELabelEstimator(nn.Module):
    r"""The label estimator of ROLE (Cole et al., "Multi-Label Learning from
    Single Positive Labels", CVPR 2021): one learnable logit
    :math:`z_{nc}` per (training sample, class), looked up by the
    ``sample_idx`` of the batch; :math:`\sigma(z_{nc})` estimates the label.

    It is a submodule of the head (``model.head.label_estimator``), so the
    optimizer trains it and checkpoints hold it. The official code trains
    it with 10 times the learning rate of the network and no weight
    decay::

        model = dict(head=dict(
            type='PartialLabelLinearClsHead',
            loss=dict(_delete_=True, type='ROLELoss', expected_positives=2.9),
            label_estimator=dict(type='ROLELabelEstimator',
                                 num_samples=65665, num_classes=80)))
        optim_wrapper = dict(paramwise_cfg=dict(custom_keys={
            'head.label_estimator': dict(lr_mult=10, decay_mult=0)}))
        custom_hooks = [dict(type='LabelEstimatorHook')]

    (The parameter is ``head.label_estimator.logits``.) Weight decay would
    pull every estimate towards 0.5 at every iteration, also those of the
    samples not in the batch, since the gradient of the table is dense.

    :class:`~mmlml.hooks.LabelEstimatorHook` initialises it from the
    training set's observed labels before the first iteration, as the
    official code does:

    .. math::
        z_{nc} \sim \mathcal{U}\big(-\operatorname{logit}(u),
        \operatorname{logit}(u)\big) \text{ if unannotated}, \quad
        z_{nc} = \operatorname{logit}(0.995) \text{ if } t_{nc} = 1, \quad
        z_{nc} = \operatorname{logit}(0.005) \text{ if } t_{nc} = -1,

    with :math:`u = 0.6`, and never again: the ``initialized_shape``
    buffer, saved in checkpoints with the logits, records it, so a resumed
    run (and ``load_from`` a ROLE checkpoint of the same training set, the
    official two-stage "linear_init" training) keeps the trained estimates.
    Until then :meth:`forward` refuses lookups, so a config without the
    hook fails at the first iteration instead of training from zeros.

    Size: ``num_samples`` must be the length of the training
    ``PartialLabelDataset`` (after its train/val split; the hook checks
    it). The table costs 12 bytes per entry in float32 with Adam
    (parameter and two moments), 4 more for the gradient, and its dense
    gradient is all-reduced at every iteration under DDP; above
    :data:`WARN_BYTES` (1 GiB) the constructor warns with the numbers.

    Args:
        num_samples (int): Number of training samples :math:`N`.
        num_classes (int): Number of classes :math:`C`.
        unannotated_prob (float): :math:`u`: unannotated logits start
            uniform in :math:`\pm\operatorname{logit}(u)`, in ``(0.5, 1)``.
            Defaults to 0.6.
        positive_prob (float): Initial estimate of observed positives.
            Defaults to 0.995.
        negative_prob (float): Initial estimate of observed negatives.
            Defaults to 0.005.
    """

    #: The state it serves to the loss (see
    #: :class:`~mmlml.models.heads.LabelStateMixin`).
    provides = ('label_estimates', )
    #: A buffer: the shape the table was initialised with (zeros before).
    initialized_shape: Tensor

    hyperparameters = dict(
        num_samples=_SIZE,
        num_classes=_SIZE,
        unannotated_prob=_probability(0.6, low=0.5),
        positive_prob=_probability(0.995),
        negative_prob=_probability(0.005))

    def __init__(self,
                 num_samples: int = REQUIRED,
                 num_classes: int = REQUIRED,
                 unannotated_prob: float = 0.6,
                 positive_prob: float = 0.995,
                 negative_prob: float = 0.005):
        super().__init__()
        self.num_samples = num_samples
        self.num_classes = num_classes
        self.unannotated_prob = unannotated_prob
        self.positive_prob = positive_prob
        self.negative_prob = negative_prob
        check_settings(self)
        self.logits = nn.Parameter(
            torch.zeros(self.num_samples, self.num_classes))
        # (N, C) once initialised, (0, 0) before: a checkpoint of another
        # training set restores a shape that does not match.
        self.register_buffer('initialized_shape',
                             torch.zeros(2, dtype=torch.int64))
        message = size_warning(self.num_samples, self.num_classes)
        if message is not None and get_rank() == 0:
            warnings.warn(message, stacklevel=2)

    @property
    def is_initialized(self) -> bool:
        """bool: Whether :meth:`initialize` has run (here or in the run
        whose checkpoint was loaded)."""
        return tuple(self.initialized_shape.tolist()) == tuple(
            self.logits.shape)

    def forward(self, indices: Tensor) -> Dict[str, Tensor]:
        """Look the batch's estimates up.

        Args:
            indices (Tensor): ``(B,)`` int64 ``sample_idx`` of the batch.

        Returns:
            dict: ``{'label_estimates': (B, C) logits}``, with gradient.

        Raises:
            RuntimeError: Before :meth:`initialize`.
        """
        if not self.is_initialized:
            raise RuntimeError(
                'ROLELabelEstimator is not initialised from the observed '
                "labels: add custom_hooks=[dict(type='LabelEstimatorHook')] "
                'to the config (it initialises the estimates before the '
                'first iteration).')
        return {'label_estimates': self.logits[indices]}

    @torch.no_grad()
    def initialize(self, observed_labels: Tensor, seed: int) -> None:
        """Set the logits from the observed labels (see the class
        docstring); the same ``seed`` gives the same logits on any device
        and rank.

        Args:
            observed_labels (Tensor): ``(N, C)`` integer labels, 1 observed
                positive, 0 unannotated, -1 observed negative.
            seed (int): Seed of the uniform draw.

        Raises:
            ValueError: ``observed_labels`` does not have the estimator's
                shape.
        """
        shape = tuple(self.logits.shape)
        if tuple(observed_labels.shape) != shape:
            raise ValueError(
                f'ROLELabelEstimator holds {shape[0]} x {shape[1]} logits, '
                'but the observed labels are '
                f'{tuple(observed_labels.shape)}.')
        bound = _logit(self.unannotated_prob)
        positive, negative = (_logit(self.positive_prob),
                              _logit(self.negative_prob))
        gen = torch.Generator().manual_seed(int(seed))
        rows = max(1, _INIT_CHUNK_ENTRIES // shape[1])
        for start in range(0, shape[0], rows):
            labels = observed_labels[start:start + rows]
            values = torch.rand(labels.shape, generator=gen) * 2 - 1
            values = (values * bound).masked_fill(labels == 1, positive)
            values = values.masked_fill(labels == -1, negative)
            self.logits[start:start + rows] = values.to(self.logits)
        self.initialized_shape.copy_(torch.tensor(shape))

    def estimated_labels(self) -> Tensor:
        """Tensor: The ``(N, C)`` estimated label probabilities,
        detached."""
        return torch.sigmoid(self.logits.detach())

    def extra_repr(self) -> str:
        return (f'num_samples={self.num_samples}, '
                f'num_classes={self.num_classes}, '
                f'unannotated_prob={self.unannotated_prob}, '
                f'positive_prob={self.positive_prob}, '
                f'negative_prob={self.negative_prob}')
