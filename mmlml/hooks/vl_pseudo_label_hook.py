"""Vision-language pseudo-labels (VLPL, AEVLP), written into the label store
before the first training iteration."""
import copy
import json
import os
import os.path as osp
from typing import List, Optional, Tuple, Union

import numpy as np
import torch
from mmengine.dataset import Compose
from mmengine.dist import get_rank

from mmlml.apis import find_pipeline
from mmlml.datasets.partial.statistics import known_label_quality, quality_text
from mmlml.pseudo_labellers import (BasePseudoLabeller, all_ranks_agree,
                                    load_scores, parts_dir_of, remove_parts,
                                    save_scores, score_dataset,
                                    select_pseudo_labels)
from mmlml.pseudo_labellers.thresholds import THRESHOLD_RULES, THRESHOLDS
from mmlml.registry import HOOKS, MODELS
from mmlml.utils.hyperparameters import (PATH, Integer, Rule, Typed,
                                         check_settings)
from .label_store_hook import LabelStoreHook
from .resume_check_hook import array_digest

__all__ = ['VLPseudoLabelHook', 'scoring_pipeline']


def scoring_pipeline(labeller: BasePseudoLabeller,
                     cfg,
                     pipeline: Optional[List[dict]] = None,
                     source: str = 'val') -> Tuple[List[dict], str]:
    """The pipeline that makes the labeller's inputs, and where it comes
    from: ``pipeline`` if given, else the labeller's own, else the pipeline
    of the config's ``{source}_dataloader`` dataset (the other of ``val`` /
    ``test`` if the config has no such dataloader).

    Raises:
        ValueError: None of them exists.
    """
    if pipeline is not None:
        return list(pipeline), 'the given pipeline'
    if labeller.pipeline is not None:
        return list(labeller.pipeline), "the labeller's pipeline"
    other = 'test' if source == 'val' else 'val'
    for name in (f'{source}_dataloader', f'{other}_dataloader'):
        loader = cfg.get(name) if cfg is not None else None
        if loader is not None and loader.get('dataset') is not None:
            return find_pipeline(loader['dataset'], name), f'the {name}'
    raise ValueError(
        'The pseudo-labeller has no pipeline and the config no val_dataloader '
        'or test_dataloader whose pipeline would load the images: give the '
        'labeller (or the hook) a pipeline.')


@HOOKS.register_module()
class VLPseudoLabelHook(LabelStoreHook):
    """Pseudo-label the training set once, before the first iteration, from
    the scores of a frozen model: CLIP against class text embeddings (VLPL,
    Xing et al., CVPRW 2024; AEVLP, Tran et al., ICCV 2025), or a
    classifier trained earlier.

    Before training it finds the training
    :class:`~mmlml.datasets.PartialLabelDataset` (also behind
    ``RepeatDataset`` / ``ClassBalancedDataset``), gets a score for every
    (training sample, class), and writes into the label store
    (:class:`~mmlml.structures.LabelStore`), for the unannotated entries
    only (observed label 0; observed positives and negatives are never
    pseudo-labelled), :func:`~mmlml.pseudo_labellers.select_pseudo_labels`:

    - ``+1`` (a pseudo-positive) where the score is ``>= pos_thr`` (and,
      with ``pos_topk``, among the ``pos_topk`` highest of its image);
    - ``+0`` (a pseudo-negative) where it is ``<= neg_thr`` or, with
      ``neg_fraction``, among the lowest ``floor(neg_fraction * C)`` of its
      image, when either is given;
    - nothing elsewhere;
    - or, with ``soft=True``, the score itself (``+s``) on every
      unannotated entry.

    The loss reads them as ``pseudo_labels`` (``VLPLLoss``, ``GPRLoss``).

    Where the scores come from:

    - ``scores_file``: a ``.npy`` of ``(N, C)`` scores, one row per sample
      of the dataset that the training ``PartialLabelDataset`` wraps, in
      its order (``tools/vl_pseudo_label.py`` writes it once for many
      runs); every rank reads it.
    - else ``labeller`` (a config of a
      :class:`~mmlml.pseudo_labellers.BasePseudoLabeller`, e.g.
      ``dict(type='CLIPPseudoLabeller', ...)``), built on the CPU, run on
      the model's device over the training set through its pipeline
      (``pipeline``, else the labeller's own, else the ``val_dataloader``'s),
      then freed. The samples are sharded across the ranks and the rows
      gathered (:func:`~mmlml.pseudo_labellers.score_dataset`), so every
      rank writes the same store; rank 0 prints a progress line.
    - ``cache_file``: where the labeller's scores are kept (a scores file:
      the training rows, NaN elsewhere; its chunk files in
      ``<cache_file>.parts`` while scoring). A run that finds it reads it
      instead of scoring, and a run killed while scoring scores only the
      chunks left. It is found by its path only: delete it when the
      labeller, the pipeline or the training set changes.

    A resumed run (``resume=True``) restores the store from the checkpoint
    and scores nothing; :class:`ResumeCheckHook` refuses it if the
    pseudo-labels would differ from the checkpoint's (another threshold,
    other values in the scores file, another labeller:
    :meth:`label_source`). The random number generators of training are left
    untouched (the scoring runs in a fork of them), and the loop may be
    epoch- or iteration-based.

    Needs ``model.head.type='PartialLabelLinearClsHead'`` (or another
    ``PartialLabel*Head``) and a loss that reads ``pseudo_labels``.

    Official settings (docs/pseudo_labels.md): VLPL, CLIP ViT-L/14 at 336
    px, whole images, ``pos_thr=0.3`` on all four benchmarks, no
    pseudo-negatives; AEVLP, CLIP ViT-B/16, ``tiles=(4, 4)`` (CUB
    ``(5, 5)``), ``pos_topk=3`` (CUB 32), ``pos_thr`` 0.5 (VOC, COCO), 0.6
    (NUS-WIDE), 0.005 (CUB).

    Args:
        labeller (dict | BasePseudoLabeller, optional): The scorer.
            Required without ``scores_file``.
        scores_file (str, optional): Scores to read instead of scoring.
        cache_file (str, optional): Where to keep the labeller's scores.
            Not with ``scores_file``.
        pos_thr (float): The pseudo-positive threshold, in ``[0, 1]``.
            Defaults to 0.3 (VLPL's).
        neg_thr (float, optional): The pseudo-negative threshold, below
            ``pos_thr``. Defaults to None (none).
        neg_fraction (float, optional): The fraction of each image's
            classes with the lowest scores made pseudo-negatives (VLPL's
            ``partial``), in ``[0, 1)``. Defaults to None (none).
        pos_topk (int, optional): Pseudo-positives only among the
            ``pos_topk`` highest scores of each image (AEVLP's ``top_k``).
            Defaults to None (no limit).
        soft (bool): Write every unannotated entry's score instead of hard
            labels. Defaults to False.
        pipeline (list[dict], optional): The transforms that make the
            labeller's inputs. Defaults to None (see above).
        batch_size (int, optional): Defaults to the ``val_dataloader``'s
            batch size (32 without one).
        num_workers (int, optional): Defaults to the ``val_dataloader``'s
            (0 without one).
        chunk_size (int, optional): Samples per chunk (the unit of the
            sharding and of ``cache_file``'s chunk files). Defaults to 16
            batches.

    Example:
        >>> model = dict(head=dict(type='PartialLabelLinearClsHead',
        ...     loss=dict(_delete_=True, type='VLPLLoss', alpha=0.1)))
        >>> custom_hooks = [dict(
        ...     type='VLPseudoLabelHook', pos_thr=0.3,
        ...     labeller=dict(type='CLIPPseudoLabeller', ...),
        ...     cache_file='work_dirs/coco_clip_scores.npy')]
    """

    needs_epochs = False

    hyperparameters = dict(
        labeller=Typed(
            None,
            types=(dict, BasePseudoLabeller),
            spelled='a config dict or a BasePseudoLabeller',
            optional=True),
        scores_file=PATH,
        cache_file=PATH,
        **THRESHOLDS,
        batch_size=Integer(None, low=1, optional=True),
        num_workers=Integer(None, low=0, optional=True),
        chunk_size=Integer(None, low=1, optional=True))
    rules = (
        Rule(
            lambda labeller, scores_file: labeller is not None or scores_file
            is not None,
            '{owner} needs a labeller (to score the training set) or a '
            'scores_file'),
        Rule(
            lambda scores_file, cache_file: scores_file is None or cache_file
            is None, '{owner}: cache_file keeps what the '
            'labeller scores; with scores_file nothing is scored'),
        *THRESHOLD_RULES,
    )

    def __init__(self,
                 *,
                 labeller: Optional[Union[dict, BasePseudoLabeller]] = None,
                 scores_file: Optional[str] = None,
                 cache_file: Optional[str] = None,
                 pos_thr: float = 0.3,
                 neg_thr: Optional[float] = None,
                 neg_fraction: Optional[float] = None,
                 pos_topk: Optional[int] = None,
                 soft: bool = False,
                 pipeline: Optional[List[dict]] = None,
                 batch_size: Optional[int] = None,
                 num_workers: Optional[int] = None,
                 chunk_size: Optional[int] = None):
        super().__init__()
        self.labeller = labeller
        self.scores_file = scores_file
        self.cache_file = cache_file
        self.pos_thr = pos_thr
        self.neg_thr = neg_thr
        self.neg_fraction = neg_fraction
        self.pos_topk = pos_topk
        self.soft = soft
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.chunk_size = chunk_size
        check_settings(self)
        if scores_file is not None:
            self.scores_file = os.fspath(scores_file)
        if cache_file is not None:
            self.cache_file = os.fspath(cache_file)
        self.thresholds = {name: getattr(self, name) for name in THRESHOLDS}
        self.pipeline = None if pipeline is None else list(pipeline)
        self._restored = False

    def label_source(self, dataset) -> dict:
        """What fixes the pseudo-labels this hook writes on ``dataset`` (the
        training :class:`~mmlml.datasets.PartialLabelDataset`), by value,
        for :func:`~mmlml.hooks.resume_check_hook.partial_label_fingerprint`:
        the thresholds and the digest of the training rows of
        ``scores_file`` (not if the file is gone: a resumed run reads no
        scores, its pseudo-labels come back from the checkpoint), or else
        the labeller's config and the hook's ``pipeline`` (the labeller's
        scores are not computed again to check a resumed run)."""
        source = dict(self.thresholds)
        if self.scores_file is not None:
            if osp.isfile(self.scores_file):
                source['scores'] = array_digest(
                    load_scores(self.scores_file, len(dataset.dataset),
                                dataset.num_classes, dataset.indices))
        else:
            source['labeller'] = str(self.labeller) if isinstance(
                self.labeller, dict) else type(self.labeller).__name__
            source['pipeline'] = str(self.pipeline)
        return source

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        """Note whether the store comes back from a resumed checkpoint (then
        nothing is scored), and restore it.

        Args:
            runner (Runner): The runner of the training process.
            checkpoint (dict): The loaded checkpoint.
        """
        self._restored = bool(
            runner._resume) and checkpoint.get('label_store') is not None
        super().after_load_checkpoint(runner, checkpoint)

    def before_train(self, runner) -> None:
        """Attach the store, then fill it with the pseudo-labels (unless a
        resumed checkpoint restored it).

        Args:
            runner (Runner): The runner of the training process.
        """
        super().before_train(runner)
        if self._restored:
            runner.logger.info(
                f'{self.name}: {self.store.num_pseudo_labels} pseudo-labels '
                'restored from the resumed checkpoint; nothing scored.')
            return
        scores, source = self.training_scores(runner)
        observed = self.observed_labels()
        selected = select_pseudo_labels(
            torch.from_numpy(scores), observed, **self.thresholds)
        # Every rank holds the same scores and picks the same entries.
        self.store.assign(
            selected.samples, selected.classes, selected.values, gather=False)
        runner.logger.info(
            f'{self.name}: {self._summary(selected, len(scores))} '
            f'(scores from {source}).')

    def training_scores(self, runner) -> Tuple[np.ndarray, str]:
        """The ``(len(training set), C)`` scores of the training samples,
        identical on every rank, and where they come from."""
        dataset = self.dataset
        num_all = len(dataset.dataset)
        num_classes = dataset.num_classes
        rows = dataset.indices
        if self.scores_file is not None:
            return (load_scores(self.scores_file, num_all, num_classes,
                                rows), self.scores_file)
        if self.cache_file is not None and all_ranks_agree(
                osp.isfile(self.cache_file)):
            return (load_scores(self.cache_file, num_all, num_classes,
                                rows), f'the cache {self.cache_file}')
        # A fork of the generators: building the labeller and the
        # dataloader's seed draw from them.
        with torch.random.fork_rng(devices=[]):
            scores, pipeline_source = self._score(runner)
        if self.cache_file is not None and get_rank() == 0:
            full = np.full((num_all, num_classes), np.nan, dtype=np.float32)
            full[rows] = scores
            save_scores(self.cache_file, full)
            remove_parts(parts_dir_of(self.cache_file))
        return scores, f'the labeller through {pipeline_source}'

    def _score(self, runner) -> Tuple[np.ndarray, str]:
        labeller = self.labeller
        if labeller is None:
            raise RuntimeError(f'{self.name}: no labeller to score the '
                               'training set with (set labeller).')
        if isinstance(labeller, dict):
            labeller = MODELS.build(copy.deepcopy(labeller))
        if labeller.num_classes != self.dataset.num_classes:
            raise ValueError(
                f'{self.name}: the labeller scores {labeller.num_classes} '
                f'classes, the training set has {self.dataset.num_classes}')
        val_loader = runner.cfg.get('val_dataloader') or {}
        pipeline, source = scoring_pipeline(labeller, runner.cfg,
                                            self.pipeline)
        scoring_set = copy.copy(self.dataset)
        scoring_set.pipeline = Compose(pipeline)
        batch_size = self.batch_size or val_loader.get('batch_size', 32)
        num_workers = self.num_workers if self.num_workers is not None \
            else val_loader.get('num_workers', 0)
        params = next(iter(self.head.parameters()), None)
        device = params.device if params is not None else torch.device('cpu')
        fingerprint = json.dumps(
            dict(
                labeller=str(
                    self.labeller if isinstance(self.labeller, dict) else type(
                        labeller).__name__),
                pipeline=str(pipeline)),
            sort_keys=True)
        try:
            scores = score_dataset(
                labeller,
                scoring_set,
                batch_size=batch_size,
                num_workers=num_workers,
                chunk_size=self.chunk_size,
                parts_dir=None
                if self.cache_file is None else parts_dir_of(self.cache_file),
                fingerprint=fingerprint,
                device=device,
                task=f'{self.name}: scoring the training set')
        finally:
            labeller.cpu()
            if device.type == 'cuda':
                torch.cuda.empty_cache()
        return scores, source

    def _summary(self, selected, num_images: int) -> str:
        """How many pseudo-labels, and how they agree with the known labels
        of the annotation that the dataset keeps, in the words of the
        training log of a label file
        (:func:`~mmlml.datasets.partial.statistics.quality_text`): labels
        the annotation leaves unknown are counted apart."""
        positive = selected.values == 1
        if self.thresholds['soft']:
            return (f'{len(selected.values)} soft pseudo-labels on '
                    f'{num_images} training images')
        samples = selected.samples.cpu().numpy()
        classes = selected.classes.cpu().numpy()
        unknown = self.dataset.annotation_unknown
        # The chosen entries as one column: the counts are per entry.
        quality = known_label_quality(
            np.where(positive.cpu().numpy(), 1, -1).astype(np.int8)[:, None],
            self.dataset.full_labels[samples, classes][:, None],
            None if unknown is None else unknown[samples, classes][:, None])
        num_positive = int(positive.sum())
        num_negative = int((selected.values == 0).sum())
        return (f'{num_positive} pseudo-positives '
                f'({num_positive / max(num_images, 1):.2f} per image) and '
                f'{num_negative} pseudo-negatives on {num_images} training '
                'images; ' + quality_text(quality, 'pseudo-positives'))
