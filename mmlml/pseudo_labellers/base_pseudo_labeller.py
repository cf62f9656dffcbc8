"""The interface of the pseudo-labellers: a frozen model that scores every
class of a batch of images."""
from abc import ABCMeta, abstractmethod
from typing import List, Optional

import torch
from mmengine.model import BaseModule
from torch import Tensor

__all__ = ['BasePseudoLabeller']


class BasePseudoLabeller(BaseModule, metaclass=ABCMeta):
    """Base of the pseudo-labellers: frozen models that give every class of
    an image a probability, from which
    :class:`~mmlml.hooks.VLPseudoLabelHook` makes pseudo-labels.

    A pseudo-labeller is an ``nn.Module`` registered in ``MODELS`` (build it
    with ``MODELS.build(dict(type=...))``); it says what it needs:

    - :attr:`pipeline`: the data transforms that turn a sample's annotation
      (the dict of ``get_data_info``) into its input, ending with
      ``PackInputs``; None leaves the choice to the caller, which then uses
      the evaluation pipeline of the training config (the images as the
      classifier sees them at test time: loaded, resized, no random
      augmentation);
    - :meth:`score`: everything after the pipeline (resizing, cutting,
      normalising: the work of a data preprocessor) and the model, for a
      batch of the pipeline's outputs.

    The caller puts the labeller in eval mode, on its device, and calls
    :meth:`score` without gradients
    (:func:`~mmlml.pseudo_labellers.score_dataset`).

    Args:
        pipeline (list[dict], optional): The transforms that make the
            labeller's input from a sample. Defaults to None (the caller's
            evaluation pipeline).
        init_cfg (dict, optional): MMEngine's initialisation config.
            Defaults to None.
    """

    def __init__(self,
                 pipeline: Optional[List[dict]] = None,
                 init_cfg: Optional[dict] = None):
        super().__init__(init_cfg=init_cfg)
        if pipeline is not None and not isinstance(pipeline, (list, tuple)):
            raise TypeError('pipeline must be a list of transforms, got '
                            f'{type(pipeline).__name__}')
        self.pipeline = None if pipeline is None else list(pipeline)

    @property
    @abstractmethod
    def num_classes(self) -> int:
        """int: The number of classes ``C`` the labeller scores."""

    @abstractmethod
    def score(self,
              inputs: Tensor,
              observed: Optional[Tensor] = None) -> Tensor:
        """The probabilities of every class for a batch of images.

        Args:
            inputs (Tensor): ``(N, 3, H, W)``, the ``inputs`` of the
                pipeline's ``PackInputs`` stacked (``uint8`` or float, in
                the channel order the pipeline loads, BGR for
                ``LoadImageFromFile``), on any device.
            observed (Tensor, optional): ``(N, C)`` observed labels of the
                batch in mmlml's training encoding (1 observed positive, 0
                unannotated, -1 observed negative), for labellers whose
                scores depend on them; None when unknown.

        Returns:
            Tensor: ``(N, C)`` float32 probabilities in ``[0, 1]``.
        """

    @property
    def device(self) -> torch.device:
        """torch.device: Where the labeller's weights are (the CPU for a
        labeller without any)."""
        for tensor in self.parameters():
            return tensor.device
        for tensor in self.buffers():
            return tensor.device
        return torch.device('cpu')
