"""Every registered mmlml loss with the arguments it is built with: the
table that the loss contract tests and the cost benchmark
(``tools/analysis/benchmark_losses.py``) iterate over.

A registered loss is built with its defaults (``{}``) unless
:data:`LOSS_ARGUMENTS` lists it: only a loss with a required
hyperparameter is listed, with a typical value. :data:`LOSS_CATALOG` reads
the ``MODELS`` registry, so a new loss is in it once it is registered.
Epoch-dependent losses (those with a ``set_epoch`` method) need
``loss.set_epoch(epoch, max_epochs)`` outside a Runner, and stateful losses
(``state_inputs``) the per-sample state that a ``PartialLabel*Head`` hands
them: :func:`example_state` makes a representative one.
"""
import copy
from typing import Callable, Dict, Iterator, List, Mapping, Tuple

import torch
from torch import Tensor

from mmlml.registry import MODELS

__all__ = [
    'LOSS_ARGUMENTS', 'LOSS_CATALOG', 'EXAMPLE_STATE', 'mmlml_losses',
    'example_state'
]

#: The arguments of the registered losses that cannot be built with their
#: defaults: a typical value of each required hyperparameter.
LOSS_ARGUMENTS: Dict[str, dict] = {
    'GPRLoss':
    dict(expected_positives=2.9),
    'EPRLoss':
    dict(expected_positives=2.9),
    'ROLELoss':
    dict(expected_positives=2.9),
    'EntMinLoss':
    dict(alpha=0.1),
    'LossSum':
    dict(losses=[
        dict(type='ANLoss'),
        dict(type='HighRankRegularizer'),
    ]),
}


def mmlml_losses() -> List[str]:
    """The names of the losses registered in ``MODELS`` by
    ``mmlml.models.losses``, in the order of registration."""
    return [
        name for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mmlml.models.losses')
    ]


class _Catalog(Mapping):
    """``{name: arguments}`` of every registered mmlml loss
    (:func:`mmlml_losses`): its :data:`LOSS_ARGUMENTS`, else ``{}``. Each
    lookup gives a copy."""

    def __getitem__(self, name: str) -> dict:
        if name not in mmlml_losses():
            raise KeyError(f'{name!r} is not a registered mmlml loss')
        return copy.deepcopy(LOSS_ARGUMENTS.get(name, {}))

    def __iter__(self) -> Iterator[str]:
        return iter(mmlml_losses())

    def __len__(self) -> int:
        return len(mmlml_losses())

    def __repr__(self) -> str:
        return f'LOSS_CATALOG({dict(self)!r})'


#: Every registered mmlml loss and the arguments it is built with:
#: ``MODELS.build(dict(type=name, **LOSS_CATALOG[name]))``.
LOSS_CATALOG: Mapping[str, dict] = _Catalog()


def _example_pseudo_labels(shape: Tuple[int, int],
                           gen: torch.Generator) -> Tensor:
    """A third of the entries pseudo-labelled with a soft value in
    ``(0, 1)``, NaN elsewhere."""
    values = torch.rand(shape, generator=gen) * 0.98 + 0.01
    chosen = torch.rand(shape, generator=gen) < 1 / 3
    return values.masked_fill(~chosen, float('nan'))


def _example_label_estimates(shape: Tuple[int, int],
                             gen: torch.Generator) -> Tensor:
    """Logits of a label estimator (ROLE), standard normal."""
    return torch.randn(shape, generator=gen)


def _example_class_ap(shape: Tuple[int, int], gen: torch.Generator) -> Tensor:
    """A per-class vector in ``[0, 1]`` (e.g. a training AP), shape
    ``(C,)``."""
    return torch.rand(shape[1], generator=gen)


def _example_class_priors(shape: Tuple[int, int],
                          gen: torch.Generator) -> Tensor:
    """Class priors in ``[0.1, 0.5]``, shape ``(C,)`` (CRISP)."""
    return 0.1 + 0.4 * torch.rand(shape[1], generator=gen)


def _example_positive_rates(shape: Tuple[int, int],
                            gen: torch.Generator) -> Tensor:
    """Fractions of samples with an observed positive, in ``[0.02, 0.1]``,
    shape ``(C,)``: below the example priors, as observed positives are a
    part of the positives."""
    return 0.02 + 0.08 * torch.rand(shape[1], generator=gen)


def _example_prior_estimated(shape: Tuple[int, int],
                             gen: torch.Generator) -> Tensor:
    """Which classes have an estimated prior (CRISP), about three in four:
    1 or 0, shape ``(C,)``."""
    return (torch.rand(shape[1], generator=gen) < 0.75).float()


#: How to make an example of each kind of per-sample state, from the
#: ``(N, C)`` shape of the logits.
EXAMPLE_STATE: Dict[str,
                    Callable[[Tuple[int, int], torch.Generator], Tensor]] = {
                        'pseudo_labels': _example_pseudo_labels,
                        'label_estimates': _example_label_estimates,
                        'class_ap': _example_class_ap,
                        'class_priors': _example_class_priors,
                        'positive_rates': _example_positive_rates,
                        'prior_estimated': _example_prior_estimated,
                    }


def example_state(loss, cls_score: Tensor, seed: int = 0) -> Dict[str, Tensor]:
    """Representative per-sample state for ``loss`` (its ``state_inputs``),
    on the logits' device and dtype, the same for the same shape and seed.
    Empty for a stateless loss."""
    gen = torch.Generator().manual_seed(seed)
    num_samples, num_classes = cls_score.shape
    shape = (num_samples, num_classes)
    return {
        name: EXAMPLE_STATE[name](shape, gen).to(cls_score)
        for name in getattr(loss, 'state_inputs', ())
    }
