"""The configs that mirror the papers (one folder per paper under
``configs/``): names in MMPretrain's scheme that agree with the config's
batch size and dataset, the model-zoo documentation of every folder, and
one real training iteration (Runner, hooks, data pipeline, loss,
optimizer step) plus a validation pass on tiny copies of the datasets
for a representative subset."""
import glob
import os.path as osp
import re

import pytest
import torch
import yaml
from benchmark_fixtures import write_benchmark_data
from conftest import ROOT, cpu_optim_wrapper
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.runner import Runner

import mmlml  # noqa: F401

#: Folders of configs that are no paper's: the demo and its source model,
#: the custom-dataset example (trained by tests/test_docs).
NOT_PAPERS = ('_base_', 'demo', 'benchmark', 'custom')
FOLDERS = sorted(
    osp.basename(osp.dirname(path))
    for path in glob.glob(osp.join(ROOT, 'configs', '*', ''))
    if osp.basename(osp.dirname(path)) not in NOT_PAPERS)
PAPER_CONFIGS = sorted(
    path for folder in FOLDERS
    for path in glob.glob(osp.join(ROOT, 'configs', folder, '*.py')))
IDS = [osp.relpath(p, osp.join(ROOT, 'configs')) for p in PAPER_CONFIGS]

#: ``{method}_{backbone}_{gpus}xb{batch}_{dataset}-{setting}``.
NAME = re.compile(r'^(?P<method>[a-z0-9-]+)_(?P<backbone>[a-z0-9-]+)_'
                  r'(?P<gpus>\d+)xb(?P<batch>\d+)_(?P<dataset>[a-z0-9]+)-'
                  r'(?P<setting>[a-z0-9]+)$')
#: The dataset class of each dataset token.
DATASETS = dict(
    voc2012='VOCMultiLabel',
    coco2014='CocoMultiLabel',
    nuswide='NUSWide',
    cub='CUBAttributes',
    openimages='OpenImagesMultiLabel')
SETTINGS = ('single', 'full', '75left', '40left')


def _name(path):
    match = NAME.match(osp.splitext(osp.basename(path))[0])
    assert match, (f'{path}: not named '
                   '{method}_{backbone}_{gpus}xb{batch}_{dataset}-{setting}')
    return match.groupdict()


def _innermost(dataset_cfg):
    while 'dataset' in dataset_cfg:
        dataset_cfg = dataset_cfg.dataset
    return dataset_cfg


def test_paper_folders_found():
    assert {'baselines', 'em_apl', 'gr_loss', 'hill_splc', 'lasd',
            'opml'} <= set(FOLDERS)


@pytest.mark.parametrize('path', PAPER_CONFIGS, ids=IDS)
def test_name_agrees_with_config(path):
    name = _name(path)
    cfg = Config.fromfile(path)
    gpus, batch = int(name['gpus']), int(name['batch'])
    assert cfg.train_dataloader.batch_size == batch
    # The learning rate is the paper's for gpus x batch images per step.
    assert cfg.auto_scale_lr.base_batch_size == gpus * batch
    assert name['dataset'] in DATASETS, name['dataset']
    assert name['setting'] in SETTINGS, name['setting']
    assert _innermost(cfg.train_dataloader.dataset).type == \
        DATASETS[name['dataset']]
    train = cfg.train_dataloader.dataset
    mode = train.get('mode')
    if name['setting'] == 'full':
        assert mode in ('full', 'annotated'), mode
    elif name['setting'] == 'single':
        assert mode in ('single_positive',
                        'file') or (mode == 'ratio' and train.ratio == 1), mode
    else:
        assert mode in ('ratio', 'file'), mode
    assert cfg.model.head.num_classes == cfg.data_preprocessor.num_classes
    # Pretrained backbones, named the usual way: nothing is downloaded
    # before training starts.
    assert cfg.model.backbone.init_cfg.type == 'Pretrained'
    # A comment at the top says what the config mirrors.
    with open(path) as f:
        assert f.readline().startswith('#')


@pytest.mark.parametrize('folder', FOLDERS)
def test_model_zoo_documentation(folder):
    """Each folder has a README that links every config and a metafile in
    MMPretrain's format that lists every config once."""
    configs = sorted(
        osp.relpath(p, ROOT)
        for p in glob.glob(osp.join(ROOT, 'configs', folder, '*.py')))
    with open(osp.join(ROOT, 'configs', folder, 'README.md')) as f:
        readme = f.read()
    for config in configs:
        assert osp.basename(config) in readme, config
    with open(osp.join(ROOT, 'configs', folder, 'metafile.yml')) as f:
        meta = yaml.safe_load(f)
    collections = {c['Name'] for c in meta['Collections']}
    for collection in meta['Collections']:
        assert collection['README'] == f'configs/{folder}/README.md'
        assert collection['Paper']['Title'] and collection['Paper']['URL']
    listed = [model['Config'] for model in meta['Models']]
    assert sorted(listed) == configs
    for model in meta['Models']:
        assert model['Name'] == osp.splitext(osp.basename(model['Config']))[0]
        assert model['In Collection'] in collections
        for result in model.get('Results') or []:
            assert result['Task'] == 'Multi-Label Classification'
            assert 0 < result['Metrics']['mAP'] <= 100


def test_model_index_lists_every_folder():
    with open(osp.join(ROOT, 'model-index.yml')) as f:
        index = yaml.safe_load(f)
    assert sorted(index['Import']) == [
        f'configs/{folder}/metafile.yml' for folder in FOLDERS
    ]


class _Stop(Exception):
    """Raised after the first training iteration."""


class _StopAfterFirstIteration(Hook):
    priority = 'LOWEST'

    def after_train_iter(self,
                         runner,
                         batch_idx,
                         data_batch=None,
                         outputs=None):
        self.loss = outputs['loss'].item()
        raise _Stop


def _shrink_pipeline(pipeline, size):
    for transform in pipeline:
        for key in ('scale', 'crop_size'):
            if isinstance(transform.get(key), (int, tuple, list)):
                transform[key] = (size,
                                  size) if isinstance(transform[key],
                                                      (tuple, list)) else size
        if 'transforms' in transform:  # MultiView: lists of pipelines
            for sub in transform.transforms:
                _shrink_pipeline(sub, size)


def _tiny(cfg, work_dir, size=64):
    """The config on tiny inputs, CPU, batch 2, without pretrained
    weights (nothing is downloaded)."""
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg[name]
        loader.update(batch_size=2, num_workers=0, persistent_workers=False)
        dataset = loader.dataset
        while dataset is not None:
            if 'pipeline' in dataset:
                _shrink_pipeline(dataset.pipeline, size)
            dataset = dataset.get('dataset')
    cfg.model.backbone.init_cfg = None
    if 'img_size' in cfg.model.backbone:
        cfg.model.backbone.img_size = size
    cfg.optim_wrapper = cpu_optim_wrapper(cfg.optim_wrapper)
    cfg.work_dir = str(work_dir)
    cfg.default_hooks.logger.interval = 1
    cfg.randomness = dict(seed=0)
    cfg.launcher = 'none'
    return cfg


#: One config per paper folder, each exercising something the others do
#: not: the Hill paper's schedule, EMA and augmentation; APL's per-sample
#: store; ROLE's label estimator; GR's epoch schedules; LASD's three
#: views; OPML's AP-based correction; CRISP's class priors.
TRAINED = [
    'hill_splc/splc_resnet50_1xb128_coco2014-40left.py',
    'em_apl/em-apl_resnet50_1xb16_coco2014-single.py',
    'baselines/role_resnet50_1xb8_voc2012-single.py',
    'gr_loss/gr_resnet50_1xb8_cub-single.py',
    'lasd/lasd-cr_resnet50_1xb8_nuswide-single.py',
    'opml/opml-sp_resnet50_1xb16_coco2014-single.py',
    'crisp/crisp_resnet50_1xb8_voc2012-single.py',
]


@pytest.mark.slow
@pytest.mark.parametrize('config', TRAINED)
def test_one_training_iteration(config, tmp_path, monkeypatch):
    path = osp.join(ROOT, 'configs', config)
    assert osp.isfile(path), config
    monkeypatch.chdir(write_benchmark_data(tmp_path))
    cfg = _tiny(Config.fromfile(path), tmp_path / 'work')
    estimator = cfg.model.head.get('label_estimator')
    if estimator is not None:  # one row per training sample
        from mmpretrain.registry import DATASETS
        estimator.num_samples = len(
            DATASETS.build(cfg.train_dataloader.dataset))
    runner = Runner.from_cfg(cfg)
    stop = _StopAfterFirstIteration()
    runner.register_hook(stop)
    with pytest.raises(_Stop):
        runner.train()
    assert torch.isfinite(torch.tensor(stop.loss))
    metrics = runner.val_loop.run()
    assert 0 <= metrics['multi-label/mAP'] <= 100


@pytest.mark.slow
def test_auto_scale_lr_scales_the_one_cycle_peak(tmp_path, monkeypatch):
    """``auto_scale_lr`` scales the peak of the one-cycle schedule
    (``ScaledOneCycleLR``, which takes it from the optimizer's lr) like the
    optimizer's lr, with the stock Runner."""
    monkeypatch.chdir(write_benchmark_data(tmp_path))
    path = osp.join(ROOT, 'configs', TRAINED[0])
    cfg = _tiny(Config.fromfile(path), tmp_path / 'work')
    assert cfg.param_scheduler[0].type == 'ScaledOneCycleLR'
    assert 'eta_max' not in cfg.param_scheduler[0]
    lr = cfg.optim_wrapper.optimizer.lr
    cfg.auto_scale_lr.enable = True
    runner = Runner.from_cfg(cfg)
    runner.optim_wrapper = runner.build_optim_wrapper(runner.optim_wrapper)
    runner.scale_lr(runner.optim_wrapper, runner.auto_scale_lr)
    schedulers = runner.build_param_scheduler(runner.param_schedulers)
    # One process, batch 2, against the paper's 128 images per step (the
    # optimizer's groups; MMEngine's logging-only base group is not scaled
    # by scale_lr, whatever the schedule).
    for group in runner.optim_wrapper.optimizer.param_groups:
        assert group['max_lr'] == pytest.approx(lr * 2 / 128)
        assert group['initial_lr'] == pytest.approx(lr * 2 / 128 / 25)
    assert type(schedulers[0]).__name__ == 'ScaledOneCycleLR'
