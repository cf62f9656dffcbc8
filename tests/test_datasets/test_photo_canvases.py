"""PhotoCanvases on a generated stand-in of the tuxpaint-stamps-default
tree (the package itself is not needed), its feature-map cache, and the
backbones of its two protocols."""
import os.path as osp

import numpy as np
import pytest
import torch

from mmlml.datasets import PartialLabelDataset, PhotoCanvases
from mmlml.datasets.domains import feature_maps as feature_maps_module
from mmlml.datasets.domains.photo_canvases import (PHOTO_CATEGORIES,
                                                   find_stamps_root,
                                                   photo_pools,
                                                   write_stand_in_stamps)
from mmlml.models.backbones import EfficientNetLite, PrecomputedFeatures


@pytest.fixture(scope='module')
def stamps(tmp_path_factory):
    return write_stand_in_stamps(
        str(tmp_path_factory.mktemp('stamps')), photos_per_category=4)


def _canvases(stamps, **kwargs):
    kwargs.setdefault('num_samples', 30)
    kwargs.setdefault('img_size', 48)
    dataset = PhotoCanvases(stamps_root=stamps, **kwargs)
    dataset.full_init()
    return dataset


def test_canvases_have_their_labels_and_are_reproducible(stamps):
    dataset = _canvases(stamps, num_samples=200)
    assert dataset.metainfo['classes'] == tuple(PHOTO_CATEGORIES)
    info = dataset.get_data_info(0)
    assert info['img'].shape == (48, 48, 3) and info['img'].dtype == np.uint8
    labels = dataset.get_label_matrix()
    assert labels.shape == (200, len(PHOTO_CATEGORIES))
    counts = labels.sum(1)
    assert counts.min() >= 1 and counts.max() <= 3
    # (0.4, 0.4, 0.2): 1.8 objects drawn, some left out for want of room.
    assert 1.4 < counts.mean() < 1.8
    for i in range(200):
        info = dataset.get_data_info(i)
        assert info['gt_label'] == sorted(c for c, _ in info['photo_ids'])
        assert len(info['object_boxes']) == len(info['photo_ids'])
    again = _canvases(stamps, num_samples=200)
    assert all(
        np.array_equal(
            dataset.get_data_info(i)['img'],
            again.get_data_info(i)['img']) for i in range(0, 200, 37))
    test = _canvases(stamps, num_samples=200, split='test')
    assert not np.array_equal(test.get_data_info(0)['img'], info['img'])


def test_object_counts_set_the_density(stamps):
    single = _canvases(stamps, object_counts=(1, ))
    assert (single.get_label_matrix().sum(1) == 1).all()
    pairs = _canvases(stamps, object_counts=(0, 1), max_overlap=1)
    assert (pairs.get_label_matrix().sum(1) == 2).all()


def test_disjoint_photos_split_each_class(stamps):
    pools = photo_pools([4, 20])
    for pool in pools:
        parts = [set(p.tolist()) for p in pool.values()]
        assert all(parts) and sum(map(len, parts)) == len(set().union(*parts))
    kwargs = dict(disjoint_photos=True, num_samples=100)
    train = _canvases(stamps, **kwargs)
    test = _canvases(stamps, split='test', **kwargs)
    used = {
        name: {
            tuple(p)
            for i in range(100)
            for p in d.get_data_info(i)['photo_ids']
        }
        for name, d in (('train', train), ('test', test))
    }
    assert used['train'] and not used['train'] & used['test']
    # The wrapper's split must be the one the canvases were drawn for.
    wrapped = PartialLabelDataset(
        dataset=dict(
            type='PhotoCanvases',
            stamps_root=stamps,
            img_size=48,
            num_samples=100,
            disjoint_photos=True),
        mode='single_positive',
        split='val')
    assert len(wrapped) == 20
    with pytest.raises(ValueError, match='val_frac'):
        PartialLabelDataset(
            dataset=dict(
                type='PhotoCanvases',
                stamps_root=stamps,
                img_size=48,
                num_samples=100,
                disjoint_photos=True),
            mode='single_positive',
            split='val',
            val_frac=0.3)


@pytest.mark.parametrize('kwargs, match', [
    (dict(split='val'), 'split'),
    (dict(object_counts=()), 'object_counts'),
    (dict(object_counts='12'), 'object_counts'),
    (dict(object_counts=(0, 0)), 'all zero'),
    (dict(object_counts=(-1, 1)), r'object_counts\[0\]'),
    (dict(object_size=(0.8, 0.4)), 'object_size'),
    (dict(object_size=0.5), 'object_size'),
    (dict(max_overlap=2), 'max_overlap'),
    (dict(class_skew=0.5), r'class_skew must lie in \[1, inf\]'),
    (dict(backgrounds='web'), 'backgrounds must be one of'),
    (dict(img_size=16), 'img_size'),
    (dict(object_counts=(1, ) * 19), 'distinct classes'),
    (dict(split_seed=2**32),
     r'split_seed must be an integer in \[0, 4294967295\]'),
    (dict(seed=None), r'seed is required \(every process must draw the same'),
])
def test_bad_arguments_are_refused(stamps, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PhotoCanvases(stamps_root=stamps, **kwargs)


def test_image_transforms_on_feature_maps_are_refused_before_building(stamps):
    """configs/demo/lasd_cr.py's augmented views on a linear domain: one
    clear line before the first batch, not an OpenCV assertion in it."""
    views = dict(
        type='MultiView',
        num_views=[1, 2],
        transforms=[[], [dict(type='RandomFlip', prob=0.5)]])
    features = dict(checkpoint=None, cache_dir=None)
    with pytest.raises(ValueError, match="pipeline's RandomFlip cannot run"):
        PhotoCanvases(
            stamps_root=stamps,
            features=features,
            pipeline=[views, dict(type='PackInputs')])
    # What reads no pixel passes (the check only: nothing is drawn).
    feature_maps_module.check_feature_pipeline([
        dict(type='MultiView', num_views=[1], transforms=[[]]),
        dict(type='PackInputs')
    ], 'PhotoCanvases')


def test_missing_stamps_say_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS', str(tmp_path / 'none'))
    monkeypatch.setattr('mmlml.datasets.domains.photo_canvases.STAMP_FOLDERS',
                        ())
    with pytest.raises(FileNotFoundError, match='tuxpaint_stamps.py'):
        find_stamps_root()
    empty = tmp_path / 'empty'
    empty.mkdir()
    with pytest.raises(ValueError, match="'bird' has 0 photographs"):
        PhotoCanvases(stamps_root=str(empty), num_samples=2)


def test_feature_maps_are_cached_once(stamps, tmp_path, monkeypatch):
    features = dict(
        backbone=dict(type='EfficientNetLite', out_indices=(5, )),
        checkpoint=None,
        cache_dir=str(tmp_path))
    calls = []
    compute = feature_maps_module.feature_maps

    def counting(images, features):
        calls.append(len(images))
        return compute(images, features)

    monkeypatch.setattr(feature_maps_module, 'feature_maps', counting)
    kwargs = dict(num_samples=6, img_size=64, features=features)
    torch.manual_seed(0)
    first = _canvases(stamps, **kwargs)
    info = first.get_data_info(0)
    assert info['img'].shape == (2, 2, 320)
    assert info['img'].dtype == np.float16
    assert info['gt_label'] == _canvases(
        stamps, num_samples=6, img_size=64).get_data_info(0)['gt_label']
    second = _canvases(stamps, **kwargs)
    assert calls == [6]  # the second read the cache
    assert np.array_equal(
        second.get_data_info(5)['img'],
        first.get_data_info(5)['img'])
    assert len(list(tmp_path.glob('*.npy'))) == 1
    # Another split, another file.
    _canvases(stamps, split='test', **kwargs)
    assert calls == [6, 6]
    with pytest.raises(TypeError, match='unknown keys'):
        PhotoCanvases(stamps_root=stamps, features=dict(cache=None))
    with pytest.raises(FileNotFoundError, match='efficientnet_lite0.py'):
        PhotoCanvases(
            stamps_root=stamps,
            features=dict(checkpoint=osp.join(str(tmp_path), 'no.pth')))


def test_a_process_keeps_the_feature_infos_of_its_canvases(
        stamps, tmp_path, monkeypatch):
    """A sweep's worker builds the same splits for every trial: the second
    dataset of the same canvases draws no layout and reads no cache file,
    gives the same infos (its own dicts), leaves torch's random generator
    as a read does (the training that follows is the same), and a cache
    file written again is read again."""
    from mmlml.datasets.domains import photo_canvases
    features = _cache_features(tmp_path)
    kwargs = dict(num_samples=6, img_size=64, features=features)
    _canvases(stamps, **kwargs)  # makes the cache file
    photo_canvases._FEATURE_DATA_LISTS.clear()
    torch.manual_seed(0)
    read = _canvases(stamps, **kwargs)
    after_read = torch.get_rng_state()
    draws, reads = [], []
    draw, read_cache = PhotoCanvases._draw, feature_maps_module.read_cache
    monkeypatch.setattr(
        PhotoCanvases, '_draw',
        lambda self, render: draws.append(render) or draw(self, render))
    monkeypatch.setattr(feature_maps_module, 'read_cache',
                        lambda *a: reads.append(a) or read_cache(*a))
    torch.manual_seed(0)
    kept = _canvases(stamps, **kwargs)
    assert torch.equal(torch.get_rng_state(), after_read)
    assert draws == [] and reads == []
    for idx in range(6):
        ours, theirs = kept.get_data_info(idx), read.get_data_info(idx)
        assert ours is not theirs and ours.keys() == theirs.keys()
        assert np.array_equal(ours.pop('img'), theirs.pop('img'))
        assert ours == theirs
    path, = (tmp_path / 'cache').glob('*.npy')
    np.save(path, np.load(path))  # written again: read again
    _canvases(stamps, **kwargs)
    assert draws == [False] and len(reads) == 1


def _cache_features(tmp_path):
    return dict(
        backbone=dict(type='EfficientNetLite', out_indices=(5, )),
        checkpoint=None,
        cache_dir=str(tmp_path / 'cache'))


def _bad_caches():
    good = np.zeros((6, 2, 2, 320), np.float16)
    nan = good.copy()
    nan[3, 0, 0, 7] = np.nan
    return {
        'nan': (nan, 'NaN or infinite'),
        'channels': (np.zeros((6, 2, 2, 3),
                              np.float16), r'shape \(6, 2, 2, 3\)'),
        'short': (good[:4], r'shape \(4, 2, 2, 320\)'),
        'dtype': (good.astype(np.float64), 'not float16'),
        'object': (np.array([None] * 6, dtype=object), 'cannot be read'),
        'truncated': (None, 'cannot be read'),
    }


@pytest.mark.parametrize('kind', sorted(_bad_caches()))
def test_a_bad_feature_cache_is_refused_naming_its_file(
        stamps, tmp_path, kind):
    """A cache of NaN, of the wrong channel count or number of maps, of
    another dtype, of Python objects or cut short: one line naming the
    file and saying to delete it (was: accepted, or numpy's errors)."""
    features = _cache_features(tmp_path)
    kwargs = dict(num_samples=6, img_size=64, features=features)
    _canvases(stamps, **kwargs)
    path, = (tmp_path / 'cache').glob('*.npy')
    array, message = _bad_caches()[kind]
    if array is None:
        path.write_bytes(path.read_bytes()[:200])
    else:
        with open(path, 'wb') as f:
            np.save(f, array, allow_pickle=True)
    with pytest.raises(ValueError, match=message) as info:
        _canvases(stamps, **kwargs)
    assert str(path) in str(info.value)
    assert 'delete it' in str(info.value)
    assert '\n' not in str(info.value)


def test_the_cache_key_reads_the_photographs_content(tmp_path):
    """Photographs replaced by others of the same byte size make another
    cache file (was: keyed by names and sizes, the stale maps reused)."""
    stamps = write_stand_in_stamps(
        str(tmp_path / 'stamps'), photos_per_category=3)
    kwargs = dict(
        num_samples=4, img_size=64, features=_cache_features(tmp_path))
    before = _canvases(stamps, **kwargs).description()
    png = sorted((tmp_path / 'stamps').rglob('*.png'))[0]
    data = bytearray(png.read_bytes())
    data[-20] ^= 0xFF  # same size, other content
    png.write_bytes(bytes(data))
    assert _canvases(stamps, num_samples=4, img_size=64).description() \
        != before


def test_the_cache_key_reads_the_backgrounds_content(stamps, tmp_path,
                                                     monkeypatch):
    """A background photograph replaced by another of the same byte size
    makes another cache key too."""
    import shutil

    from mmlml.datasets.domains import photo_canvases
    copies = []
    for path in photo_canvases.background_paths():
        copies.append(str(tmp_path / osp.basename(path)))
        shutil.copy(path, copies[-1])
    monkeypatch.setattr(photo_canvases, 'background_paths', lambda: copies)
    dataset = _canvases(stamps, num_samples=4, img_size=64)
    before = dataset.description()
    first = tmp_path / osp.basename(copies[0])
    data = bytearray(first.read_bytes())
    data[-20] ^= 0xFF  # same size, other content
    first.write_bytes(bytes(data))
    assert dataset.description() != before


def test_efficientnet_lite_from_an_input_layer_continues_the_whole():
    torch.manual_seed(0)
    whole = EfficientNetLite(out_indices=(4, 6))
    tail = EfficientNetLite(input_layer=5, out_indices=(6, ))
    tail.load_state_dict(whole.state_dict())
    whole.eval()
    tail.eval()
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        middle, out = whole(x)
        assert torch.allclose(tail(middle)[0], out, atol=1e-5)
    assert not any(p.requires_grad for p in tail.layers[:5].parameters())
    assert all(p.requires_grad for p in tail.layers[5:].parameters())
    with pytest.raises(ValueError, match='input_layer'):
        EfficientNetLite(input_layer=6, out_indices=(5, ))


def test_precomputed_features_is_the_identity_on_maps():
    backbone = PrecomputedFeatures(in_channels=8)
    x = torch.randn(2, 8, 3, 3)
    assert backbone(x)[0] is x
    with pytest.raises(ValueError, match='cached features'):
        backbone(torch.randn(2, 3, 32, 32))


def test_classes_are_its_own_and_no_files_are_read(stamps):
    """The checks every generated domain shares
    (``GeneratedMultiLabelDataset._generated_metainfo``)."""
    with pytest.raises(ValueError, match=r"cannot rename them: got \['a'\]"):
        PhotoCanvases(stamps_root=stamps, metainfo=dict(classes=['a']))
    with pytest.raises(TypeError, match="reads no files.*'ann_file'"):
        PhotoCanvases(stamps_root=stamps, ann_file='x.json')
    same = PhotoCanvases(
        stamps_root=stamps,
        num_samples=2,
        img_size=48,
        metainfo=dict(classes=list(PHOTO_CATEGORIES), note='kept'))
    assert same.metainfo['note'] == 'kept'


def test_feature_caching_prints_progress(monkeypatch, capsys):
    """Computing feature maps says how far it is (a line per batch with
    no least interval here; 5 s apart by default) and ends with a line."""
    monkeypatch.setattr(feature_maps_module, 'PROGRESS_INTERVAL', 0.)
    features = feature_maps_module.check_features(
        dict(
            backbone=dict(type='EfficientNetLite', out_indices=(1, )),
            batch_size=2))
    images = np.zeros((4, 32, 32, 3), np.uint8)
    maps = feature_maps_module.feature_maps(images, features)
    assert len(maps) == 4
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith('caching features: 2/4 images (50%)')
    assert lines[-1].startswith('caching features: 4/4 images (100%)')


def test_images_are_read_without_libpng_colour_profile_warnings(
        tmp_path, capfd):
    """scikit-image's page.png carries a colour profile that libpng warns
    about on every read, as some stamps do: the domain's reader drops
    the profile (which OpenCV never applies) and reads the same pixels,
    in silence."""
    import cv2
    import skimage

    from mmlml.datasets.domains.image_files import read_image
    page = osp.join(osp.dirname(skimage.__file__), 'data', 'page.png')
    expected = cv2.imread(page, cv2.IMREAD_UNCHANGED)
    assert 'iCCP' in capfd.readouterr().err  # what the reader avoids
    image = read_image(page, cv2.IMREAD_UNCHANGED)
    assert np.array_equal(image, expected)
    assert capfd.readouterr().err == ''
    (tmp_path / 'empty.png').write_bytes(b'')
    assert read_image(str(tmp_path / 'empty.png')) is None
    assert read_image(str(tmp_path / 'missing.png')) is None
