"""MissingLabelDiagnosticsHook: argument checks, and training runs of a
Runner on CPU checked against a direct computation of the statistics."""
import json
import os.path as osp
import uuid
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn as nn
from conftest import case
from missing_label_reference import METRICS, reference_metrics, reference_stats
from mmengine.logging import MMLogger
from mmengine.model import BaseModule
from mmengine.registry import DefaultScope
from mmengine.runner import Runner
from mmpretrain.structures import DataSample

import mmlml  # noqa: F401
from mmlml.hooks import MissingLabelDiagnosticsHook
from mmlml.registry import DATASETS

NAN, INF = float('nan'), float('inf')
NUM_SAMPLES = 30
NUM_CLASSES = 5

# ------------------------------------------------------------- arguments
#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=0), ValueError,
         r'interval must be an integer >= 1, got 0', 0),
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=-2), ValueError,
         r'interval must be an integer >= 1, got -2', -2),
    case('diagnostics-hook-interval-bad',
         lambda t: MissingLabelDiagnosticsHook(interval=1.5), ValueError,
         r'interval must be an integer >= 1, got 1\.5', 1.5),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=1.5), ValueError,
         r'thr must lie in \(0, 1\), got 1\.5', 1.5),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=0), ValueError,
         r'thr must lie in \(0, 1\), got 0', 0),
    case('diagnostics-hook-thr-bad',
         lambda t: MissingLabelDiagnosticsHook(thr=NAN), ValueError,
         r'thr must be a finite real number, got nan', 'nan'),
    case('diagnostics-hook-num-bins-bad',
         lambda t: MissingLabelDiagnosticsHook(num_bins=1), ValueError,
         r'num_bins must be an integer >= 2, got 1'),
    case('diagnostics-hook-logit-range-bad',
         lambda t: MissingLabelDiagnosticsHook(logit_range=INF), ValueError,
         r'logit_range must be a finite real number, got inf'),
    case('diagnostics-hook-prefix-bad',
         lambda t: MissingLabelDiagnosticsHook(prefix=''), ValueError,
         r"prefix must be a non-empty str, got ''"),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    assert MissingLabelDiagnosticsHook(
        interval=np.int64(2), thr=np.float32(0.25)).interval == 2


@pytest.mark.parametrize('kwargs,match', [
    (dict(interval=0), 'interval'),
    (dict(interval=1.5), 'interval'),
    (dict(num_bins=1), 'num_bins'),
    (dict(num_bins=True), 'num_bins'),
    (dict(thr=0), 'thr'),
    (dict(thr=1.), 'thr'),
    (dict(logit_range=0.), 'logit_range'),
    (dict(logit_range=float('inf')), 'logit_range'),
    (dict(prefix=''), 'prefix'),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MissingLabelDiagnosticsHook(**kwargs)


def test_build_from_mmpretrain_registry():
    from mmpretrain.registry import HOOKS
    hook = HOOKS.build(dict(type='MissingLabelDiagnosticsHook', thr=0.3))
    assert isinstance(hook, MissingLabelDiagnosticsHook)
    assert hook.priority == 'NORMAL' and hook.thr == 0.3


# ---------------------------------------------------------- dataset setup
class IndexImage:
    """A transform: a 4x4 image filled with the inner sample index (read
    from the image name, ``{index}.jpg``)."""

    def __call__(self, results):
        index = int(osp.splitext(osp.basename(results['img_path']))[0])
        results['img'] = np.full((4, 4, 3), index, np.uint8)
        return results


@pytest.fixture(scope='module')
def ann_file(tmp_path_factory):
    rng = np.random.RandomState(3)
    full = (rng.rand(NUM_SAMPLES, NUM_CLASSES) < 0.5).astype(np.uint8)
    full[:, 0] = 1  # at least one positive everywhere
    data_list = [
        dict(img_path=f'{i}.jpg', gt_label=np.flatnonzero(row).tolist())
        for i, row in enumerate(full)
    ]
    path = tmp_path_factory.mktemp('diag') / 'ann.json'
    classes = [f'class{c}' for c in range(NUM_CLASSES)]
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=classes), data_list=data_list), f)
    return str(path)


def inner_cfg(ann_file):
    return dict(
        type='MultiLabelDataset',
        ann_file=ann_file,
        pipeline=[IndexImage(), dict(type='PackInputs')])


def partial_cfg(ann_file, **kwargs):
    kwargs.setdefault('split', 'train')
    return dict(
        type='PartialLabelDataset', dataset=inner_cfg(ann_file), **kwargs)


def partial_dataset(ann_file, **kwargs):
    return DATASETS.build(partial_cfg(ann_file, **kwargs))


def wrapped(type, **kwargs):
    # MMEngine's wrappers build their inner datasets in the default scope.
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        return DATASETS.build(dict(type=type, **kwargs))


# ----------------------------------------------------------- Runner runs
class MeanPixel(BaseModule):
    """A backbone whose only feature is the mean pixel value."""

    def forward(self, x):
        return (x.float().mean(dim=(1, 2, 3))[:, None], )


class RecordingHook(MissingLabelDiagnosticsHook):
    """Also keeps what each capture saw, to check the row alignment."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.records = []
        self.epoch = None

    def before_train_epoch(self, runner):
        super().before_train_epoch(runner)
        self.epoch = runner.epoch

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        super().before_train_iter(runner, batch_idx, data_batch)
        self.indices = self._sample_indices(data_batch)

    def _capture(self, module, args, output):
        if self._pending is not None and module.training:
            self.records.append(
                (self.epoch, self.indices, output.detach().clone()))
        super()._capture(module, args, output)


def make_runner(tmp_path, dataset, hook, max_epochs=2, val=False):
    from mmpretrain.models import ImageClassifier
    model = ImageClassifier(
        backbone=MeanPixel(),
        head=dict(
            type='MultiLabelLinearClsHead',
            num_classes=NUM_CLASSES,
            in_channels=1,
            loss=dict(type='CrossEntropyLoss', use_sigmoid=True)),
        data_preprocessor=dict(
            type='ClsDataPreprocessor', num_classes=NUM_CLASSES))
    loader = dict(
        batch_size=5,
        num_workers=0,
        sampler=dict(type='DefaultSampler', shuffle=True),
        dataset=dataset)
    extra = {}
    if val:
        extra = dict(
            val_dataloader=dict(
                batch_size=8,
                num_workers=0,
                sampler=dict(type='DefaultSampler', shuffle=False),
                dataset=partial_dataset(dataset.dataset.ann_file,
                                        split='val')),
            val_evaluator=dict(type='AveragePrecision'),
            val_cfg=dict())
    return Runner(
        model=model,
        work_dir=str(tmp_path),
        experiment_name=f'diag_{uuid.uuid4().hex}',
        train_dataloader=loader,
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs, val_interval=1),
        # lr 0: the head is the same at every iteration, so the captured
        # logits can be recomputed from the sample index afterwards.
        optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.)),
        default_hooks=dict(
            logger=dict(type='LoggerHook', interval=1),
            checkpoint=dict(type='CheckpointHook', interval=100)),
        custom_hooks=[hook],
        visualizer=dict(
            type='Visualizer', vis_backends=[dict(type='LocalVisBackend')]),
        default_scope='mmpretrain',
        randomness=dict(seed=0),
        **extra)


def test_runner_epoch_reports(ann_file, tmp_path):
    dataset = partial_dataset(ann_file, mode='single_positive')
    hook = RecordingHook(
        thr=0.5, num_bins=16, logit_range=2., save_histograms=True)
    runner = make_runner(tmp_path, dataset, hook, max_epochs=2, val=True)
    runner.train()

    # Rows are aligned with the batch's sample_idx: the logits of a row are
    # the head applied to that sample's image (filled with its inner index).
    head = runner.model.head
    assert len(hook.records) == 2 * 5  # 24 samples, batch 5, 2 epochs
    for _, indices, logits in hook.records:
        feats = torch.from_numpy(dataset.indices[indices]).float()[:, None]
        torch.testing.assert_close(logits, head.fc(feats).detach())
    # Every sample seen once per epoch.
    for epoch in (0, 1):
        seen = np.concatenate(
            [idx for e, idx, _ in hook.records if e == epoch])
        assert sorted(seen.tolist()) == list(range(len(dataset)))

    # The statistics of the last epoch equal a direct computation.
    last = [(idx, lg) for e, idx, lg in hook.records if e == 1]
    indices = np.concatenate([idx for idx, _ in last])
    logits = torch.cat([lg for _, lg in last]).numpy()
    observed = dataset.observed_labels[indices]
    full = dataset.full_labels[indices]
    hist, counts, _, _, _ = reference_stats(logits, observed, full, 16, 2.,
                                            0.5)
    np.testing.assert_array_equal(hook.stats.hist.numpy(), hist)
    np.testing.assert_array_equal(hook.stats.counts.numpy(), counts)
    want = reference_metrics(logits, observed, full, 0.5)

    # Message hub: one value per epoch, the last one the last epoch's.
    hub = runner.message_hub
    for name in METRICS:
        buffer = hub.get_scalar(f'missing_label/{name}')
        assert len(buffer.data[0]) == 2, name
    for name in ('frac_missing', 'pos_rate', 'score_pos', 'recall'):
        assert hub.get_scalar(f'missing_label/{name}').current() == \
            pytest.approx(want[name], rel=1e-6), name
    assert hub.get_scalar('missing_label/frac_missing').current() > 0.3

    # Visualiser, text log, saved histograms.
    scalars = osp.join(runner.log_dir, 'vis_data', 'scalars.json')
    with open(scalars) as f:
        lines = [json.loads(line) for line in f]
    diag = [x for x in lines if 'missing_label/auc' in x]
    assert [x['step'] for x in diag] == [1, 2]
    log_file = osp.join(runner.log_dir, osp.basename(runner.log_dir) + '.log')
    with open(log_file) as f:
        log = f.read()
    assert 'Missing-label diagnostics (epoch 1, 24 samples' in log
    assert 'recall@0.5' in log and 'missing_label/recall' not in log
    saved = np.load(
        osp.join(runner.log_dir, 'missing_label_diagnostics', 'epoch_2.npz'))
    np.testing.assert_array_equal(saved['hist_missing_pos'], hist[0])
    assert saved['logit_edges'].shape == (17, )
    assert list(saved['classes']) == [f'class{c}' for c in range(5)]

    # The forward hook is gone after training; validation never captured.
    assert not head._forward_hooks
    assert 'val/multi-label/mAP' in hub.log_scalars


def test_runner_iteration_reports_and_repeat_dataset(ann_file, tmp_path):
    repeat = wrapped(
        'RepeatDataset',
        times=2,
        dataset=partial_cfg(ann_file, mode='ratio', ratio=0.5))
    hook = MissingLabelDiagnosticsHook(
        by_epoch=False, interval=2, save_histograms=True)
    runner = make_runner(tmp_path, repeat, hook, max_epochs=1)
    runner.train()  # 48 samples, batch 5: 10 iterations
    out_dir = osp.join(runner.log_dir, 'missing_label_diagnostics')
    for it in (2, 4, 6, 8, 10):
        saved = np.load(osp.join(out_dir, f'iter_{it}.npz'))
        # Each report covers the 2 iterations since the last one.
        assert int(saved['metric_num_samples']) == (10 if it < 10 else 8)
    buffer = runner.message_hub.get_scalar('missing_label/auc')
    assert len(buffer.data[0]) == 5


def test_runner_every_other_epoch(ann_file, tmp_path):
    dataset = partial_dataset(ann_file, mode='single_positive')
    hook = RecordingHook(interval=2)
    runner = make_runner(tmp_path, dataset, hook, max_epochs=3)
    runner.train()
    # Epoch 2 (interval) and epoch 3 (the last) are reported, 1 is skipped.
    assert sorted({e for e, _, _ in hook.records}) == [1, 2]
    buffer = runner.message_hub.get_scalar('missing_label/recall')
    assert len(buffer.data[0]) == 2


def test_runner_fails_fast_without_full_labels(ann_file, tmp_path):
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        plain = DATASETS.build(inner_cfg(ann_file))
    runner = make_runner(
        tmp_path, plain, MissingLabelDiagnosticsHook(), max_epochs=1)
    with pytest.raises(TypeError, match='wrap, a PartialLabelDataset'):
        runner.train()


class FakeRunner:
    """The few runner attributes that the hook's set-up and capture use."""

    def __init__(self, dataset, model):
        self.train_dataloader = SimpleNamespace(dataset=dataset)
        self.model = model
        self.logger = MMLogger.get_current_instance()
        self.iter, self.max_iters = 0, 100


class HeadOnly(nn.Module):

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(1, NUM_CLASSES)


def batch_of(indices):
    return dict(data_samples=[
        DataSample(metainfo=dict(sample_idx=i)) for i in indices
    ])


def test_hook_refuses_clean_val_split_and_headless_model(ann_file):
    hook = MissingLabelDiagnosticsHook()
    runner = FakeRunner(
        partial_dataset(ann_file, split='val'), nn.Linear(2, 2))
    with pytest.raises(ValueError, match='clean'):
        hook.before_train(runner)
    runner.train_dataloader.dataset = partial_dataset(ann_file)
    with pytest.raises(TypeError, match='head'):
        hook.before_train(runner)


def test_capture_checks(ann_file):
    model = HeadOnly()
    runner = FakeRunner(partial_dataset(ann_file), model)
    hook = MissingLabelDiagnosticsHook(by_epoch=False, interval=50)
    hook.before_train(runner)

    # The model never calls its head during the step.
    hook.before_train_iter(runner, 0, batch_of([0, 1, 2]))
    with pytest.raises(RuntimeError, match='did not call'):
        hook.after_train_iter(runner, 0, batch_of([0, 1, 2]))

    # Rows that do not match the batch.
    hook.before_train_iter(runner, 0, batch_of([0, 1, 2]))
    with pytest.raises(RuntimeError, match='one row per sample'):
        model.head(torch.zeros(2, 1))

    # Eval-mode calls are ignored; the first training call counts, once.
    hook.before_train_iter(runner, 0, batch_of([0, 1, 2]))
    model.eval()
    model.head(torch.zeros(7, 1))
    model.train()
    model.head(torch.zeros(3, 1))
    model.head(torch.zeros(3, 1))
    hook.after_train_iter(runner, 0, batch_of([0, 1, 2]))
    assert int(hook.stats.num_samples) == 3

    bad = batch_of([0, 1])
    del bad['data_samples'][1].sample_idx
    with pytest.raises(KeyError, match='sample_idx'):
        hook.before_train_iter(runner, 1, bad)
    with pytest.raises(IndexError, match='out of range'):
        hook.before_train_iter(runner, 1, batch_of([0, 24]))
    with pytest.raises(TypeError, match='data_samples'):
        hook.before_train_iter(runner, 1, [torch.zeros(1)])

    hook.after_train(runner)
    assert not model.head._forward_hooks
