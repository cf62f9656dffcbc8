"""tools/train.py --smoke and the config transformation behind it
(mmlml.cli.smoke_config): a two-epoch offline trial of any config."""
import os.path as osp

import pytest
from conftest import ROOT, load_train_tool
from mmengine.config import Config

from mmlml.cli.smoke_config import scale_epoch_start, smoke_config


def _config(path):
    return Config.fromfile(osp.join(ROOT, path))


def _hooks(cfg, name):
    return [hook for hook in cfg.custom_hooks if hook['type'] == name]


def test_paper_config_becomes_an_offline_trial():
    """Zhang et al.'s SPLC config: mixed precision, ImageNet weights, 448 px,
    batch 128, a one-cycle schedule over 80 epochs of which 31 train."""
    cfg = smoke_config(
        _config('configs/hill_splc/splc_resnet50_1xb128_coco2014-40left.py'))
    assert cfg.optim_wrapper.type == 'OptimWrapper'
    assert 'loss_scale' not in cfg.optim_wrapper
    assert cfg.model.backbone.init_cfg is None and cfg.load_from is None
    assert cfg.train_cfg.max_epochs == 2 and cfg.train_cfg.val_interval == 1
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        assert cfg[name].batch_size == 2 and cfg[name].num_workers == 0
    train = cfg.train_dataloader.dataset.dataset.pipeline
    resize = [t for t in train if t['type'] == 'Resize'][0]
    cutout = [t for t in train if t['type'] == 'Cutout'][0]
    assert resize['scale'] == (64, 64) and cutout['shape'] == 32
    assert cfg.test_dataloader.dataset.pipeline[1]['scale'] == (64, 64)
    # The whole cycle in the run: 80 scheduled epochs -> 2, the momentum
    # phases' boundary (epoch 16) -> 0.4.
    ends = [(s['begin'], s['end']) for s in cfg.param_scheduler]
    assert ends == [(0, 2), (0, 0.4), (0.4, 2)]
    # SPLC's correction from (0-based) epoch 1: still inside the run.
    assert cfg.model.head.loss.change_epoch == 1


def test_warmups_are_found_by_type_and_scaled():
    """APL's warm-up (5 of 10 epochs) lies behind an early-stopping hook
    in the list; ClassPriorHook's default applies when the config gives
    none."""
    cfg = smoke_config(
        _config('configs/em_apl/em-apl_resnet50_1xb8_voc2012-single.py'))
    assert cfg.custom_hooks[0]['type'] == 'EarlyStoppingHook'
    assert _hooks(cfg, 'APLHook')[0]['warmup_epochs'] == 1
    cfg = _config('configs/demo/crisp.py')
    cfg.custom_hooks = [dict(type='ClassPriorHook')]  # default warm-up
    smoke_config(cfg, epochs=4)
    assert _hooks(cfg, 'ClassPriorHook')[0] == dict(type='ClassPriorHook')
    cfg = _config('configs/demo/crisp.py')
    cfg.custom_hooks = [
        dict(type='mmpretrain.ClassPriorHook', warmup_epochs=5)
    ]
    smoke_config(cfg, epochs=4)
    assert cfg.custom_hooks[0]['warmup_epochs'] == 2  # 5 * 4 / 10


def test_loss_epoch_settings_are_scaled():
    cfg = _config('configs/demo/an.py')
    cfg.model.head.loss = dict(
        type='LossSum',
        losses=[
            dict(type='GRLoss', linear_init=6, max_epochs=10),
            dict(type='SPLCLoss', change_epoch=0)
        ])
    smoke_config(cfg, epochs=3)
    gr, splc = cfg.model.head.loss.losses
    assert gr['linear_init'] == 2 and gr['max_epochs'] == 3  # 6 * 3 / 10
    assert splc['change_epoch'] == 0  # no warm-up stays none
    # Defaults that need no change are not written.
    cfg = _config('configs/gr_loss/gr_resnet50_1xb8_voc2012-single.py')
    assert 'linear_init' not in smoke_config(cfg).model.head.loss


def test_epoch_based_schedulers_are_rounded():
    cfg = _config('configs/demo/an.py')
    cfg.param_scheduler = [
        dict(type='MultiStepLR', by_epoch=True, milestones=[3, 6]),
        dict(
            type='CosineAnnealingLR', by_epoch=True, begin=0, T_max=10,
            end=10),
        dict(type='LinearLR', by_epoch=False, begin=0, end=500),
    ]
    smoke_config(cfg)  # the demo trains 10 epochs: factor 0.2
    multi, cosine, iters = cfg.param_scheduler
    assert multi['milestones'] == [1, 1]
    assert (cosine['begin'], cosine['T_max'], cosine['end']) == (0, 2, 2)
    assert iters['end'] == 500  # counted in iterations: left alone


@pytest.mark.parametrize('value,expected', [(0, 0), (1, 1), (5, 1), (9, 1),
                                            (20, 1)])
def test_scale_epoch_start(value, expected):
    assert scale_epoch_start(value, 0.2, 2) == expected


def test_refused_settings():
    with pytest.raises(ValueError, match='at least 2 epochs'):
        smoke_config(_config('configs/demo/an.py'), epochs=1)
    cfg = _config('configs/demo/an.py')
    cfg.train_cfg = dict(by_epoch=False, max_iters=100)
    with pytest.raises(ValueError, match='epoch-based'):
        smoke_config(cfg)
    tool = load_train_tool()
    config = osp.join(ROOT, 'configs/demo/an.py')
    with pytest.raises(ValueError, match='--smoke.*--amp'):
        tool.merge_args(
            Config.fromfile(config),
            tool.parse_args([config, '--smoke', '--amp']))


def test_smoke_run_of_a_warm_up_method(tiny_demo_config, tmp_path):
    """EM + APL with the paper's five warm-up epochs of ten: refused as a
    two-epoch run, trained with --smoke (the --cfg-options after it still
    apply)."""
    base = tiny_demo_config(
        loss=dict(type='EMAPLLoss', alpha=0.2, beta=0.5), max_epochs=10)
    config = tmp_path / 'em_apl.py'
    config.write_text(f"""
_base_ = [{base!r}]
model = dict(head=dict(type='PartialLabelLinearClsHead'))
custom_hooks = [dict(type='EmptyCacheHook'),
                dict(type='APLHook', warmup_epochs=5)]
""")
    tool = load_train_tool()
    with pytest.raises(ValueError, match='warmup_epochs=5'):
        tool.main([
            str(config), '--work-dir',
            str(tmp_path / 'refused'), '--cfg-options',
            'train_cfg.max_epochs=2'
        ])
    runner = tool.main([
        str(config), '--smoke', '--work-dir',
        str(tmp_path / 'smoke'), '--cfg-options',
        'default_hooks.checkpoint.save_best=None'
    ])
    assert runner.epoch == 2 and runner.iter > 0
    apl = [h for h in runner.hooks if type(h).__name__ == 'APLHook'][0]
    assert apl.warmup_epochs == 1
