"""The compiled CPU kernels of GR Loss, LASD and SPLC, and their eager
fallback.

The rest of the suite runs with ``MMLML_COMPILE=0`` (tests/conftest.py):
these tests compile the kernels (six variants, a few seconds each) and
check them against the eager implementations, which the other tests check
against the official code and finite differences.
"""
import importlib
import shutil
import sys

import pytest
import torch

from mmlml.models.losses import GRLoss
from mmlml.models.losses.fused_kernel import (FUSED_FROM, FusedKernel,
                                              compile_enabled,
                                              expm1_nonpositive)

gr_module = importlib.import_module('mmlml.models.losses.gr_loss')
lasd_module = importlib.import_module('mmlml.models.losses.lasd_loss')
splc_module = importlib.import_module('mmlml.models.losses.splc_loss')

#: (q1, q2, q3): every form of the robust terms ('log', 'power', 'mae').
ROBUSTNESS = [(0.0, 0.01, 1.0), (0.01, 0.01, 1.5), (1.0, 0.0, 0.0),
              (0.5, 2.0, 0.7)]

#: LASD's arguments: Theorem 5.4's lambda- from a number and per sample,
#: integer and real focal parameters, a weight of the observed negatives.
LASD_ARGUMENTS = [
    dict(expected_positives=2.9),
    dict(),
    dict(
        gamma_pos=1,
        gamma_neg=2.5,
        lambda_neg=0.3,
        observed_negative_weight=1.0,
        tau=0.5),
    dict(gamma_pos=0.5, gamma_neg=0),
]


def logits_and_target(rows=64, classes=567, seed=0):
    """Logits N(0, 3^2) with rows of extreme (+-100) and tiny values, and a
    target with observed positives, observed negatives and unannotated
    labels in every row."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, classes, generator=gen) * 3
    x[0] = torch.linspace(-100, 100, classes)
    x[1] = torch.linspace(-1e-3, 1e-3, classes)
    target = torch.zeros(rows, classes)
    target[torch.arange(rows),
           torch.randint(classes, (rows, ), generator=gen)] = 1
    target[:, 1::7] = -1
    target[0, ::5] = 1
    return x, target


def gr_arguments(q1, q2, q3):
    loss = GRLoss(max_epochs=8, q1=q1, q2=q2, q3=q3, beta=(0, 10, -2, -8))
    loss.set_epoch(4)
    return loss.loss_kwargs()


#: SPLC's arguments: the official focal margin base, before the
#: correction, the BCE base, a detached focal weight with other gammas.
SPLC_ARGUMENTS = [
    dict(),
    dict(correct=False),
    dict(margin=0, gamma_pos=0, gamma_neg=0),
    dict(gamma_pos=1, gamma_neg=3, detach_focal_weight=True),
    dict(gamma_pos=0.5, gamma_neg=2.5, tau=0.3),
]

#: (functional loss, its module's kernel attribute, keyword arguments).
CASES = ([(gr_module.gr_loss, 'GR_KERNEL', gr_arguments(*q))
          for q in ROBUSTNESS] + [(lasd_module.lasd_loss, 'LASD_KERNEL', kw)
                                  for kw in LASD_ARGUMENTS] +
         [(splc_module.splc_loss, 'SPLC_KERNEL', kw) for kw in SPLC_ARGUMENTS])


def value_and_grad(loss_fn, x, target, kwargs):
    """Element-wise loss and derivative."""
    x = x.detach().requires_grad_()
    value = loss_fn(x, target, reduction='none', **kwargs)
    grad, = torch.autograd.grad(value.sum(), x)
    return value.detach(), grad


def assert_close(actual, expected):
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-7)


def test_expm1_nonpositive_accuracy():
    z = torch.cat([
        -torch.logspace(-12, 2, 4001),
        torch.linspace(-0.36, -0.34, 2001),
        torch.zeros(1)
    ])
    expected = torch.expm1(z.double())
    error = (expm1_nonpositive(z).double() - expected).abs()
    # A few units in the last place of float32 (2^-24 relative).
    assert (error <= 4 * 2.0**-24 * expected.abs()).all()


class EagerKernel(FusedKernel):
    """A kernel that runs its function without compiling it."""

    def _function(self):
        return self.fn


def eager_then_kernel(loss_fn, kernel, kwargs, kernel_class, monkeypatch):
    """The eager loss and derivative on :func:`logits_and_target`, then the
    loss's kernel replaced by a new ``kernel_class`` and switched on.
    Returns the inputs, the eager results and the new kernel."""
    x, target = logits_and_target()
    expected = value_and_grad(loss_fn, x, target, kwargs)
    module = sys.modules[loss_fn.__module__]
    new = kernel_class(getattr(module, kernel).fn)
    monkeypatch.setattr(module, kernel, new)
    monkeypatch.setenv('MMLML_COMPILE', '1')
    return x, target, expected, new


@pytest.mark.parametrize('loss_fn,kernel,kwargs', CASES)
def test_kernel_formulas_match_eager_terms(loss_fn, kernel, kwargs,
                                           monkeypatch):
    """The kernels' functions, run eagerly (no compiler involved), equal
    the eager terms of every label state, extreme logits included."""
    x, target, expected, uncompiled = eager_then_kernel(
        loss_fn, kernel, kwargs, EagerKernel, monkeypatch)
    assert_close(value_and_grad(loss_fn, x, target, kwargs), expected)
    assert uncompiled.failure is None


@pytest.mark.skipif(
    not any(shutil.which(cxx) for cxx in ('g++', 'c++', 'clang++')),
    reason='torch.compile needs a C++ compiler on the CPU')
@pytest.mark.parametrize('loss_fn,kernel,kwargs', [
    (gr_module.gr_loss, 'GR_KERNEL', gr_arguments(*ROBUSTNESS[0])),
    (gr_module.gr_loss, 'GR_KERNEL', gr_arguments(*ROBUSTNESS[3])),
    (lasd_module.lasd_loss, 'LASD_KERNEL', LASD_ARGUMENTS[0]),
    (lasd_module.lasd_loss, 'LASD_KERNEL', LASD_ARGUMENTS[2]),
    (splc_module.splc_loss, 'SPLC_KERNEL', SPLC_ARGUMENTS[0]),
])
def test_compiled_kernel_matches_eager(loss_fn, kernel, kwargs, monkeypatch):
    x, target, expected, fresh = eager_then_kernel(loss_fn, kernel, kwargs,
                                                   FusedKernel, monkeypatch)
    assert fresh.applies(x)
    assert_close(value_and_grad(loss_fn, x, target, kwargs), expected)
    assert fresh.failure is None and fresh._compiled is not None
    if loss_fn is gr_module.gr_loss and kwargs['q2'] == 0.01:
        # The forward alone, and logits that are not contiguous.
        with torch.no_grad():
            assert_close((loss_fn(x, target, reduction='none', **kwargs), ),
                         expected[:1])
        strided = x.t().contiguous().t()
        assert not strided.is_contiguous()
        assert_close(
            value_and_grad(loss_fn, strided, target, kwargs), expected)
        assert fresh.failure is None


def test_kernel_not_used_where_it_does_not_apply(monkeypatch):
    kernel = FusedKernel(gr_module.GR_KERNEL.fn)
    monkeypatch.setattr(gr_module, 'GR_KERNEL', kernel)
    monkeypatch.setenv('MMLML_COMPILE', '1')
    assert compile_enabled()
    big = torch.zeros(FUSED_FROM)
    assert kernel.applies(big)
    assert not kernel.applies(torch.zeros(FUSED_FROM - 1))
    assert not kernel.applies(torch.zeros(FUSED_FROM, device='meta'))
    for off in ('0', 'false', 'Off', 'no'):
        monkeypatch.setenv('MMLML_COMPILE', off)
        assert not compile_enabled() and not kernel.applies(big)

    def no_compile(*args, **kwargs):
        raise AssertionError('torch.compile must not be called')

    monkeypatch.setattr(torch, 'compile', no_compile)
    x, target = logits_and_target()
    assert gr_module.gr_loss(x, target,
                             **gr_arguments(*ROBUSTNESS[0])).isfinite()
    assert kernel._compiled is None


def copy_kernel():
    """A kernel whose function copies the logits into the value."""

    def copy(x, value, grad):
        value.copy_(x)

    return FusedKernel(copy, name='copy')


def test_failing_kernel_falls_back_once(monkeypatch):
    """A kernel that cannot be compiled or run warns once and gives way to
    the eager implementation for the rest of the process."""
    monkeypatch.setenv('MMLML_COMPILE', '1')
    compiled = []

    def broken_compile(fn, **kwargs):
        compiled.append(fn)

        def run(*args):
            raise RuntimeError('no C++ compiler found')

        return run

    monkeypatch.setattr(torch, 'compile', broken_compile)
    kernel = copy_kernel()
    x = torch.ones(FUSED_FROM)
    with pytest.warns(RuntimeWarning, match='no C.. compiler found'):
        assert kernel(x, eager=lambda: 'eager') == 'eager'
    assert 'no C++ compiler' in kernel.failure
    assert not kernel.applies(x)
    assert kernel(x, eager=lambda: 'again') == 'again'
    assert len(compiled) == 1


def test_input_errors_are_raised_not_swallowed(monkeypatch):
    """An error that the eager implementation raises too is the inputs'
    fault: it propagates and the kernel stays in use."""
    monkeypatch.setenv('MMLML_COMPILE', '1')

    def failing_compile(fn, **kwargs):

        def run(*args):
            raise RuntimeError('shape mismatch')

        return run

    def eager():
        raise ValueError('bad input')

    monkeypatch.setattr(torch, 'compile', failing_compile)
    kernel = copy_kernel()
    with pytest.raises(ValueError, match='bad input'):
        kernel(torch.ones(FUSED_FROM), eager=eager)
    assert kernel.failure is None
