"""Element-wise functions compiled into one CPU kernel, with an eager
fallback.

A loss whose terms need several transcendental functions per entry (GR
Loss's unannotated term: five) costs, in eager mode, one pass over memory
per operator and one temporary per intermediate. :class:`FusedKernel`
compiles the loss's element-wise value and derivative with
``torch.compile`` into a single loop over the entries, on first use in a
process (a few seconds, logged), and runs the loss's own eager
implementation wherever the kernel does not apply:

* ``MMLML_COMPILE=0`` in the environment (the test suite sets it);
* tensors off the CPU: on an accelerator a loss is a negligible part of an
  iteration, and compiling for it is not part of what is tested;
* tensors of fewer than :data:`FUSED_FROM` entries, where the fixed cost of
  a call dominates either way;
* inside a ``torch.compile`` of a larger graph, which traces the eager
  implementation itself;
* after compiling or running the kernel failed once in this process (no
  C++ compiler, an unsupported platform): a warning says why, and the eager
  implementation is used from then on. An error that the eager
  implementation raises too is an error of the inputs: it is raised and
  the kernel stays in use.
"""
import logging
import os
import warnings
from typing import Callable, Optional, Tuple

import torch
from mmengine.logging import print_log
from torch import Tensor

from .base import wants_grad
from .terms import ValueGrad

__all__ = [
    'FusedKernel', 'compile_enabled', 'expm1_nonpositive', 'fused_focal',
    'sigmoid_and_logs', 'FUSED_FROM'
]

#: The environment variable that turns the compiled kernels off (``0``).
COMPILE_VARIABLE = 'MMLML_COMPILE'

#: Tensors of fewer entries run the eager implementation. Also keeps the
#: entry count of a kernel's inputs away from 0 and 1, which
#: ``torch.compile`` would otherwise specialise (and compile again) for.
FUSED_FROM = 1 << 10


def compile_enabled() -> bool:
    """Whether :class:`FusedKernel` may compile (``MMLML_COMPILE`` is not
    ``0``, ``false``, ``no`` or ``off``); read at every call."""
    value = os.environ.get(COMPILE_VARIABLE, '1').strip().lower()
    return value not in ('0', 'false', 'no', 'off')


class FusedKernel:
    """A loss's element-wise value and derivative, computed by one kernel
    compiled from ``fn`` for CPU tensors.

    ``fn(x, *args, value_out, grad_out)`` computes the loss of each entry
    of the logits ``x`` and its derivative by the logit, and writes them
    into ``value_out`` and ``grad_out`` (``out.copy_(result)``; ``grad_out``
    is None when no gradient is wanted), returning nothing.
    ``kernel(x, *args, eager=...)`` returns the pair ``(value, grad)`` as
    :func:`~.terms.by_state_value_grad` does: computed by the compiled
    ``fn`` without autograd, ``x``, every other tensor of its shape and the
    outputs passed flattened; where the kernel does not apply (see the
    module), ``eager()``, which must return the same pair. Numbers that
    change during training (a schedule's values) should be passed as 0-dim
    tensors: a Python number is compiled in as a constant, and a new value
    compiles the function again.

    Args:
        fn (Callable): The function, written with out-of-place ``torch``
            operations and a final ``copy_`` into each output.
        name (str): What to call it in log messages. Defaults to the
            function's qualified name.
    """

    def __init__(self, fn: Callable, name: Optional[str] = None):
        self.fn = fn
        self.name = name or fn.__qualname__
        self._compiled = None
        self.failure: Optional[str] = None

    def applies(self, x: Tensor) -> bool:
        """Whether ``x`` would run the compiled kernel."""
        return (self.failure is None and compile_enabled()
                and x.device.type == 'cpu' and x.numel() >= FUSED_FROM
                and not _compiling())

    def __call__(self, x: Tensor, *args,
                 eager: Callable[[], ValueGrad]) -> ValueGrad:
        if not self.applies(x):
            return eager()
        value = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        grad = torch.empty_like(value) if wants_grad(x) else None
        flat = [
            arg.reshape(-1)
            if isinstance(arg, Tensor) and arg.shape == x.shape else arg
            for arg in (x, *args, value)
        ] + [None if grad is None else grad.view(-1)]
        try:
            with torch.no_grad():
                self._function()(*flat)
        except Exception as error:  # noqa: BLE001 - any failure falls back
            results = eager()  # raises if the inputs are at fault
            self.failure = f'{type(error).__name__}: {error}'
            warnings.warn(
                f'mmlml: the compiled kernel of {self.name} failed, using '
                f'its eager implementation from now on ({self.failure})',
                RuntimeWarning)
            return results
        return value, grad

    def _function(self) -> Callable:
        if self._compiled is None:
            print_log(
                f'mmlml: compiling {self.name} into one CPU kernel (once per '
                f'process; {COMPILE_VARIABLE}=0 runs it eagerly instead)',
                logger='current',
                level=logging.INFO)
            self._compiled = torch.compile(
                self.fn, dynamic=True, fullgraph=True)
        return self._compiled


def _compiling() -> bool:
    """Whether ``torch.compile`` is tracing the caller (False on a PyTorch
    without ``torch.compiler``)."""
    is_compiling = getattr(
        getattr(torch, 'compiler', None), 'is_compiling', None)
    return bool(is_compiling is not None and is_compiling())


def sigmoid_and_logs(x: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    r""":math:`p = \sigma(x)`, :math:`1 - p`, :math:`\log p` and
    :math:`\log(1 - p)` from one :math:`e^{-|x|}` and one logarithm, for
    the body of a kernel: the values of :class:`~.terms.Logits`, exact for
    any finite logit."""
    exp = torch.exp(-x.abs())
    log1p_exp = torch.log1p(exp)
    prob = torch.where(x >= 0, 1.0, exp) / (1 + exp)
    return (prob, 1 - prob, x.clamp(max=0) - log1p_exp,
            -x.clamp(min=0) - log1p_exp)


def fused_focal(nll: Tensor,
                base: Tensor,
                other: Tensor,
                gamma: float,
                sign: int,
                detach_focal_weight: bool = False) -> Tuple[Tensor, Tensor]:
    r"""A focal term in the body of a kernel, :math:`b^{\gamma} \ell_0`,
    and its derivative :math:`\pm b^{\gamma} [\gamma o \ell_0 + b]`
    (:math:`\pm b^{\gamma} b` with the focal weight detached): the
    positive term of :func:`~.terms.positive_value_grad` (``nll``
    :math:`= -\log p`, ``base`` :math:`1 - p`, ``other`` :math:`p`,
    ``sign=-1``) or the negative one of
    :func:`~.terms.negative_value_grad` without a clip
    (:math:`-\log(1 - p)`, :math:`p`, :math:`1 - p`, ``+1``). Integer
    powers up to 4 by multiplication."""
    if gamma == 0:
        return nll, base if sign > 0 else -base
    weight = base
    if gamma in (1, 2, 3, 4):
        for _ in range(int(gamma) - 1):
            weight = weight * base
    else:
        weight = base**gamma
    if detach_focal_weight:
        slope = weight * base
    else:
        slope = weight * (gamma * other * nll + base)
    return weight * nll, slope if sign > 0 else -slope


def expm1_nonpositive(z: Tensor) -> Tensor:
    r""":math:`e^z - 1` for :math:`z \le 0`, to a few units in the last
    place, at about half the cost of ``torch.expm1`` in a fused kernel:
    its Taylor polynomial of degree 7 for :math:`z > -0.35` (truncation
    error below :math:`0.35^8 / 8! < 10^{-8}`, relative to
    :math:`|e^z - 1| > 0.29` at most :math:`2 \cdot 10^{-8}`), else
    :math:`e^z - 1` (no cancellation: :math:`e^z \le 0.71`)."""
    series = z * (1 / 5040) + (1 / 720)
    for coefficient in (1 / 120, 1 / 24, 1 / 6, 1 / 2, 1.0):
        series = series * z + coefficient
    return torch.where(z > -0.35, series * z, torch.exp(z) - 1)
