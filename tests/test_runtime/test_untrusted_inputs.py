"""Untrusted files never run code: a checkpoint from every source MMEngine
loads (local, URL through torch.hub's cache, torchvision://, modelzoo://,
open-mmlab://, openmmlab://, mmcls://, pavi://, s3://), through
``tools/test.py`` and auto-resume, and annotation files (pickle, YAML).

Each malicious file would write a marker file when unpickled; no test
needs the network: URLs are served from torch.hub's cache, with
``TORCH_HOME`` in a temporary folder."""
import os
import os.path as osp
import sys
import types
from collections import OrderedDict

import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.logging.history_buffer import HistoryBuffer
from mmengine.runner import Runner
from mmengine.runner import checkpoint as mm_checkpoint
from mmengine.runner.checkpoint import CheckpointLoader

import mmlml  # noqa: F401  (applies the loading policy)
from mmlml.compat.checkpoint_policy import (CheckpointRefused,
                                            check_checkpoint_exists,
                                            hub_cache_file,
                                            is_local_checkpoint)
from mmlml.datasets import CustomMultiLabelDataset

sys.path.insert(0, osp.join(ROOT, 'tools'))
import test as test_tool  # noqa: E402


class Payload:
    """Unpickles as ``exec(code)``, as a malicious file would."""

    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return exec, (self.code, )


@pytest.fixture
def marker(tmp_path):
    return str(tmp_path / 'marker')


@pytest.fixture
def evil_checkpoint(marker):
    """Write a checkpoint with real weights and a payload in its meta."""

    def write(path):
        os.makedirs(osp.dirname(str(path)), exist_ok=True)
        payload = Payload(f'open({marker!r}, "w").write("ran")')
        torch.save(
            dict(state_dict={'w': torch.ones(2)}, meta=dict(note=payload)),
            str(path))
        return str(path)

    return write


def assert_refused(source, marker, needs='builtins.exec'):
    with pytest.raises(CheckpointRefused) as info:
        CheckpointLoader.load_checkpoint(source, map_location='cpu')
    message = str(info.value)
    assert not osp.exists(marker), 'the payload ran'
    assert 'Refused to load the checkpoint' in message
    assert needs in message
    assert 'weights_only=True' in message
    return message


def test_payload_is_live(tmp_path, marker, evil_checkpoint):
    """The crafted file does run code when loaded unsafely."""
    path = evil_checkpoint(tmp_path / 'evil.pth')
    torch.load(path, weights_only=False)
    assert osp.exists(marker)


def test_local(tmp_path, marker, evil_checkpoint):
    path = evil_checkpoint(tmp_path / 'evil.pth')
    message = assert_refused(path, marker)
    assert 'add_safe_globals' in message


@pytest.mark.parametrize('scheme', ['https', 'http'])
def test_url_from_hub_cache(torch_home, marker, evil_checkpoint, scheme):
    url = f'{scheme}://example.invalid/models/evil-0123abcd.pth'
    cached = hub_cache_file(url)
    assert cached == str(torch_home / 'hub/checkpoints/evil-0123abcd.pth')
    evil_checkpoint(cached)
    message = assert_refused(url, marker)
    assert cached in message  # where the file is, to delete it


def _torchvision_file(name):
    return hub_cache_file(mm_checkpoint.get_torchvision_models()[name])


@pytest.mark.parametrize('scheme', ['torchvision', 'modelzoo'])
def test_torchvision_names(torch_home, marker, evil_checkpoint, scheme):
    evil_checkpoint(_torchvision_file('resnet50'))
    assert_refused(f'{scheme}://resnet50', marker)


def test_torchvision_state_dict_still_loads(torch_home):
    """The form of torchvision's ResNet-50 weights: a plain dict of
    tensors."""
    state = OrderedDict([('conv1.weight', torch.randn(2, 3, 1, 1)),
                         ('bn1.running_mean', torch.zeros(2)),
                         ('bn1.num_batches_tracked', torch.tensor(0))])
    path = _torchvision_file('resnet50')
    os.makedirs(osp.dirname(path), exist_ok=True)
    torch.save(state, path)
    loaded = CheckpointLoader.load_checkpoint('torchvision://resnet50')
    assert list(loaded) == list(state)
    for key, value in state.items():
        torch.testing.assert_close(loaded[key], value)


def test_mmengine_checkpoint_by_url_loads(torch_home):
    """An MMEngine checkpoint (a HistoryBuffer in its message hub) given by
    URL loads with the same allow-list as a local file."""
    url = 'https://example.invalid/ckpt/epoch_1.pth'
    path = hub_cache_file(url)
    os.makedirs(osp.dirname(path), exist_ok=True)
    buffer = HistoryBuffer()
    buffer.update(1.5)
    torch.save(
        dict(
            state_dict={'w': torch.ones(2)},
            message_hub=dict(log_scalars={'loss': buffer})), path)
    loaded = CheckpointLoader.load_checkpoint(url)
    assert loaded['message_hub']['log_scalars']['loss'].current() == 1.5


@pytest.mark.parametrize('scheme', ['open-mmlab', 'openmmlab'])
def test_openmmlab_names(torch_home, marker, evil_checkpoint, scheme):
    name, url = next((n, u)
                     for n, u in mm_checkpoint.get_external_models().items()
                     if u.startswith('https://')
                     and n not in mm_checkpoint.get_deprecated_model_names())
    evil_checkpoint(hub_cache_file(url))
    assert_refused(f'{scheme}://{name}', marker)


def test_openmmlab_file_of_mmengine_home(tmp_path, monkeypatch, marker,
                                         evil_checkpoint):
    """An open-mmlab:// name that maps to a file of MMEngine's home."""
    evil_checkpoint(tmp_path / 'home' / 'evil.pth')
    monkeypatch.setattr(mm_checkpoint, 'get_external_models',
                        lambda: {'evil': 'evil.pth'})
    monkeypatch.setattr(mm_checkpoint, '_get_mmengine_home',
                        lambda: str(tmp_path / 'home'))
    assert_refused('open-mmlab://evil', marker)


def test_mmcls_names(torch_home, marker, evil_checkpoint):
    name, url = next(iter(mm_checkpoint.get_mmcls_models().items()))
    evil_checkpoint(hub_cache_file(url))
    assert_refused(f'mmcls://{name}', marker)


@pytest.mark.parametrize('uri',
                         ['s3://bucket/evil.pth', 'petrel://bucket/evil.pth'])
def test_object_store(tmp_path, monkeypatch, marker, evil_checkpoint, uri):
    import mmengine.fileio
    data = open(evil_checkpoint(tmp_path / 'evil.pth'), 'rb').read()

    class Store:

        def get(self, filepath):
            assert filepath == uri
            return data

    monkeypatch.setattr(mmengine.fileio, 'get_file_backend',
                        lambda *args, **kwargs: Store())
    assert_refused(uri, marker)


def test_pavi(tmp_path, monkeypatch, marker, evil_checkpoint):
    source = evil_checkpoint(tmp_path / 'evil.pth')

    class Model:
        name = 'evil.pth'

        def download(self, path):
            with open(source, 'rb') as f, open(path, 'wb') as out:
                out.write(f.read())

    modelcloud = types.SimpleNamespace(get=lambda path: Model())
    monkeypatch.setitem(sys.modules, 'pavi',
                        types.SimpleNamespace(modelcloud=modelcloud))
    assert_refused('pavi://models/evil.pth', marker)


def test_every_registered_scheme_is_covered():
    """Every scheme of MMEngine's CheckpointLoader uses mmlml's loaders."""
    from mmlml.compat.checkpoint_policy import SCHEMES
    ours = {loader for _, loader, _ in SCHEMES}
    assert set(CheckpointLoader._schemes.values()) <= ours


def test_tools_test_py_with_url(torch_home, tiny_demo_config, marker,
                                evil_checkpoint):
    url = 'https://example.invalid/models/evil-0123abcd.pth'
    evil_checkpoint(hub_cache_file(url))
    with pytest.raises(CheckpointRefused, match='builtins.exec'):
        test_tool.main([tiny_demo_config(), url])
    assert not osp.exists(marker)


def test_auto_resume_from_url(torch_home, tiny_demo_config, marker,
                              evil_checkpoint, tmp_path):
    """A `last_checkpoint` file (auto-resume) that names a URL."""
    url = 'https://example.invalid/models/evil-0123abcd.pth'
    evil_checkpoint(hub_cache_file(url))
    cfg = Config.fromfile(tiny_demo_config())
    cfg.work_dir = str(tmp_path / 'work')
    cfg.resume = True
    cfg.load_from = None
    os.makedirs(cfg.work_dir)
    with open(osp.join(cfg.work_dir, 'last_checkpoint'), 'w') as f:
        f.write(url)
    runner = Runner.from_cfg(cfg)
    with pytest.raises(CheckpointRefused, match='builtins.exec'):
        runner.train()
    assert not osp.exists(marker)


@pytest.mark.parametrize('name, local', [
    ('https://example.invalid/a.pth', False),
    ('http://example.invalid/a.pth', False),
    ('torchvision://resnet50', False),
    ('modelzoo://resnet50', False),
    ('open-mmlab://resnet50_caffe', False),
    ('openmmlab://resnet50_caffe', False),
    ('mmcls://resnet50', False),
    ('pavi://model', False),
    ('s3://bucket/a.pth', False),
    ('open-mmlab:s3://bucket/a.pth', False),
    ('petrel://bucket/a.pth', False),
    ('work_dirs/epoch_1.pth', True),
    ('~/model.pth', True),
    ('/abs/https://a.pth', True),
])
def test_which_names_are_local_paths(name, local, tmp_path):
    """The tools refuse a missing local checkpoint before building
    anything, and leave every scheme MMEngine knows to its loader."""
    assert is_local_checkpoint(name) is local
    if local:
        with pytest.raises(FileNotFoundError, match='Checkpoint not found'):
            check_checkpoint_exists(name)
    else:
        check_checkpoint_exists(name)  # nothing is read


# ---------------------------------------------------------- annotations

ANNOTATION = dict(
    metainfo=dict(classes=['a', 'b']),
    data_list=[dict(img_path='x.png', gt_label=[0])])


@pytest.mark.parametrize('name', ['ann.pkl', '.pkl', 'ann.PKL', 'a.pickle'])
def test_pickle_annotation_is_refused(tmp_path, marker, name):
    """Decided by MMEngine's rule (the text after the last dot, any case):
    a file named exactly ``.pkl`` has no extension for ``splitext`` but
    ``mmengine.load`` unpickles it."""
    import pickle
    path = tmp_path / name
    payload = Payload(f'open({marker!r}, "w").write("ran")')
    path.write_bytes(pickle.dumps(dict(ANNOTATION, note=payload)))
    with pytest.raises(ValueError) as info:
        CustomMultiLabelDataset(ann_file=str(path))
    assert not osp.exists(marker)
    message = str(info.value)
    assert 'pickle' in message and 'refused' in message
    assert 'JSON (.json)' in message and 'YAML (.yaml)' in message


def test_yaml_annotation_is_read_safely(tmp_path, marker):
    path = tmp_path / 'ann.yaml'
    path.write_text("metainfo: {classes: [a, b]}\n"
                    "data_list:\n"
                    "  - {img_path: x.png, gt_label: [0]}\n"
                    f"note: !!python/object/apply:builtins.exec\n"
                    f"  - open({marker!r}, 'w').write('ran')\n")
    with pytest.raises(ValueError, match='safe YAML'):
        CustomMultiLabelDataset(ann_file=str(path))
    assert not osp.exists(marker)
    plain = tmp_path / 'plain.yml'
    plain.write_text('metainfo: {classes: [a, b]}\n'
                     'data_list:\n'
                     '  - {img_path: x.png, gt_label: [1]}\n')
    dataset = CustomMultiLabelDataset(ann_file=str(plain))
    assert dataset.metainfo['classes'] == ('a', 'b') or \
        list(dataset.metainfo['classes']) == ['a', 'b']
    assert len(dataset) == 1


def test_other_annotation_formats_are_refused(tmp_path):
    path = tmp_path / 'ann.txt'
    path.write_text('{}')
    with pytest.raises(ValueError, match=r"extension '\.txt'"):
        CustomMultiLabelDataset(ann_file=str(path))


@pytest.mark.parametrize('tool,name', [('train', 'ann.pkl'), ('train', '.pkl'),
                                       ('test', 'ann.pkl'),
                                       ('demo', 'ann.pkl')])
def test_tools_refuse_a_stock_datasets_pickle_annotation(
        tmp_path, marker, tool, name):
    """A stock MMPretrain dataset (no mmlml wrapper) with a pickle
    ann_file (also one named exactly ``.pkl``): tools/train.py, test.py
    and demo.py refuse it before the Runner builds anything, and the
    payload never runs."""
    import pickle
    ann_file = tmp_path / name
    with open(ann_file, 'wb') as f:
        pickle.dump(Payload(f'open({marker!r}, "w").write("ran")'), f)
    config = tmp_path / 'stock.py'
    config.write_text(
        f"_base_ = [{osp.join(ROOT, 'configs', 'demo', 'an.py')!r}]\n"
        "test_dataloader = dict(dataset=dict(_delete_=True, "
        f"type='MultiLabelDataset', ann_file={str(ann_file)!r}, "
        "pipeline=[dict(type='PackInputs')]))\n")
    sys.path.insert(0, osp.join(ROOT, 'tools'))
    module = __import__(tool)
    argv = {
        'train': [str(config), '--work-dir',
                  str(tmp_path / 'w')],
        'test': [str(config), str(tmp_path / 'missing.pth')],
        'demo': [str(config), '--work-dir',
                 str(tmp_path / 'w')],
    }[tool]
    if tool == 'test':  # the checkpoint check comes first: give one
        torch.save({'state_dict': {}}, str(tmp_path / 'missing.pth'))
    with pytest.raises((ValueError, SystemExit)) as info:
        module.main(argv)
    assert not osp.exists(marker), 'the payload ran'
    if tool != 'demo':  # demo reports the refusal and exits non-zero
        assert name in str(info.value) and 'pickle' in str(info.value)


#: The other tools that build a config's datasets, with their arguments
#: after the config (``{tmp}``: the test's folder).
DATASET_TOOLS = {
    'pseudo_label': ['{tmp}/model.pth', '--out', '{tmp}/out.npy'],
    'vl_pseudo_label': ['--out', '{tmp}/out.npy'],
    'analysis/missing_label_scores':
    ['{tmp}/model.pth', '--out', '{tmp}/out.npz'],
    'analysis/plot_class_priors': ['{tmp}', '--out', '{tmp}/out.png'],
    'dataset_converters/dataset_summary': ['--split', 'train'],
}


@pytest.mark.parametrize('tool', sorted(DATASET_TOOLS))
def test_dataset_tools_refuse_a_stock_datasets_pickle_annotation(
        tmp_path, marker, tool, monkeypatch):
    """Every tool that builds a config's training set reads the config
    through ``mmlml.cli.load_config``, which checks its annotation files
    first: a stock dataset's ``ann_file`` named exactly ``.pkl`` is refused
    and the payload never runs (was: ``dataset_summary.py`` unpickled
    it)."""
    import importlib.util
    import pickle
    ann_file = tmp_path / '.pkl'
    with open(ann_file, 'wb') as f:
        pickle.dump(Payload(f'open({marker!r}, "w").write("ran")'), f)
    config = tmp_path / 'stock.py'
    config.write_text(
        f"_base_ = [{osp.join(ROOT, 'configs', 'demo', 'an.py')!r}]\n"
        "train_dataloader = dict(dataset=dict(_delete_=True, "
        f"type='MultiLabelDataset', ann_file={str(ann_file)!r}, "
        "pipeline=[dict(type='PackInputs')]))\n")
    path = osp.join(ROOT, 'tools', *tool.split('/')) + '.py'
    monkeypatch.syspath_prepend(osp.dirname(path))  # the tool's imports
    spec = importlib.util.spec_from_file_location(
        'mmlml_tool_' + tool.replace('/', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arguments = [a.format(tmp=tmp_path) for a in DATASET_TOOLS[tool]]
    with pytest.raises(ValueError, match=r"\.pkl' is a pickle file") as info:
        module.main([str(config)] + arguments)
    assert 'train_dataloader.dataset.ann_file' in str(info.value)
    assert not osp.exists(marker), 'the payload ran'
