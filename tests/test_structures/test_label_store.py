"""LabelStore: pseudo-labels and scores in one float16 per entry, lookups,
per-class state, checkpoints (single process;
tests/test_runtime/test_stateful_training.py runs two)."""
import io
import math

import numpy as np
import pytest
import torch

from mmlml.structures import LabelStore, sample_indices


def test_encoding_assign_lookup_and_scores():
    store = LabelStore(4, 3)
    assert store.nbytes == 4 * 3 * 2
    assert torch.isnan(store.lookup(torch.arange(4))).all()
    assert torch.isnan(store.scores()).all()
    probs = torch.tensor([[0.0, 0.5, 1.0], [0.25, 0.125, 0.75]])
    store.record_scores(torch.tensor([1, 3]), probs)
    torch.testing.assert_close(store.scores()[[1, 3]], probs)
    # A score of exactly 0 stays a score (-0.0), not a pseudo-label of 0.
    assert store.num_pseudo_labels == 0
    assert store.assign(
        torch.tensor([1, 3]), torch.tensor([0, 2]), torch.tensor([0.0,
                                                                  1.0])) == 2
    looked = store.lookup(torch.tensor([3, 1, 0]))
    assert looked[0, 2] == 1.0 and looked[1, 0] == 0.0
    assert int((~torch.isnan(looked)).sum()) == 2
    scores = store.scores()
    assert torch.isnan(scores[1, 0]) and torch.isnan(scores[3, 2])
    assert scores[1, 1] == 0.5
    torch.testing.assert_close(
        store.scores(slice(1, 2)), scores[:, 1:2], equal_nan=True)
    # Scores never overwrite a pseudo-label; reset forgets scores only.
    store.record_scores(torch.tensor([1]), torch.full((1, 3), 0.9))
    assert store.lookup(torch.tensor([1]))[0, 0] == 0.0
    store.reset_scores()
    assert store.num_pseudo_labels == 2
    assert int((~torch.isnan(store.scores())).sum()) == 0


def test_float16_precision():
    store = LabelStore(1, 4)
    probs = torch.tensor([[1e-7, 1e-3, 0.3333, 0.9999]])
    store.record_scores(torch.tensor([0]), probs)
    # Relative precision 5e-4 above 6.1e-5; absolute 6e-8 below.
    torch.testing.assert_close(store.scores(), probs, rtol=5e-4, atol=6e-8)
    assert store.scores()[0, 0] > 0


def test_repeated_entries_last_wins():
    store = LabelStore(2, 2)
    store.assign(
        torch.tensor([0, 0]), torch.tensor([1, 1]), torch.tensor([0.2, 0.7]))
    assert math.isclose(
        float(store.lookup(torch.tensor([0]))[0, 1]), 0.7, rel_tol=1e-3)


def test_class_state_and_batch_state():
    store = LabelStore(3, 2)
    store.set_class_state('class_ap', torch.tensor([0.5, 0.25]))
    state = store.batch_state(
        torch.tensor([2, 0]), ['pseudo_labels', 'class_ap'])
    assert state['pseudo_labels'].shape == (2, 2)
    torch.testing.assert_close(state['class_ap'], torch.tensor([0.5, 0.25]))
    with pytest.raises(KeyError, match="no 'missing'.*custom_hooks"):
        store.batch_state(torch.tensor([0]), ['missing'])
    with pytest.raises(ValueError, match=r'\(2,\)'):
        store.set_class_state('class_ap', torch.ones(3))


@pytest.mark.parametrize('fraction, layout', [(0.0, 'indices'),
                                              (0.01, 'indices'),
                                              (0.5, 'mask')])
@pytest.mark.parametrize('constant', [False, True])
def test_state_dict_round_trip(fraction, layout, constant):
    gen = torch.Generator().manual_seed(0)
    store = LabelStore(50, 40)
    chosen = (torch.rand(50 * 40, generator=gen) < fraction).nonzero()[:, 0]
    values = torch.ones(len(chosen)) if constant else torch.rand(
        len(chosen), generator=gen)
    store.assign(chosen // 40, chosen % 40, values)
    store.set_class_state('class_ap', torch.linspace(0, 1, 40))
    store.record_scores(torch.arange(5), torch.rand(5, 40, generator=gen))
    state = store.state_dict()
    if len(chosen):
        assert layout in state
    if layout == 'indices':
        assert state['indices'].dtype == torch.int32
    if constant and len(chosen):
        assert state['values'].dim() == 0  # one value for all
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    restored = LabelStore(50, 40)
    restored.load_state_dict(torch.load(buffer))
    mask = store.pseudo_label_mask()
    assert torch.equal(restored.pseudo_label_mask(), mask)
    assert torch.equal(restored.table[mask], store.table[mask])
    # Scores are not saved.
    assert int((~torch.isnan(restored.scores())).sum()) == 0
    torch.testing.assert_close(restored.class_state['class_ap'],
                               store.class_state['class_ap'])


def test_checkpoint_grows_with_pseudo_labels_not_with_entries():
    store = LabelStore(20000, 500)  # 10 M entries
    store.assign(torch.arange(1000), torch.zeros(1000, dtype=torch.long), 1.0)
    buffer = io.BytesIO()
    torch.save(store.state_dict(), buffer)
    assert buffer.tell() < 10_000  # 1000 int32 indices and one value


def test_bad_input():
    with pytest.raises(ValueError, match='num_samples'):
        LabelStore(0, 3)
    with pytest.raises(ValueError, match='num_classes'):
        LabelStore(3, True)
    store = LabelStore(3, 2)
    with pytest.raises(IndexError, match=r'\[0, 3\)'):
        store.lookup(torch.tensor([3]))
    with pytest.raises(TypeError, match='integers'):
        store.lookup(torch.tensor([0.0]))
    with pytest.raises(IndexError, match='class'):
        store.assign(torch.tensor([0]), torch.tensor([2]), 1.0)
    with pytest.raises(ValueError, match=r'\[0, 1\]'):
        store.assign(torch.tensor([0]), torch.tensor([1]), 1.5)
    with pytest.raises(ValueError, match='same length'):
        store.assign(torch.tensor([0, 1]), torch.tensor([1]), 1.0)
    with pytest.raises(ValueError, match='shape'):
        store.record_scores(torch.tensor([0]), torch.zeros(1, 3))
    with pytest.raises(ValueError, match='3 samples x 2 classes'):
        LabelStore(4, 2).load_state_dict(store.state_dict())


def _state(layout):
    """A state of a 6 x 5 store with 4 pseudo-labels, as a mask or as
    indices, and a per-class vector."""
    store = LabelStore(6, 5)
    store.assign(
        torch.tensor([0, 1, 3, 5]), torch.tensor([0, 4, 2, 1]),
        torch.tensor([1.0, 0.5, 0.25, 1.0]))
    store.set_class_state('class_ap', torch.ones(5))
    state = store.state_dict()
    state.pop('mask', None)
    state.pop('indices', None)
    mask = store.pseudo_label_mask().reshape(-1)
    state[layout] = torch.from_numpy(np.packbits(
        mask.numpy())) if layout == 'mask' else mask.nonzero()[:, 0].int()
    return store, state


@pytest.mark.parametrize('layout', ['mask', 'indices'])
@pytest.mark.parametrize(
    'edit, match',
    [(lambda s: s.update(values=s['values'][:-1]),
      r"\['values'\] has shape \(3,\).*expected shape \(4,\)"),
     (lambda s: s.pop('values'), "has no 'values'"),
     (lambda s: s.update(values=torch.full((4, ), 2.0)), r'\[0, 1\]'),
     (lambda s: s['class_state'].update(class_ap=torch.ones(4)),
      r"\['class_state'\]\['class_ap'\] has shape \(4,\).*expected "
      r'shape \(5,\)'),
     (lambda s: s.update(class_state=[]), r"\['class_state'\] is a list")])
def test_truncated_checkpoint_state_is_refused(layout, edit, match):
    """A truncated or corrupt ``checkpoint['label_store']`` is refused with
    one line naming the key, the expected and the found shape, and the
    store is left as it was."""
    _, state = _state(layout)
    edit(state)
    target = LabelStore(6, 5)
    target.assign(torch.tensor([2]), torch.tensor([2]), 1.0)
    before = target.table.clone()
    with pytest.raises(ValueError, match=match) as info:
        target.load_state_dict(state)
    assert str(info.value).startswith("checkpoint['label_store']")
    assert 'truncated or corrupt' in str(info.value)
    torch.testing.assert_close(target.table, before, equal_nan=True)


def test_truncated_mask_or_indices_are_refused():
    _, state = _state('mask')
    state['mask'] = state['mask'][:-1]  # 30 entries: 4 bytes
    with pytest.raises(
            ValueError,
            match=r"\['mask'\] has shape \(3,\) \(torch.uint8\), "
            r'expected shape \(4,\)'):
        LabelStore(6, 5).load_state_dict(state)
    state['mask'] = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(ValueError, match='torch.int32'):
        LabelStore(6, 5).load_state_dict(state)
    del state['mask']
    with pytest.raises(ValueError, match="no 'mask' or 'indices'"):
        LabelStore(6, 5).load_state_dict(state)
    _, state = _state('indices')
    state['indices'] = state['indices'].float()
    with pytest.raises(ValueError, match=r"\['indices'\].*integers"):
        LabelStore(6, 5).load_state_dict(state)
    state['indices'] = torch.tensor([0, 9, 17, 30])
    with pytest.raises(ValueError, match=r'\[0, 30\], expected \[0, 30\)'):
        LabelStore(6, 5).load_state_dict(state)
    with pytest.raises(ValueError, match='not a dict'):
        LabelStore(6, 5).load_state_dict(torch.zeros(3))
    # Both layouts of the untouched state load.
    for layout in ('mask', 'indices'):
        store, state = _state(layout)
        restored = LabelStore(6, 5)
        restored.load_state_dict(state)
        torch.testing.assert_close(restored.table, store.table, equal_nan=True)


def test_sample_indices():
    from mmpretrain.structures import DataSample
    samples = [DataSample(metainfo=dict(sample_idx=i)) for i in (4, 0)]
    assert sample_indices(samples).tolist() == [4, 0]
    with pytest.raises(IndexError, match='out of range'):
        sample_indices(samples, num_samples=4)
    with pytest.raises(KeyError, match='sample_idx'):
        sample_indices([DataSample()])
    with pytest.raises(TypeError, match='DataSamples'):
        sample_indices([])


def test_compiled_lookup_is_one_graph_and_checks_the_range():
    """Under torch.compile the lookup reads no tensor on the host (no graph
    break) and an index out of range still stops it, by a queued check."""
    store = LabelStore(4, 3)
    store.assign(torch.tensor([3]), torch.tensor([1]), 0.5)
    lookup = torch.compile(store.lookup, backend='eager', fullgraph=True)
    looked = lookup(torch.tensor([3, 0]))
    assert looked[0, 1] == 0.5 and int(torch.isnan(looked).sum()) == 5
    with pytest.raises(RuntimeError, match=r'mmlml: .* \[0, 4\)'):
        lookup(torch.tensor([4, 0]))
