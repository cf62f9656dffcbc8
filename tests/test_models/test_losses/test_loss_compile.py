"""Every catalog loss traces as one graph (no host reads of tensor values),
compiles with ``fullgraph=True`` and takes empty batches."""
import uuid

import pytest
import torch
from mmengine.logging import MessageHub

from mmlml.models.losses import LOSS_CATALOG, example_state
from mmlml.registry import MODELS

NAMES = list(LOSS_CATALOG)


def build(name):
    return MODELS.build(dict(type=name, **LOSS_CATALOG[name]))


def batch(num_samples=64, num_classes=80, seed=0):
    """Logits and single positive targets with a few observed negatives."""
    gen = torch.Generator().manual_seed(seed)
    cls_score = torch.randn(num_samples, num_classes, generator=gen) * 2
    target = torch.zeros(num_samples, num_classes)
    if num_samples:
        target[torch.arange(num_samples),
               torch.randint(num_classes, (num_samples, ), generator=gen)] = 1
        target[:4, -3:] = -1
    return cls_score.requires_grad_(True), target


@pytest.fixture
def training_hub():
    """A MessageHub of a running training at epoch 2 of 10 (what a
    Runner's RuntimeInfoHook publishes); a fresh hub afterwards."""
    hub = MessageHub.get_instance(f'test_loss_compile_{uuid.uuid4().hex}')
    hub.update_info('loop_stage', 'train')
    hub.update_info('epoch', 2)
    hub.update_info('max_epochs', 10)
    yield hub
    MessageHub.get_instance(f'test_loss_compile_{uuid.uuid4().hex}')


def call(loss, cls_score, target, state):
    """What a head does: the loss with the batch's per-sample state."""
    return loss(cls_score, target, avg_factor=cls_score.size(0), **state)


def assert_one_graph(loss, cls_score, target):
    torch._dynamo.reset()
    state = example_state(loss, cls_score)
    explained = torch._dynamo.explain(call)(loss, cls_score, target, state)
    reasons = [str(reason.reason)[:200] for reason in explained.break_reasons]
    assert explained.graph_break_count == 0, reasons
    assert explained.graph_count == 1


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('targets', ['dense', 'indices'])
def test_traces_as_one_graph(name, targets):
    """No graph break, with the epoch given by set_epoch (epoch-dependent
    losses) and the per-sample state a head hands over (stateful ones)."""
    loss = build(name)
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(1, 10)
    cls_score, target = batch()
    if targets == 'indices':
        target = target.argmax(dim=1)
    assert_one_graph(loss, cls_score, target)


@pytest.mark.parametrize('name',
                         [n for n in NAMES if hasattr(build(n), 'set_epoch')])
def test_epoch_from_the_message_hub_keeps_one_graph(name, training_hub):
    """In training the epoch comes from the MessageHub through a custom
    operator: one graph, and the values of set_epoch at the same epoch."""
    loss = build(name)
    cls_score, target = batch()
    assert_one_graph(loss, cls_score, target)
    state = example_state(loss, cls_score)
    from_hub = call(loss, cls_score, target, state)
    loss.set_epoch(2, 10)
    torch.testing.assert_close(from_hub, call(loss, cls_score, target, state))


@pytest.mark.parametrize('name', NAMES)
def test_compiles_with_fullgraph(name, training_hub):
    """``torch.compile(fullgraph=True)`` through AOTAutograd (forward and
    backward graphs) gives the eager loss and gradient."""
    loss = build(name)
    cls_score, target = batch(seed=1)
    state = example_state(loss, cls_score)
    eager = call(loss, cls_score, target, state)
    (eager_grad, ) = torch.autograd.grad(eager, cls_score)
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, backend='aot_eager')
    value = compiled(loss, cls_score, target, state)
    (grad, ) = torch.autograd.grad(value, cls_score)
    torch.testing.assert_close(value, eager)
    torch.testing.assert_close(grad, eager_grad)


def test_epoch_changes_neither_recompile_nor_freeze(training_hub):
    """A compiled epoch-dependent loss follows the epoch without compiling
    again (GR's schedule moves every epoch)."""
    from torch._dynamo.testing import CompileCounter
    loss, reference = build('GRLoss'), build('GRLoss')
    cls_score, target = batch(seed=2)
    counter = CompileCounter()
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, backend=counter)
    values = []
    for epoch in range(10):
        training_hub.update_info('epoch', epoch)
        values.append(compiled(loss, cls_score, target, {}))
        reference.set_epoch(epoch, 10)
        torch.testing.assert_close(values[-1],
                                   call(reference, cls_score, target, {}))
    assert counter.frame_count == 1
    assert len(set(v.item() for v in values)) == 10


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
@pytest.mark.parametrize('avg_factor', [None, 0])
def test_empty_batch_is_a_zero_loss(name, reduction, avg_factor):
    """N = 0 (a filtered last batch, a rank without samples): a zero loss
    with a zero gradient, for every reduction."""
    loss = build(name)
    if hasattr(loss, 'set_epoch'):
        loss.set_epoch(1, 10)
    if name in ('HighRankRegularizer', 'LossSum') and reduction == 'none':
        pytest.skip('a batch-level term: reduction none is refused')
    cls_score, target = batch(num_samples=0)
    state = example_state(loss, cls_score)
    value = loss(
        cls_score,
        target,
        avg_factor=avg_factor,
        reduction_override=reduction,
        **state)
    if reduction == 'none':
        assert value.shape[0] == 0
    else:
        assert value.shape == () and value.item() == 0
    value.sum().backward()
    assert cls_score.grad is not None and cls_score.grad.shape == (0, 80)


def test_bad_target_stops_a_compiled_graph():
    """Inside a compiled graph the value check is a device-side assertion:
    a bad target still stops the step, with the eager check's message."""
    loss = build('HillLoss')
    cls_score, target = batch(num_samples=4, num_classes=5)
    target[0, 0] = 0.5  # e.g. a Mixup blend
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True, backend='aot_eager')
    with pytest.raises(RuntimeError, match='mmlml: target values must be'):
        compiled(loss, cls_score, target, {})
    with pytest.raises(ValueError, match=r'found \[0.5\].*Mixup'):
        call(loss, cls_score, target, {})


def test_gr_checks_its_own_number_of_epochs(training_hub):
    """GR's ``linear_init`` is checked against the number of epochs its
    schedule uses: its own ``max_epochs`` when given, else the Runner's."""
    training_hub.update_info('max_epochs', 3)
    cls_score, target = batch(num_samples=4, num_classes=5)
    own = MODELS.build(dict(type='GRLoss', max_epochs=10, linear_init=5))
    assert torch.isfinite(own(cls_score, target))
    runners = MODELS.build(dict(type='GRLoss', linear_init=5))
    with pytest.raises(ValueError, match='linear_init'):
        runners(cls_score, target)


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs CUDA')
@pytest.mark.parametrize('name', NAMES)
def test_no_host_synchronisation_on_cuda(name, training_hub):
    """On a GPU a training step of the loss (eager and compiled, epoch from
    the MessageHub) never waits for the device: no value read on the host,
    no blocking copy (runs where CUDA is available; CI has none)."""
    loss = build(name).cuda()
    cls_score, target = batch()
    cls_score = cls_score.detach().cuda().requires_grad_(True)
    target = target.cuda()
    state = {
        key: value.cuda() if torch.is_tensor(value) else value
        for key, value in example_state(loss, cls_score).items()
    }
    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True)
    for step in (call, compiled):
        step(loss, cls_score, target, state).backward()  # warm up, compile
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode('error')
        try:
            step(loss, cls_score, target, state).backward()
        finally:
            torch.cuda.set_sync_debug_mode(0)
