"""The rebuilt real-photo domain on generated stand-ins of its packages
(the stamps and the wallpapers; neither package is needed): held-out
backgrounds, the long tail of class frequencies, the label statistics its
config promises and the function that states them in a record."""
import os.path as osp

import numpy as np
import pytest
from conftest import ROOT
from mmengine.config import Config

from mmlml.datasets import PartialLabelDataset, PhotoCanvases
from mmlml.datasets.domains import photo_backgrounds
from mmlml.datasets.domains.photo_backgrounds import (
    WALLPAPER_PACKAGES, WALLPAPERS, background_pools, find_wallpapers,
    write_stand_in_wallpapers)
from mmlml.datasets.domains.photo_canvases import write_stand_in_stamps
from mmlml.datasets.domains.photo_statistics import (config_statistics,
                                                     domain_statistics)

HELDOUT = osp.join(ROOT, 'configs', '_base_', 'domains',
                   'photo_canvases_heldout.py')


@pytest.fixture(scope='module')
def stamps(tmp_path_factory):
    return write_stand_in_stamps(
        str(tmp_path_factory.mktemp('stamps')), photos_per_category=4)


@pytest.fixture(scope='module')
def wallpapers(tmp_path_factory):
    return write_stand_in_wallpapers(str(tmp_path_factory.mktemp('wall')))


def _heldout_settings() -> dict:
    """The canvas settings of the rebuilt domain's config."""
    cfg = Config.fromfile(HELDOUT)
    return dict(cfg.heldout)


def _pair(stamps, wallpapers, num_samples=1000, **kwargs):
    """The training and test canvases, not drawn yet (``layout`` draws
    them without pixels)."""
    kwargs.setdefault('img_size', 64)
    return tuple(
        PhotoCanvases(
            split=split,
            num_samples=num_samples,
            stamps_root=stamps,
            wallpapers_root=wallpapers,
            lazy_init=True,
            **kwargs) for split in ('train', 'test'))


def test_background_pools_are_disjoint_and_fixed():
    pools = background_pools(26)
    parts = [set(p.tolist()) for p in pools.values()]
    assert [len(p) for p in parts] == [13, 5, 8]
    assert set().union(*parts) == set(range(26))
    assert all(
        np.array_equal(pools[k],
                       background_pools(26)[k]) for k in pools)
    with pytest.raises(ValueError, match='3 pools'):
        background_pools(2)


def test_validation_and_test_backgrounds_are_never_trained_on(
        stamps, wallpapers):
    train, test = _pair(
        stamps, wallpapers, num_samples=200, backgrounds='wallpapers')
    infos, pools = train.layout(), train.canvas_pools()
    used = {
        pool: {
            info['background_id']
            for info, where in zip(infos, pools) if where == pool
        }
        for pool in ('train', 'val')
    }
    used['test'] = {info['background_id'] for info in test.layout()}
    assert all(used.values())
    assert not used['train'] & used['val']
    assert not used['train'] & used['test']
    assert len(train.background_files()) == 10 + len(WALLPAPERS)
    # By default every canvas draws on the ten bundled photographs.
    default, _ = _pair(stamps, wallpapers, num_samples=50)
    assert {i['background_id'] for i in default.layout()} <= set(range(10))


def test_the_wrapper_must_split_as_the_backgrounds_were(stamps, wallpapers):
    dataset = dict(
        type='PhotoCanvases',
        stamps_root=stamps,
        wallpapers_root=wallpapers,
        img_size=48,
        num_samples=20,
        backgrounds='wallpapers')
    assert len(
        PartialLabelDataset(
            dataset=dataset, mode='single_positive', split='val')) == 4
    with pytest.raises(ValueError, match="backgrounds='wallpapers'"):
        PartialLabelDataset(
            dataset=dataset, mode='single_positive', split='val', split_seed=7)


def test_missing_wallpapers_are_one_line_naming_the_packages(
        stamps, tmp_path, monkeypatch):
    monkeypatch.delenv('MMLML_WALLPAPERS', raising=False)
    monkeypatch.setattr(photo_backgrounds, 'WALLPAPER_ROOTS',
                        (str(tmp_path / 'none'), ))
    with pytest.raises(FileNotFoundError) as info:
        PhotoCanvases(stamps_root=stamps, backgrounds='wallpapers')
    message = str(info.value)
    assert '\n' not in message
    assert 'tools/dataset_converters/wallpapers.py' in message
    assert f'apt-get install {" ".join(WALLPAPER_PACKAGES)}' in message
    # One package missing: the message names it.
    root = write_stand_in_wallpapers(str(tmp_path / 'some'))
    missing = [p for p, _, _ in WALLPAPERS if p == 'mate-backgrounds']
    for package, path, _ in WALLPAPERS:
        if package in missing:
            (tmp_path / 'some' / path).unlink()
    with pytest.raises(
            FileNotFoundError, match=r'missing: mate-backgrounds\)'):
        find_wallpapers(root)
    # The default needs no wallpaper.
    PhotoCanvases(stamps_root=stamps, num_samples=2, lazy_init=True)


def test_class_skew_makes_a_long_tail_and_defaults_keep_the_old_canvases(
        stamps, wallpapers):
    skewed, _ = _pair(stamps, wallpapers, class_skew=20.)
    weights = skewed.class_weights()
    assert weights[0] / weights[-1] == pytest.approx(20.)
    counts = np.zeros(skewed.num_label_columns)
    for info in skewed.layout():
        counts[info['gt_label']] += 1
    assert counts[0] > 5 * counts[-1]
    default, _ = _pair(stamps, wallpapers, num_samples=4)
    assert default.class_weights() is None
    # The settings added since the first canvases stay out of the cache
    # key at their defaults, so the committed caches keep their key.
    key = default.description()
    assert 'class_skew' not in key
    assert [name for name, _ in key['backgrounds']][-1] == 'china.jpg'
    assert 'class_skew' in skewed.description()


def test_the_heldout_config_meets_its_statistics_targets(stamps, wallpapers):
    """Issue 44's targets, on the config's own canvas settings: at least
    2.5 labels per image, class priors 10x apart or more, single positive
    hiding at least 55% of the positives, r = 0.8 at least 10 points
    below it; and nothing of validation or test in training."""
    train, test = _pair(stamps, wallpapers, **_heldout_settings())
    stats = domain_statistics(train, test)
    hidden = stats['hidden_positive_share']
    low, high = stats['class_prior_range']
    assert stats['labels_per_image'] >= 2.5
    assert high >= 10 * low
    assert hidden['single_positive'] >= 0.55
    assert hidden['single_positive'] - hidden['r0.8'] >= 0.10
    assert hidden['r0.8'] > hidden['r0.5'] > 0
    assert stats['test_backgrounds_seen_in_training'] == 0
    assert stats['val_backgrounds_seen_in_training'] == 0
    # The photographs recur unless the variant splits them.
    assert stats['test_photographs_seen_in_training'] > 0.9
    train, test = _pair(
        stamps, wallpapers, disjoint_photos=True, **_heldout_settings())
    stats = domain_statistics(train, test)
    assert stats['test_photographs_seen_in_training'] == 0
    assert stats['val_photographs_seen_in_training'] == 0


def test_domain_statistics_count_what_they_say(stamps, wallpapers):
    train, test = _pair(
        stamps, wallpapers, num_samples=40, object_counts=(0, 0, 0, 0, 1))
    stats = domain_statistics(train, test, label_seeds=(1200, 1201, 1202))
    assert stats['classes'] == 18 and stats['train_images'] == 32
    labels = np.array([
        np.bincount(i['gt_label'], minlength=18) for i in train.layout()
    ])[train.canvas_pools() == 'train']
    assert stats['labels_per_image'] == pytest.approx(
        labels.sum(1).mean(), abs=1e-4)
    priors = labels.mean(0)
    assert stats['class_prior_range'] == pytest.approx(
        [priors.min(), priors.max()], abs=1e-4)
    # Single positive keeps one of each image's positives, r = 0.5 keeps
    # floor(n / 2) + 1, r = 0.8 floor(n / 5) + 1 (n <= 5 objects here).
    n = labels.sum(1)
    hidden = stats['hidden_positive_share']
    for name, kept in (('single_positive',
                        np.minimum(n, 1)), ('r0.5', np.minimum(n, n // 2 + 1)),
                       ('r0.8', np.minimum(n, n // 5 + 1))):
        assert hidden[name] == pytest.approx(
            1 - kept.sum() / n.sum(), abs=1e-4), name
    # The bundled backgrounds are shared by every split.
    assert stats['test_backgrounds_seen_in_training'] > 0.9
    assert stats['label_seed_per_training_seed'] is True
    assert domain_statistics(train,
                             test)['label_seed_per_training_seed'] is False
    assert domain_statistics(
        train, test,
        label_seeds=(1200, 1200))['label_seed_per_training_seed'] is False
    with pytest.raises(ValueError, match='split'):
        domain_statistics(test, train)
    with pytest.raises(ValueError, match='label_seeds'):
        domain_statistics(train, test, label_seeds=())


def test_a_domain_config_states_its_statistics(stamps, wallpapers,
                                               monkeypatch):
    """The statistics of the config's own training and test canvases, as
    the records will carry them, and its ``expected_positives``."""
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS', stamps)
    monkeypatch.setenv('MMLML_WALLPAPERS', wallpapers)
    cfg = Config.fromfile(HELDOUT)
    stats = config_statistics(cfg)
    train, test = _pair(
        stamps, wallpapers, img_size=224, **_heldout_settings())
    assert stats == domain_statistics(train, test)
    assert stats['train_images'] == cfg.num_train_samples
    # The config's mean is that of the package's photographs (3.82); the
    # stand-ins' square boxes leave out a few more objects.
    assert abs(stats['labels_per_image'] - cfg.expected_positives) < 0.3
    cfg.test_dataloader.dataset.type = 'DigitCanvases'
    with pytest.raises(ValueError, match='DigitCanvases'):
        config_statistics(cfg)
