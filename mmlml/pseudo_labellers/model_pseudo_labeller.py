"""A classifier trained earlier as the pseudo-labeller."""
import os
from typing import List, Optional, Union

import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope
from torch import Tensor

from mmlml.apis import build_model, find_pipeline
from mmlml.registry import MODELS
from .base_pseudo_labeller import BasePseudoLabeller

__all__ = ['ModelPseudoLabeller']


@MODELS.register_module()
class ModelPseudoLabeller(BasePseudoLabeller):
    """A multi-label classifier trained earlier (a config and a checkpoint,
    as ``tools/pseudo_label.py`` takes them) as the pseudo-labeller: the
    probabilities are its head's ``pred_score`` (the sigmoid of the logits
    for MMPretrain's multi-label heads), in eval mode.

    The model is built as the Runner builds it (with the config's
    ``data_preprocessor``, which normalises the inputs) and the checkpoint
    loaded strictly through MMEngine (so with ``weights_only=True``). Its
    pipeline is, unless given, the ``pipeline`` of the config's
    ``val_dataloader`` dataset (``test_dataloader``'s if there is none):
    the images as the model saw them in validation.

    Args:
        config (str | Config): The model's config.
        checkpoint (str): Its trained weights.
        pipeline (list[dict], optional): See :class:`~.BasePseudoLabeller`.
            Defaults to None (the config's validation pipeline).
        cfg_options (dict, optional): Overrides of the config.
        init_cfg (dict, optional): Unused. Defaults to None.

    Example:
        >>> labeller = dict(
        ...     type='ModelPseudoLabeller',
        ...     config='configs/demo/an.py',
        ...     checkpoint='work_dirs/an/epoch_10.pth')
    """

    def __init__(self,
                 config: Union[str, os.PathLike, Config],
                 checkpoint: str,
                 pipeline: Optional[List[dict]] = None,
                 cfg_options: Optional[dict] = None,
                 init_cfg: Optional[dict] = None):
        cfg = config.copy() if isinstance(config, Config) else \
            Config.fromfile(os.fspath(config))
        if cfg_options:
            cfg.merge_from_dict(dict(cfg_options))
        if pipeline is None:
            for name in ('val_dataloader', 'test_dataloader'):
                if cfg.get(name) is not None:
                    pipeline = find_pipeline(cfg[name].dataset, name)
                    break
        super().__init__(pipeline=pipeline, init_cfg=init_cfg)
        with DefaultScope.overwrite_default_scope(
                cfg.get('default_scope', 'mmpretrain')):
            self.model, _ = build_model(cfg, checkpoint, 'cpu')
        self.model.requires_grad_(False)
        num_classes = getattr(
            getattr(self.model, 'head', None), 'num_classes', None)
        if num_classes is None:
            raise TypeError('ModelPseudoLabeller needs a classifier whose '
                            'head has num_classes')
        self._num_classes = int(num_classes)

    @property
    def num_classes(self) -> int:
        return self._num_classes

    @torch.no_grad()
    def score(self,
              inputs: Tensor,
              observed: Optional[Tensor] = None) -> Tensor:
        data = self.model.data_preprocessor(
            dict(inputs=inputs, data_samples=None), training=False)
        samples = self.model(data['inputs'], None, mode='predict')
        return torch.stack([s.pred_score.float() for s in samples])
