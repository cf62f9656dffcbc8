"""tools/train.py --training-progress: a one-epoch smoke run of an
epoch-dependent method, which the method refuses without the hook."""
import os.path as osp

import pytest
from conftest import load_train_tool
from mmengine.config import Config

SPLC = dict(type='SPLCLoss', tau=0.6, change_epoch=1, margin=1.0, gamma=2.0)


def _one_epoch_config(tiny_demo_config, tmp_path):
    """The tiny demo with SPLC, one epoch and a constant learning rate (the
    demo's warm-up + cosine schedule needs two epochs), with a custom hook
    of its own that the flag must keep."""
    base = tiny_demo_config(loss=SPLC, max_epochs=1)
    path = tmp_path / 'one_epoch.py'
    path.write_text(f"""
_base_ = [{base!r}]
param_scheduler = [dict(type='ConstantLR', factor=1.0, by_epoch=True)]
custom_hooks = [dict(type='EmptyCacheHook')]
""")
    return str(path)


def test_flag_adds_the_hook_once_and_keeps_the_others(tiny_demo_config,
                                                      tmp_path):
    tool = load_train_tool()
    config = _one_epoch_config(tiny_demo_config, tmp_path)
    cfg = tool.merge_args(
        Config.fromfile(config),
        tool.parse_args([config, '--training-progress']))
    assert [h['type'] for h in cfg.custom_hooks
            ] == ['EmptyCacheHook', 'TrainingProgressHook']
    # Not twice when the config (or --cfg-options) has it already.
    tool.add_training_progress_hook(cfg)
    assert [h['type'] for h in cfg.custom_hooks
            ] == ['EmptyCacheHook', 'TrainingProgressHook']
    cfg = tool.merge_args(Config.fromfile(config), tool.parse_args([config]))
    assert [h['type'] for h in cfg.custom_hooks] == ['EmptyCacheHook']


def test_one_epoch_smoke_run(tiny_demo_config, tmp_path):
    tool = load_train_tool()
    config = _one_epoch_config(tiny_demo_config, tmp_path)
    with pytest.raises(RuntimeError, match='--training-progress|single'):
        tool.main([config, '--work-dir', str(tmp_path / 'refused')])
    runner = tool.main(
        [config, '--training-progress', '--work-dir',
         str(tmp_path / 'smoke')])
    assert runner.epoch == 1 and runner.iter > 0
    assert (tmp_path / 'smoke' / 'epoch_1.pth').exists()
    names = [type(hook).__name__ for hook in runner.hooks]
    assert names.count('TrainingProgressHook') == 1
    assert 'EmptyCacheHook' in names


def _shrink_pipeline(pipeline, size):
    for transform in pipeline:
        for key in ('scale', 'crop_size'):
            value = transform.get(key)
            if isinstance(value, (tuple, list)):
                transform[key] = (size, size)
            elif isinstance(value, int):
                transform[key] = size
        for sub in transform.get('transforms') or []:
            _shrink_pipeline(sub, size)


@pytest.mark.slow
def test_one_epoch_smoke_run_of_a_paper_config(tmp_path, monkeypatch):
    """The Hill paper's SPLC config (80-epoch one-cycle schedule, EMA,
    SPLC from epoch 1) on a tiny copy of COCO, for one epoch."""
    from benchmark_fixtures import write_benchmark_data
    from conftest import ROOT, cpu_optim_wrapper
    monkeypatch.chdir(write_benchmark_data(tmp_path))
    cfg = Config.fromfile(
        osp.join(ROOT, 'configs', 'hill_splc',
                 'splc_resnet50_1xb128_coco2014-40left.py'))
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[name].update(batch_size=4, num_workers=0, persistent_workers=False)
        dataset = cfg[name].dataset
        while dataset is not None:
            _shrink_pipeline(dataset.get('pipeline') or [], 32)
            dataset = dataset.get('dataset')
    cfg.model.backbone.init_cfg = None  # nothing is downloaded
    cfg.optim_wrapper = cpu_optim_wrapper(cfg.optim_wrapper)
    config = str(tmp_path / 'splc_tiny.py')
    cfg.dump(config)
    tool = load_train_tool()
    # Refused without --training-progress, as test_one_epoch_smoke_run
    # shows on the demo; no best checkpoint (a ResNet-50 and its EMA copy
    # are slow to write).
    runner = tool.main([
        config, '--training-progress', '--work-dir',
        str(tmp_path / 'smoke'), '--cfg-options', 'train_cfg.max_epochs=1',
        'default_hooks.checkpoint.save_best=None'
    ])
    assert runner.epoch == 1
    assert (tmp_path / 'smoke' / 'epoch_1.pth').exists()
    names = [type(hook).__name__ for hook in runner.hooks]
    assert 'EMAHook' in names and 'TrainingProgressHook' in names
