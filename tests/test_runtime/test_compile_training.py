"""MMEngine's ``compile=True`` trains the demo end to end with a stateless
loss (Hill) and a stateful method (EM + APL, whose pseudo-labels reach the
loss through the label store), giving the eager run's losses.

Hill runs through inductor, as ``compile=True`` does (one layout setting
aside, below). EM + APL runs through the same graph capture and autograd
tracing with the ``aot_eager`` backend, which skips inductor's code
generation (minutes on a 2-core machine), so the suite stays fast. Both
runs allow each compiled function two compilations only (one with the
first batch's sample indices, one with them symbolic): a learning rate
fixed in a graph, or sample indices read as constants, recompiled the
step at every iteration.

The heads' training loss, label-store lookup included, is one graph with
no break (checked with ``torch._dynamo.explain`` on the demo's heads).

Inductor keeps the tensors' NCHW layout here (``layout_optimization``
off). Its default turns the convolutions channels-last, and oneDNN's 1x1
stride-2 convolution backward on channels-last input with fewer input
channels than its AVX-512 block (16) writes past its workspace
(uxlfoundation/oneDNN#6035, open: a heap corruption or segfault on AVX-512
CPUs with two threads or more and a batch of odd size, such as this test's
17, in eager mode too). The demo backbone's first shortcut has 8 input
channels; real backbones have 64 or more. See docs/performance.md."""
import os.path as osp
import sys

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmengine.runner import Runner
from mmpretrain.structures import DataSample
from stateful_methods import METHODS, method_config

import mmlml  # noqa: F401
from mmlml.registry import MODELS
from mmlml.structures import LabelStore

#: Inductor reorders floating-point sums: after a few SGD steps the losses
#: of the compiled run differ from the eager ones by about 1e-6 relative.
RTOL = 1e-3

CASES = {
    'hill':
    dict(
        model=dict(head=dict(loss=dict(_delete_=True, type='HillLoss'))),
        custom_hooks=[]),
    'em_apl':
    METHODS['em_apl'],
}
#: The ``compile`` setting of each case.
COMPILE = {'hill': True, 'em_apl': dict(backend='aot_eager')}
#: Compilations allowed per compiled function: one with the first batch's
#: sample indices as constants, one with them symbolic.
RECOMPILE_LIMIT = 2


def train_losses(config, **options):
    cfg = Config.fromfile(config)
    # 51 training images in 3 batches of 17: one shape, one compilation.
    cfg.merge_from_dict(dict(train_dataloader=dict(batch_size=17), **options))
    cfg.experiment_name = f'compile_{bool(options)}_{id(cfg)}'
    runner = Runner.from_cfg(cfg)
    runner.train()
    store = getattr(runner.model.head, 'label_store', None)
    return (torch.as_tensor(
        runner.message_hub.get_scalar('train/loss').data[0]),
            None if store is None else store.num_pseudo_labels)


@pytest.mark.slow
@pytest.mark.parametrize('method', sorted(CASES))
def test_compiled_training_matches_eager(tiny_demo_config, tmp_path, method):
    sys.path.insert(0, str(tmp_path))
    config = method_config(
        tiny_demo_config, tmp_path, CASES[method], method, max_epochs=2)
    eager, eager_labels = train_losses(config)
    torch._dynamo.reset()
    with torch._inductor.config.patch(layout_optimization=False), \
            torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT,
                                       fail_on_recompile_limit_hit=True):
        compiled, compiled_labels = train_losses(
            config, compile=COMPILE[method])
    assert len(compiled) == len(eager) == 6  # 2 epochs of 3 iterations
    torch.testing.assert_close(compiled, eager, rtol=RTOL, atol=1e-5)
    assert compiled_labels == eager_labels
    if method == 'em_apl':
        assert eager_labels > 0  # the second epoch read pseudo-labels


def demo_head(config):
    """The head of a demo config (``configs/demo/``), built."""
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', config))
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return MODELS.build(cfg.model.head)


def head_batch(indices, num_classes=20, in_channels=64):
    """Pooled features and single-positive ``DataSample``s of the training
    samples ``indices``, as the demo's head receives them."""
    generator = torch.Generator().manual_seed(len(indices))
    feats = (torch.randn(len(indices), in_channels, generator=generator), )
    samples = []
    for index in indices:
        score = torch.zeros(num_classes)
        score[index % num_classes] = 1
        samples.append(
            DataSample(metainfo=dict(sample_idx=index)).set_gt_score(score))
    return feats, samples


@pytest.mark.parametrize('config', ['hill.py', 'em_apl.py'])
def test_head_loss_compiles_to_one_graph(config):
    """The training loss of the demo's head (EM + APL's with pseudo-labels
    looked up in a label store) is one graph without a break, which is not
    compiled again for each batch of other samples."""
    head = demo_head(config).train()
    if config == 'em_apl.py':
        store = LabelStore(64, 20)
        store.assign(torch.arange(0, 64, 3), torch.arange(0, 64, 3) % 7, 0.25)
        head.attach_label_store(store)
    feats, samples = head_batch(list(range(8)))
    torch._dynamo.reset()
    explained = torch._dynamo.explain(head.loss)(feats, samples)
    reasons = [reason.reason for reason in explained.break_reasons]
    assert explained.graph_break_count == 0, reasons
    assert explained.graph_count == 1

    torch._dynamo.reset()
    loss = torch.compile(head.loss, backend='eager')
    # Batches of other samples, then a smaller last batch: one compilation
    # each for the first batch, symbolic indices and the batch size.
    batches = [range(8, 16), range(40, 64, 3), range(1, 64, 8), range(5)]
    with torch._dynamo.config.patch(
            recompile_limit=RECOMPILE_LIMIT + 1,
            fail_on_recompile_limit_hit=True):
        for indices in batches:
            feats, samples = head_batch(list(indices))
            torch.testing.assert_close(
                loss(feats, samples)['loss'],
                head.loss(feats, samples)['loss'])
