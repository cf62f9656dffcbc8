"""A trained classifier's scores on every sample of a dataset: the model
built from a config and a checkpoint, the pipeline of a dataloader, and
the scores. Training code uses them (:class:`~mmlml.hooks.VLPseudoLabelHook`,
:class:`~mmlml.pseudo_labellers.ModelPseudoLabeller`), as do the tools that
relabel or analyse a training set (``tools/pseudo_label.py``,
``tools/analysis/missing_label_scores.py``) and the one that chooses
per-class thresholds (``tools/choose_thresholds.py``); their command-line
options are :mod:`mmlml.cli.model_options`."""
from typing import Tuple

import numpy as np
import torch
from mmengine.dataset import pseudo_collate
from mmengine.model import BaseModel
from mmengine.runner import load_checkpoint
from torch.utils.data import DataLoader

from mmlml.registry import MODELS
from mmlml.utils.progress_line import ProgressLine
from .trained_model import check_trained_model

__all__ = ['find_pipeline', 'build_model', 'predict_scores']


def find_pipeline(dataset_cfg, name: str):
    """The pipeline of a dataloader's dataset config, looking through
    dataset wrappers (``dataset`` keys) and into the first part of a
    ``ConcatDataset`` (``datasets``); ``name`` names the dataloader in the
    error."""
    current = dataset_cfg
    while isinstance(current, dict):
        if current.get('pipeline') is not None:
            return current['pipeline']
        if current.get('datasets'):
            current = current['datasets'][0]
        else:
            current = current.get('dataset')
    raise ValueError(f'{name}.dataset has no pipeline to transform the '
                     'training images with.')


def build_model(cfg, checkpoint: str, device: str) -> Tuple[BaseModel, dict]:
    """The config's model (with its data preprocessor, as the Runner builds
    it) with the checkpoint's weights loaded strictly, in eval mode on
    ``device``, and the loaded checkpoint dict. A checkpoint trained as
    another model is refused (:func:`.trained_model.check_trained_model`)."""
    model_cfg = cfg.model.copy()
    if cfg.get('data_preprocessor') is not None:
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = MODELS.build(model_cfg)
    ckpt = load_checkpoint(model, checkpoint, map_location='cpu', strict=True)
    check_trained_model(model_cfg, ckpt, cfg.filename, checkpoint)
    return model.to(device).eval(), ckpt


@torch.no_grad()
def predict_scores(model,
                   dataset,
                   batch_size: int,
                   num_workers: int = 0) -> np.ndarray:
    """The ``(len(dataset), C)`` float32 ``pred_score`` of every sample,
    in the order of the dataset (placed by each sample's ``sample_idx``).

    Args:
        model: A classifier in eval mode whose ``test_step`` returns data
            samples with ``pred_score`` (the probabilities of a
            multi-label head).
        dataset: The samples (a dataset with ``num_classes`` whose samples
            carry their own index as ``sample_idx``, e.g.
            :class:`~mmlml.datasets.PartialLabelDataset`).
        batch_size (int): The inference batch size.
        num_workers (int): The dataloader workers. Defaults to 0.
    """
    scores = np.full((len(dataset), dataset.num_classes),
                     np.nan,
                     dtype=np.float32)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=pseudo_collate)
    progress = ProgressLine('scoring', len(dataset), 'samples')
    for batch in loader:
        for sample in model.test_step(batch):
            score = sample.pred_score.float().cpu().numpy()
            if score.shape != (dataset.num_classes, ):
                raise RuntimeError(
                    f'the model predicts {score.shape[0]} scores per sample '
                    f'but the dataset has {dataset.num_classes} classes')
            scores[sample.sample_idx] = score
        progress.update(len(batch['data_samples']))
    progress.close()
    missing = np.isnan(scores).any(1)
    if missing.any():
        raise RuntimeError(
            f'{int(missing.sum())} samples got no prediction; the data '
            'samples must carry the sample_idx of the dataset.')
    return scores
