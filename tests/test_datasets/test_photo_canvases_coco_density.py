"""The real-photo domain at COCO's label density
(configs/_base_/domains/photo_canvases_coco_density*.py): its finer
classes of photographs, the statistics its configs promise (from the
canvases' layout, no pixels), the instance-disjoint split that keeps 3
photographs per class and split or reports the share seen in training,
and the share of positives among the labels AN assumes negative."""
import os.path as osp

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

from mmlml.datasets import PhotoCanvases
from mmlml.datasets.domains import photo_canvases
from mmlml.datasets.domains.photo_backgrounds import write_stand_in_wallpapers
from mmlml.datasets.domains.photo_canvases import (FINE_PHOTO_CATEGORIES,
                                                   category_files, photo_pools,
                                                   write_stand_in_stamps)
from mmlml.datasets.domains.photo_statistics import (
    AN_SETTINGS, assumed_negatives_positive_share, config_statistics,
    domain_statistics)
from mmlml.registry import DATASETS, MODELS

DOMAINS = osp.join(ROOT, 'configs', '_base_', 'domains')
COCO_DENSITY = osp.join(DOMAINS, 'photo_canvases_coco_density.py')
DISJOINT = osp.join(DOMAINS, 'photo_canvases_coco_density_disjoint.py')


def _installed_stamps():
    try:
        return photo_canvases.find_stamps_root()
    except FileNotFoundError:
        return None


@pytest.fixture(scope='module')
def fine_stamps(tmp_path_factory):
    return write_stand_in_stamps(
        str(tmp_path_factory.mktemp('stamps')), taxonomy='fine')


@pytest.fixture(scope='module')
def wallpapers(tmp_path_factory):
    return write_stand_in_wallpapers(str(tmp_path_factory.mktemp('wall')))


def test_fine_classes_are_photograph_folders_and_patterns():
    """At least 36 classes, none of them a drawn category, each with a
    first entry its stand-ins can be written to (a folder or a pattern
    with a wildcard)."""
    assert len(FINE_PHOTO_CATEGORIES) >= 36
    drawn = {
        f
        for folders in photo_canvases.DRAWN_CATEGORIES.values()
        for f in folders
    }
    for name, entries in FINE_PHOTO_CATEGORIES.items():
        assert not drawn & set(entries), name
        assert not entries[0].endswith('.png') or '*' in entries[0], name


@pytest.mark.skipif(
    _installed_stamps() is None,
    reason='the tuxpaint-stamps-default package is not installed')
def test_fine_classes_read_the_installed_stamps():
    """On the package's tree: every folder or pattern finds photographs,
    every class has at least 3, and no photograph is in two classes."""
    root = _installed_stamps()
    owners = {}
    for name, entries in FINE_PHOTO_CATEGORIES.items():
        for entry in entries:
            assert category_files(root, [entry]), (name, entry)
        files = category_files(root, entries)
        assert len(files) >= 3, name
        for path in files:
            assert path not in owners, (path, owners.get(path), name)
            owners[path] = name


def test_stand_ins_are_read_by_their_own_class_only(fine_stamps):
    photos = {
        name: category_files(fine_stamps, entries)
        for name, entries in FINE_PHOTO_CATEGORIES.items()
    }
    assert all(len(files) == 3 for files in photos.values())
    every = [path for files in photos.values() for path in files]
    assert len(every) == len(set(every))


@pytest.mark.parametrize('config', [COCO_DENSITY, DISJOINT])
def test_the_configs_meet_their_statistics_targets(config, fine_stamps,
                                                   wallpapers, monkeypatch):
    """The design size's statistics, from the layout of the config's own
    canvases (stand-in photographs, so a few more objects may be left
    out): at least 36 classes, 2.5 positives per image, class priors 30x
    apart, 4,000 training canvases, at most 5% of AN's assumed negatives
    positive in single positive, none with all labels; backgrounds held
    out."""
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS', fine_stamps)
    monkeypatch.setenv('MMLML_WALLPAPERS', wallpapers)
    cfg = Config.fromfile(config)
    stats = config_statistics(cfg)
    low, high = stats['class_prior_range']
    shares = stats['assumed_negatives_positive_share']
    assert stats['classes'] == cfg.num_classes >= 36
    assert stats['train_images'] == cfg.num_train_samples >= 4000
    assert stats['labels_per_image'] >= 2.5
    assert abs(stats['labels_per_image'] - cfg.expected_positives) < 0.2
    assert high >= 30 * low
    assert set(shares) == set(AN_SETTINGS)
    assert 0 < shares['single_positive'] <= 0.05
    assert shares['full'] == 0
    assert shares['r0.5'] < shares['r0.8'] <= shares['single_positive']
    assert stats['single_positives_per_class'][0] >= 1
    assert stats['test_backgrounds_seen_in_training'] == 0
    assert stats['val_backgrounds_seen_in_training'] == 0
    # Three stand-ins per class: too few to keep 3 in every split, so
    # every class is shared and the record says so.
    assert stats['test_photographs_seen_in_training'] > 0.9


def test_assumed_negatives_positive_share_counted_by_hand():
    """Four images, three classes, 2 + 1 + 3 + 1 positives: single
    positive keeps one per image, so AN assumes 2 labels of each image
    negative (8), of which 1 + 0 + 2 + 0 are positives: 3/8. r = 0.5
    keeps floor(n / 2) + 1 (2, 1, 2, 1): 1 of 6. All labels: none."""
    full = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]], np.uint8)
    rows = np.arange(4)
    for seed in (0, 1, 2):
        assert assumed_negatives_positive_share(full, rows, 'single_positive',
                                                None, seed) == 3 / 8
        assert assumed_negatives_positive_share(full, rows, 'ratio', 0.5,
                                                seed) == 1 / 6
        assert assumed_negatives_positive_share(full, rows, 'ratio', 0.8,
                                                seed) == 3 / 8
        assert assumed_negatives_positive_share(full, rows, 'full', None,
                                                seed) == 0
    # Only the rows asked for: the second and fourth hold one positive.
    assert assumed_negatives_positive_share(full, np.array([1, 3]),
                                            'single_positive', None, 0) == 0


def test_the_existing_domains_state_the_share_too(tmp_path):
    """The coarse domain's statistics carry the share as well (every
    setting, 0 with all labels)."""
    stamps = write_stand_in_stamps(str(tmp_path / 'stamps'))
    train, test = (
        PhotoCanvases(
            split=split,
            num_samples=40,
            img_size=64,
            stamps_root=stamps,
            object_counts=(0, 0, 1),
            lazy_init=True) for split in ('train', 'test'))
    stats = domain_statistics(train, test)
    shares = stats['assumed_negatives_positive_share']
    assert set(shares) == set(AN_SETTINGS) and shares['full'] == 0
    # Three objects of 18 classes, one kept: (3 - 1) / (18 - 1) where all
    # three find a place.
    assert 0 < shares['single_positive'] <= 2 / 17 + 1e-4


@pytest.mark.parametrize('min_photos', [1, 2, 3])
def test_disjoint_pools_keep_their_minimum_or_are_shared(min_photos):
    """A class split between the pools keeps at least ``min_photos`` in
    each, disjoint and covering all; one with fewer than three times as
    many serves every pool with all its photographs."""
    counts = list(range(3, 41))
    for count, pools in zip(counts, photo_pools(counts, min_photos)):
        assert set(pools) == {name for name, _ in photo_canvases.POOLS}
        if count < 3 * min_photos:
            assert all(
                list(pool) == list(range(count)) for pool in pools.values())
            continue
        assert all(len(pool) >= min_photos for pool in pools.values())
        joined = np.concatenate(list(pools.values()))
        assert sorted(joined) == list(range(count)), count


def test_the_default_split_is_unchanged():
    """min_photos=1 splits every class of 3 or more photographs as the
    earlier domains' canvases were drawn."""
    pools = photo_pools([3, 4, 18, 35])
    assert [len(p['train']) for p in pools] == [1, 2, 9, 18]
    assert [len(p['val']) for p in pools] == [1, 1, 4, 7]


@pytest.mark.skipif(
    _installed_stamps() is None,
    reason='the tuxpaint-stamps-default package is not installed')
def test_the_disjoint_flavour_on_the_installed_stamps():
    """The classes with 9 photographs or more keep 3 in every split; the
    others are shared."""
    root = _installed_stamps()
    counts = [
        len(category_files(root, entries))
        for entries in FINE_PHOTO_CATEGORIES.values()
    ]
    pools = photo_pools(counts, 3)
    split = [
        count for count, pool in zip(counts, pools)
        if len(pool['train']) < count
    ]
    assert split and min(split) >= 9
    assert all(
        min(len(p) for p in pool.values()) >= 3
        for count, pool in zip(counts, pools) if count in split)


@pytest.mark.parametrize('kwargs, match', [
    (dict(taxonomy='fine', drawings=True), 'coarse taxonomy only'),
    (dict(taxonomy='finer'), 'taxonomy'),
    (dict(disjoint_min_photos=0), 'disjoint_min_photos'),
])
def test_bad_taxonomy_settings_are_refused(fine_stamps, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PhotoCanvases(stamps_root=fine_stamps, lazy_init=True, **kwargs)


def test_the_linear_protocol_builds_and_steps(fine_stamps, wallpapers,
                                              monkeypatch, tmp_path):
    """The linear config on stand-ins, random backbone weights, 64 px
    canvases and a few of them: 50 classes end to end."""
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS', fine_stamps)
    monkeypatch.setenv('MMLML_WALLPAPERS', wallpapers)
    monkeypatch.setenv('MMLML_DEMO_DOMAIN',
                       'photo_canvases_coco_density_linear')
    cfg = Config.fromfile(osp.join(ROOT, 'configs', 'demo', 'full_labels.py'))
    assert cfg.num_classes == cfg.model.head.num_classes == 50
    train = cfg.train_dataloader.dataset
    train.dataset.features.update(
        checkpoint=None, cache_dir=str(tmp_path / 'cache'))
    train.dataset.update(img_size=64, num_samples=20)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with DefaultScope.overwrite_default_scope('mmpretrain'):
            dataset = DATASETS.build(train)
            model = MODELS.build(
                dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
        batch = model.data_preprocessor(
            pseudo_collate([dataset[i] for i in range(4)]), training=True)
        assert batch['inputs'].shape == (4, 1280, 2, 2)
        loss = sum(model(**batch, mode='loss').values())
        assert torch.isfinite(loss)
    finally:
        torch.set_num_threads(threads)


def test_the_coarse_taxonomy_is_the_default(fine_stamps):
    assert PhotoCanvases(
        stamps_root=fine_stamps,
        lazy_init=True).categories == photo_canvases.PHOTO_CATEGORIES
