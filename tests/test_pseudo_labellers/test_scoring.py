"""Scoring a dataset with a pseudo-labeller (score_dataset, shared by the
hook and tools/vl_pseudo_label.py): a classifier trained earlier
(ModelPseudoLabeller) on the tiny demo scores as the model does, and the
chunk files make a run resumable."""
import os
import os.path as osp

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.dataset import Compose
from mmengine.registry import DefaultScope

import mmlml  # noqa: F401
from mmlml.apis import predict_scores
from mmlml.pseudo_labellers import (BasePseudoLabeller, ModelPseudoLabeller,
                                    load_scores, save_scores, score_dataset)
from mmlml.registry import DATASETS, MODELS
from mmlml.utils.own_folders import OWNER_MARKER


def demo_checkpoint(config, path):
    """The (random) weights of the demo config's model, as a trained
    checkpoint would hold them."""
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(cfg.model)
    torch.save(dict(state_dict=model.state_dict(), meta={}), str(path))
    return str(path)


def training_set(config, pipeline):
    cfg = Config.fromfile(config)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        dataset = DATASETS.build(cfg.train_dataloader.dataset)
        dataset.pipeline = Compose(pipeline)
    return dataset


def test_model_labeller_scores_as_the_model(tiny_demo_config, tmp_path):
    config = tiny_demo_config()
    labeller = MODELS.build(
        dict(
            type='ModelPseudoLabeller',
            config=config,
            checkpoint=demo_checkpoint(config, tmp_path / 'demo.pth')))
    assert isinstance(labeller, ModelPseudoLabeller)
    assert labeller.num_classes == 20
    # Its pipeline: the validation pipeline of its config.
    assert labeller.pipeline == [dict(type='PackInputs')]
    dataset = training_set(config, labeller.pipeline)
    scores = score_dataset(labeller, dataset, batch_size=16)
    expected = predict_scores(labeller.model, dataset, 16)
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-6)
    # Sigmoid scores: not a softmax over the classes.
    assert not np.allclose(scores.sum(1), 1)


class CountingLabeller(BasePseudoLabeller):
    """Scores that depend on the image only; records the size of each batch
    and the observed labels it is handed."""

    def __init__(self):
        super().__init__(pipeline=[dict(type='PackInputs')])
        self.scored, self.observed = [], []

    @property
    def num_classes(self):
        return 20

    def score(self, inputs, observed=None):
        self.scored.append(len(inputs))
        self.observed.append(observed)
        brightness = inputs.float().mean((1, 2, 3)) / 255
        return brightness[:, None] * torch.linspace(0, 1, 20)


def test_chunk_files_make_scoring_resumable(tiny_demo_config, tmp_path):
    dataset = training_set(tiny_demo_config(), [dict(type='PackInputs')])
    assert len(dataset) == 51
    labeller = CountingLabeller()
    parts = str(tmp_path / 'scores.npy.parts')
    scores = score_dataset(
        labeller, dataset, batch_size=4, chunk_size=10, parts_dir=parts)
    assert scores.shape == (51, 20) and sum(labeller.scored) == 51
    # Batches never cross a chunk (10 = 4 + 4 + 2) and carry their rows'
    # observed labels.
    assert labeller.scored[:3] == [4, 4, 2]
    assert torch.equal(
        torch.cat(labeller.observed),
        torch.from_numpy(dataset.observed_labels))
    assert sorted(os.listdir(parts)) == [OWNER_MARKER] + [
        f'chunk_{start:010d}.npy' for start in range(0, 51, 10)
    ] + ['meta.json']

    # Started again: every chunk is read back, nothing is scored.
    labeller.scored.clear()
    again = score_dataset(
        labeller, dataset, batch_size=4, chunk_size=10, parts_dir=parts)
    assert labeller.scored == [] and np.array_equal(again, scores)
    # A missing and a truncated chunk are scored again, only they.
    os.remove(osp.join(parts, 'chunk_0000000020.npy'))
    with open(osp.join(parts, 'chunk_0000000050.npy'), 'wb') as f:
        f.write(b'\x93NUMPY')
    again = score_dataset(
        labeller, dataset, batch_size=4, chunk_size=10, parts_dir=parts)
    assert sum(labeller.scored) == 11 and np.array_equal(again, scores)
    # Chunks of another scoring are refused.
    with pytest.raises(ValueError, match='delete the folder'):
        score_dataset(
            labeller, dataset, batch_size=4, chunk_size=8, parts_dir=parts)

    # A scores file: the rows of every sample, checked when read.
    path = str(tmp_path / 'scores.npy')
    full = np.full((64, 20), np.nan, dtype=np.float32)
    full[dataset.indices] = scores
    save_scores(path, full)
    np.testing.assert_array_equal(
        load_scores(path, 64, 20, dataset.indices), scores)
    with pytest.raises(ValueError, match='must all have been scored'):
        load_scores(path, 64, 20)
    with pytest.raises(ValueError, match='64 samples x 21 classes'):
        load_scores(path, 64, 21)
