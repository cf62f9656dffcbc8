"""The domains of the demo configs (configs/_base_/domains/): found by
their files, chosen by MMLML_DEMO_DOMAIN in configs/demo/an.py, each
defining what the demo configs read, and the digits domain built and
stepped once."""
import os
import os.path as osp

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.benchmark.sweep.settings import (DEFAULT_DOMAIN, DOMAINS_DIR,
                                            domain_file, domains)
from mmlml.registry import DATASETS, MODELS

DOMAINS = domains()
AN = osp.join(ROOT, 'configs', 'demo', 'an.py')
#: The dataloaders and metrics every domain shares.
SHARED = Config.fromfile(
    osp.join(ROOT, 'configs', '_base_', 'datasets', 'generated_domain.py'))


def _demo_config(monkeypatch, domain=None, name='an.py'):
    if domain is None:
        monkeypatch.delenv('MMLML_DEMO_DOMAIN', raising=False)
    else:
        monkeypatch.setenv('MMLML_DEMO_DOMAIN', domain)
    return Config.fromfile(osp.join(ROOT, 'configs', 'demo', name))


def test_domains_are_found_by_their_files(tmp_path):
    """A domain is its file: the domains are the files present, a new
    file is a new domain, and nothing else in the folder is one."""
    folder = osp.join(ROOT, DOMAINS_DIR)
    assert DOMAINS == sorted(name[:-3] for name in os.listdir(folder)
                             if name.endswith('.py'))
    assert DEFAULT_DOMAIN in DOMAINS and len(DOMAINS) >= 3
    assert domain_file('x') == osp.join(folder, 'x.py')
    checkout = tmp_path / 'checkout'
    assert domains(str(checkout)) == []
    (checkout / DOMAINS_DIR).mkdir(parents=True)
    for name in ('striped.py', 'dots.py', '_shared.py', 'README.md'):
        (checkout / DOMAINS_DIR / name).write_text('')
    assert domains(str(checkout)) == ['dots', 'striped']


@pytest.mark.parametrize('domain', DOMAINS)
def test_domain_defines_what_the_demo_configs_read(domain, monkeypatch):
    cfg = _demo_config(monkeypatch, domain, 'role.py')
    for key in ('num_classes', 'expected_positives', 'num_train_samples'):
        assert key in cfg, key
    assert cfg.model.head.num_classes == cfg.num_classes
    assert cfg.data_preprocessor.num_classes == cfg.num_classes
    estimator = cfg.model.head.label_estimator
    assert estimator.num_samples == cfg.num_train_samples
    if cfg.model.backbone.type == 'PrecomputedFeatures':
        # The linear protocol: the pretrained backbone made the features.
        features = cfg.train_dataloader.dataset.dataset.features
        assert features.checkpoint.endswith('efficientnet_lite0_imagenet.pth')
    else:
        assert cfg.model.backbone.init_cfg.type == 'Pretrained'
    assert cfg.train_cfg.max_epochs == 10
    assert cfg.optim_wrapper.optimizer.lr == 0.01
    # The wrapping and the metrics are the shared file's.
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        for setting in ('batch_size', 'num_workers', 'sampler'):
            assert cfg[key][setting] == SHARED[key][setting], (key, setting)
    assert cfg.val_evaluator == cfg.test_evaluator == SHARED.val_evaluator
    for key in ('type', 'mode', 'seed', 'split'):
        assert cfg.train_dataloader.dataset[key] == \
            SHARED.train_dataloader.dataset[key]


def test_default_domain_is_synthetic_shapes(monkeypatch):
    assert DEFAULT_DOMAIN == 'synthetic_shapes'
    default = _demo_config(monkeypatch).to_dict()
    explicit = _demo_config(monkeypatch, DEFAULT_DOMAIN).to_dict()
    assert default == explicit
    assert default['train_dataloader']['dataset']['dataset']['type'] == \
        'SyntheticShapes'


@pytest.fixture
def one_thread():
    """A step on 4 small images runs faster on one thread than on a thread
    pool, and much faster when the other cores are busy."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_digits_domain_builds_and_steps(monkeypatch, one_thread):
    cfg = _demo_config(monkeypatch, 'digit_canvases', 'full_labels.py')
    assert cfg.prepare_creates == 'checkpoints/efficientnet_lite0_imagenet.pth'
    assert cfg.prepare_command.split()[1:] == [
        'tools/model_converters/efficientnet_lite0.py', cfg.prepare_creates
    ]
    # The file the configs load is the one the benchmark makes.
    assert osp.normpath(cfg.model.backbone.init_cfg.checkpoint) == osp.join(
        ROOT, cfg.prepare_creates)
    train, val = cfg.train_dataloader.dataset, cfg.val_dataloader.dataset
    for key in ('val_frac', 'split_seed'):
        assert train[key] == val[key] == train.dataset[key]
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(train)
        # The weights are not loaded (no init_weights): the checkpoint is
        # made by the converter, not shipped.
        model = MODELS.build(
            dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    assert len(dataset) == cfg.num_train_samples
    batch = model.data_preprocessor(
        pseudo_collate([dataset[i] for i in range(4)]), training=True)
    assert batch['inputs'].shape == (4, 3, 40, 40)
    assert batch['inputs'].abs().max() <= 1
    losses = model(**batch, mode='loss')
    loss = sum(losses.values())
    assert torch.isfinite(loss)
    loss.backward()


@pytest.mark.parametrize('domain, shape, linear', [
    ('photo_canvases', (4, 320, 2, 2), 'photo_canvases_linear'),
    ('photo_canvases_linear', (4, 1280, 2, 2), 'photo_canvases_linear'),
    ('photo_canvases_heldout_linear',
     (4, 1280, 2, 2), 'photo_canvases_heldout_linear'),
])
def test_photo_domain_protocols_build_and_step(domain, shape, linear,
                                               monkeypatch, one_thread,
                                               tmp_path):
    """Both protocols of the real-photo domain (and the rebuilt variant's
    linear one), on the generated stand-ins of the stamps and wallpapers,
    random backbone weights and 64 px canvases."""
    from mmlml.datasets.domains.photo_backgrounds import \
        write_stand_in_wallpapers
    from mmlml.datasets.domains.photo_canvases import write_stand_in_stamps
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS',
                       write_stand_in_stamps(str(tmp_path / 'stamps')))
    monkeypatch.setenv('MMLML_WALLPAPERS',
                       write_stand_in_wallpapers(str(tmp_path / 'wall')))
    cfg = _demo_config(monkeypatch, domain, 'full_labels.py')
    assert cfg.linear_domain == linear
    assert cfg.prepare_creates[-1] == \
        'checkpoints/efficientnet_lite0_imagenet.pth'
    train = cfg.train_dataloader.dataset
    features = train.dataset.features
    assert osp.normpath(features.checkpoint) == osp.join(
        ROOT, cfg.prepare_creates[-1])
    features.update(checkpoint=None, cache_dir=str(tmp_path / 'cache'))
    train.dataset.update(img_size=64)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(train)
        model = MODELS.build(
            dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    assert len(dataset) == cfg.num_train_samples
    batch = model.data_preprocessor(
        pseudo_collate([dataset[i] for i in range(4)]), training=True)
    assert batch['inputs'].shape == shape
    loss = sum(model(**batch, mode='loss').values())
    assert torch.isfinite(loss)
    loss.backward()
    trained = [n for n, p in model.named_parameters() if p.grad is not None]
    assert trained and all(
        n.startswith(('backbone.layers.6', 'head')) for n in trained)
