"""A frozen CLIP image encoder against class text embeddings (VLPL,
AEVLP)."""
import os
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmengine.runner import CheckpointLoader
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import (PATH, REQUIRED, Choice, Flag, Integer,
                                         IntegerPair, Real, RealTuple, Rule,
                                         Typed, check_settings)
from .base_pseudo_labeller import BasePseudoLabeller

__all__ = [
    'CLIPPseudoLabeller', 'ImageProjection', 'combine_tiles',
    'load_text_embeddings', 'CLIP_MEAN', 'CLIP_STD', 'TILE_COMBINES', 'NPZ_KEY'
]

#: CLIP's pixel statistics (RGB, 0-255), those of OpenAI's preprocessing
#: and of MMPretrain's CLIP configs.
CLIP_MEAN = (0.48145466 * 255, 0.4578275 * 255, 0.40821073 * 255)
CLIP_STD = (0.26862954 * 255, 0.26130258 * 255, 0.27577711 * 255)
#: How the scores of the tiles join the whole image's
#: (:func:`combine_tiles`).
TILE_COMBINES = ('aevlp', 'max', 'mean')


class ImageProjection(nn.Module):
    """CLIP's image projection, ``x @ proj`` without bias: MMPretrain's
    ``CLIPProjection`` (which MMPretrain registers only when the
    ``transformers`` package is installed), with the same parameter name, so
    a converted checkpoint's ``visual_proj.proj`` loads into it.

    Args:
        in_channels (int): The image encoder's embedding size.
        out_channels (int): The joint embedding size of CLIP.
    """

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.proj = nn.Parameter(in_channels**-0.5 *
                                 torch.randn(in_channels, out_channels))

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.proj


#: The array of a ``.npz`` file of several arrays that
#: :func:`load_text_embeddings` reads.
NPZ_KEY = 'text_embeddings'


def _read_embeddings_file(path: str) -> np.ndarray:
    """The array of a ``.npy`` file, or of a ``.npz`` archive (its only
    array, else the one named :data:`NPZ_KEY`), read without unpickling."""
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError(
            f'cannot read the text embeddings {path} as a .npy or .npz '
            f'array without unpickling ({type(error).__name__}: {error}): '
            'save them with numpy.save') from error
    if isinstance(loaded, np.ndarray):
        return loaded
    with loaded:
        keys = list(loaded.files)
        if len(keys) != 1 and NPZ_KEY not in keys:
            raise ValueError(
                f'the archive {path} holds the arrays {keys}: keep only the '
                f'text embeddings in it, name them {NPZ_KEY!r}, or save them '
                'as a .npy file')
        try:
            return loaded[keys[0] if len(keys) == 1 else NPZ_KEY]
        except ValueError as error:  # an object array
            raise ValueError(f'cannot read the text embeddings in {path} '
                             f'without unpickling: {error}') from error


def load_text_embeddings(
        source: Union[str, os.PathLike, np.ndarray, Tensor]) -> Tensor:
    """The ``(C, D)`` class text embeddings, float32, each row divided by
    its norm.

    Rows are normalised in float64 after dividing by their largest
    magnitude, so that rows of huge (1e30) or tiny (1e-40) numbers keep
    their direction instead of overflowing to zero or infinity.

    Args:
        source: A ``.npy`` file, a ``.npz`` archive with one array (or an
            array named :data:`NPZ_KEY`), both read with
            ``allow_pickle=False``, or an array.

    Raises:
        ValueError: Not a 2-d array of floats, a file that cannot be read
            without unpickling, or a class whose row is not finite or is
            zero (the error names the class indices).
    """
    name = 'the text embeddings'
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        array = _read_embeddings_file(name)
    else:
        array = source.detach().cpu().numpy() if isinstance(
            source, Tensor) else np.asarray(source)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f'{name} must be a (classes, dims) matrix, got '
                         f'shape {array.shape}')
    if not np.issubdtype(array.dtype, np.floating):
        raise ValueError(f'{name} must hold floats, got {array.dtype}')
    array = array.astype(np.float64)
    for bad, what in ((~np.isfinite(array).all(1), 'NaN or infinite values'),
                      (~(array != 0).any(1), 'only zeros')):
        if bad.any():
            classes = np.flatnonzero(bad).tolist()
            raise ValueError(
                f'{name}: the rows of the classes {classes[:10]}'
                f'{" ..." if len(classes) > 10 else ""} hold {what}, so '
                'they have no direction to compare images with: recompute '
                'the text embeddings of these classes')
    array = array / np.abs(array).max(1, keepdims=True)
    array = array / np.linalg.norm(array, axis=1, keepdims=True)
    return torch.from_numpy(array.astype(np.float32))


def combine_tiles(whole: Tensor,
                  tiles: Tensor,
                  mode: str = 'aevlp',
                  eta: float = 0.1,
                  observed: Optional[Tensor] = None) -> Tensor:
    """Join the class probabilities of an image and of its tiles.

    With :math:`g` the whole image's probabilities, :math:`a` and :math:`b`
    the largest and the smallest over the tiles:

    - ``'aevlp'``: AEVLP's rule (``get_pseudo_labels`` of its utils.py),
      :math:`\\frac12(g + \\gamma a + (1 - \\gamma) b)` with
      :math:`\\gamma = [a > \\min(s, \\eta)]`, where :math:`s` is the whole
      image's probability of its observed positive (the largest if several,
      0 if none); without ``observed`` the cap is :math:`\\eta` alone;
    - ``'max'``: :math:`\\frac12(g + a)`;
    - ``'mean'``: :math:`\\frac12(g + \\bar t)`, with :math:`\\bar t` the
      mean over the tiles.

    Args:
        whole (Tensor): ``(N, C)`` probabilities of the whole images.
        tiles (Tensor): ``(T, N, C)`` probabilities of their ``T`` tiles.
        mode (str): One of :data:`TILE_COMBINES`. Defaults to 'aevlp'.
        eta (float): :math:`\\eta` of ``'aevlp'``. Defaults to 0.1.
        observed (Tensor, optional): ``(N, C)`` observed labels (1 observed
            positive).

    Returns:
        Tensor: ``(N, C)`` combined probabilities.
    """
    if mode == 'max':
        return 0.5 * (whole + tiles.amax(0))
    if mode == 'mean':
        return 0.5 * (whole + tiles.mean(0))
    if mode != 'aevlp':
        raise ValueError(f'mode must be one of {TILE_COMBINES}, got {mode!r}')
    largest, smallest = tiles.amax(0), tiles.amin(0)
    cap = torch.full_like(whole[:, :1], float(eta))
    if observed is not None:
        positive = observed.to(whole.device) == 1
        observed_score = torch.where(positive, whole,
                                     torch.zeros_like(whole)).amax(
                                         1, keepdim=True)
        cap = torch.minimum(observed_score, cap)
    return 0.5 * (whole + torch.where(largest > cap, largest, smallest))


@MODELS.register_module()
class CLIPPseudoLabeller(BasePseudoLabeller):
    r"""A frozen CLIP image encoder scoring images against fixed class text
    embeddings: the pseudo-labeller of VLPL (Xing et al., CVPRW 2024) and,
    with ``tiles``, of AEVLP (Tran et al., ICCV 2025).

    For a batch of images (the ``inputs`` of the pipeline, BGR as loaded):
    channels to RGB (``to_rgb``), each image resized to ``input_size``
    (``interpolation``, antialiased) and normalised with ``mean`` and
    ``std``; the image encoder's embedding (its last output, ``(N, D)``:
    the class token of MMPretrain's ``VisionTransformer``), projected by
    ``visual_proj`` (:class:`ImageProjection`, when ``proj_dims`` is set)
    and divided by its norm; then

    .. math::
        p_c = \operatorname{softmax}_c(\lambda\, \hat f^\top \hat t_c),

    the softmax over the classes of the cosine similarities to the
    normalised text embeddings :math:`\hat t_c`, times the logit scale
    :math:`\lambda` (``logit_scale``, 100: both papers' temperature 0.01).

    With ``tiles=(rows, cols)`` the image is also cut into a grid of tiles
    (each ``H // rows`` by ``W // cols``, the remainder at the right and
    bottom dropped, as AEVLP does), each tile resized to ``input_size`` and
    scored the same way, and the scores joined by :func:`combine_tiles`
    (``tile_combine``; AEVLP's rule uses the observed positive of each
    image, passed as ``observed`` to :meth:`score`).

    Only the image side of CLIP is built: no text encoder, no tokenizer.
    The class text embeddings are computed once, where the tokenizer is
    (see docs/pseudo_labels.md), and read from a ``.npy`` or ``.npz``
    file.

    Args:
        image_encoder (dict | nn.Module): The image encoder, a config that
            ``MODELS`` builds, e.g. ``dict(type='VisionTransformer',
            arch='base', img_size=224, patch_size=16, pre_norm=True,
            layer_cfgs=dict(act_cfg=dict(type='QuickGELU')))`` for CLIP
            ViT-B/16. Its last output must be ``(N, D)``.
        text_embeddings (str | array): The ``(C, D')`` class text
            embeddings: a ``.npy`` or ``.npz`` file or an array
            (normalised here; see :func:`load_text_embeddings`).
        proj_dims (int, optional): ``D'``, the output size of the image
            projection; None for none (an encoder whose output is the joint
            embedding). Defaults to None.
        checkpoint (str, optional): Weights of the encoder and projection,
            loaded strictly through MMEngine's ``CheckpointLoader`` (so with
            ``weights_only=True``): the keys ``visual.*`` and
            ``visual_proj.proj`` of a CLIP checkpoint converted for
            MMPretrain (other keys, e.g. the text encoder's, are ignored).
            None keeps the random initialisation. Defaults to None.
        logit_scale (float): :math:`\lambda`. Defaults to 100.
        tiles (int | tuple[int, int], optional): The grid ``(rows, cols)``
            (an int for a square grid). Defaults to None (whole images).
        tile_combine (str): See :func:`combine_tiles`. Defaults to
            ``'aevlp'``.
        eta (float): :math:`\eta` of the ``'aevlp'`` rule, in ``[0, 1]``.
            Defaults to 0.1.
        input_size (int | tuple[int, int]): The encoder's input ``(H, W)``.
            Defaults to 224.
        interpolation (str): ``'bilinear'`` or ``'bicubic'``. Defaults to
            ``'bilinear'`` (the authors' torchvision ``Resize``).
        mean, std (sequence[float]): Per-channel normalisation (RGB, 0-255).
            Default to CLIP's (:data:`CLIP_MEAN`, :data:`CLIP_STD`).
        to_rgb (bool): Flip BGR inputs to RGB. Defaults to True.
        pipeline (list[dict], optional): See
            :class:`~.BasePseudoLabeller`. Defaults to None.
        init_cfg (dict, optional): Unused (the weights come from
            ``checkpoint``). Defaults to None.

    Example:
        >>> labeller = dict(
        ...     type='CLIPPseudoLabeller',
        ...     image_encoder=dict(
        ...         type='VisionTransformer', arch='base', img_size=224,
        ...         patch_size=16, pre_norm=True,
        ...         norm_cfg=dict(type='LN', eps=1e-5),
        ...         layer_cfgs=dict(act_cfg=dict(type='QuickGELU'))),
        ...     proj_dims=512,
        ...     checkpoint='checkpoints/clip-vit-b16_openai_mmpretrain.pth',
        ...     text_embeddings='data/coco/clip_vit-b16_text.npy',
        ...     tiles=(4, 4))
    """

    # What the settings become in __init__ (check_settings makes tiles a
    # pair; the embeddings and the statistics become buffers), which the
    # constructor's first, as-given stores are typed against.
    text_embeddings: Tensor
    tiles: Optional[Tuple[int, int]]
    mean: Tensor
    std: Tensor
    visual_proj: Optional[nn.Module]

    hyperparameters = dict(
        image_encoder=Typed(
            types=(dict, nn.Module), spelled='a config dict or an nn.Module'),
        text_embeddings=Typed(
            types=(str, os.PathLike, np.ndarray, Tensor),
            spelled='a .npy path or an array'),
        proj_dims=Integer(None, low=1, optional=True),
        checkpoint=PATH,
        logit_scale=Real(100.0, low=0, low_open=True),
        tiles=IntegerPair(None, optional=True),
        tile_combine=Choice('aevlp', options=TILE_COMBINES),
        eta=Real(0.1, low=0, high=1),
        input_size=IntegerPair(224),
        interpolation=Choice('bilinear', options=('bilinear', 'bicubic')),
        mean=RealTuple(CLIP_MEAN, names=('r', 'g', 'b')),
        std=RealTuple(CLIP_STD, names=('r', 'g', 'b')),
        to_rgb=Flag(True))
    rules = (Rule(lambda std: min(std) > 0,
                  'std must be positive, got {std!r}'), )

    def __init__(self,
                 image_encoder: Union[dict, nn.Module] = REQUIRED,
                 text_embeddings: Union[str, os.PathLike,
                                        np.ndarray] = REQUIRED,
                 proj_dims: Optional[int] = None,
                 checkpoint: Optional[str] = None,
                 logit_scale: float = 100.,
                 tiles: Optional[Union[int, Sequence[int]]] = None,
                 tile_combine: str = 'aevlp',
                 eta: float = 0.1,
                 input_size: Union[int, Sequence[int]] = 224,
                 interpolation: str = 'bilinear',
                 mean: Sequence[float] = CLIP_MEAN,
                 std: Sequence[float] = CLIP_STD,
                 to_rgb: bool = True,
                 pipeline: Optional[List[dict]] = None,
                 init_cfg: Optional[dict] = None):
        super().__init__(pipeline=pipeline, init_cfg=init_cfg)
        self.image_encoder = image_encoder
        self.text_embeddings = text_embeddings  # type: ignore[assignment]
        self.proj_dims = proj_dims
        self.checkpoint = checkpoint
        self.logit_scale = logit_scale
        self.tiles = tiles  # type: ignore[assignment]
        self.tile_combine = tile_combine
        self.eta = eta
        self.input_size = input_size
        self.interpolation = interpolation
        self.mean = mean  # type: ignore[assignment]
        self.std = std  # type: ignore[assignment]
        self.to_rgb = to_rgb
        check_settings(self)
        # What the encoder, the embeddings and the statistics build takes
        # their place (the statistics as (1, 3, 1, 1) buffers).
        rgb_mean, rgb_std, proj_dims = self.mean, self.std, self.proj_dims
        del self.image_encoder, self.text_embeddings, self.mean, self.std
        for name, rgb in (('mean', rgb_mean), ('std', rgb_std)):
            self.register_buffer(
                name,
                torch.tensor(rgb, dtype=torch.float32).view(1, 3, 1, 1),
                persistent=False)

        if isinstance(image_encoder, nn.Module):
            self.visual = image_encoder
        else:
            # MMPretrain's scope: the encoder's layers (QuickGELU) are
            # built through MMEngine's root registry.
            with DefaultScope.overwrite_default_scope('mmpretrain'):
                self.visual = MODELS.build(image_encoder)
        embed_dims = getattr(self.visual, 'embed_dims', None)
        if proj_dims is not None:
            if embed_dims is None:
                raise ValueError(
                    'proj_dims needs an image encoder with `embed_dims` '
                    f'(got {type(self.visual).__name__})')
            self.visual_proj = ImageProjection(embed_dims, int(proj_dims))
        else:
            self.visual_proj = None
        embeddings = load_text_embeddings(text_embeddings)
        out_dims = proj_dims if proj_dims is not None else embed_dims
        if out_dims is not None and embeddings.shape[1] != out_dims:
            raise ValueError(
                f'the text embeddings have {embeddings.shape[1]} dims but '
                f'the image embeddings {out_dims}: use the text encoder of '
                'the same CLIP model (and set proj_dims to its joint '
                'embedding size)')
        self.register_buffer('text_embeddings', embeddings, persistent=False)
        if checkpoint is not None:
            self.load_weights(checkpoint)
        self.requires_grad_(False)
        self.eval()

    @property
    def num_classes(self) -> int:
        return int(self.text_embeddings.shape[0])

    def load_weights(self, checkpoint: str) -> None:
        """Load the encoder and projection from the ``visual.*`` and
        ``visual_proj.*`` entries of ``checkpoint`` (strictly: a missing,
        extra or misshapen one raises).

        Args:
            checkpoint (str): A path or URL that MMEngine's
                ``CheckpointLoader`` reads.
        """
        loaded = CheckpointLoader.load_checkpoint(
            checkpoint, map_location='cpu')
        state = loaded.get('state_dict', loaded) if isinstance(loaded,
                                                               dict) else None
        if not isinstance(state, dict):
            raise TypeError(f'{checkpoint} holds no state dict')
        wanted = {
            k: v
            for k, v in state.items()
            if k.startswith(('visual.', 'visual_proj.'))
        }
        own = self.state_dict()
        missing = sorted(set(own) - set(wanted))
        unexpected = sorted(set(wanted) - set(own))
        if missing or unexpected:
            raise KeyError(
                f'{checkpoint} does not fit the image encoder: missing '
                f'{missing[:5]}{"..." if len(missing) > 5 else ""}, '
                f'unexpected {unexpected[:5]}'
                f'{"..." if len(unexpected) > 5 else ""} (expected the '
                "keys of MMPretrain's CLIP: visual.* and visual_proj.proj, "
                'as tools/model_converters/openai-clip_to_mmpretrain-clip.py '
                'of MMPretrain writes them; proj_dims must be set when the '
                'checkpoint has a projection)')
        self.load_state_dict(wanted, strict=True)

    def _resize(self, images: Tensor) -> Tensor:
        if tuple(images.shape[-2:]) == self.input_size:
            return images
        return F.interpolate(
            images,
            size=self.input_size,
            mode=self.interpolation,
            align_corners=False,
            antialias=True)

    def views(self, inputs: Tensor) -> List[Tensor]:
        """The whole images, then the tiles in row-major order, each
        ``(N, 3, *input_size)`` float32 RGB (not normalised)."""
        if inputs.dim() != 4 or inputs.size(1) != 3:
            raise ValueError('inputs must be (N, 3, H, W) images, got shape '
                             f'{tuple(inputs.shape)}')
        images = inputs.to(self.mean.device, torch.float32)
        if self.to_rgb:
            images = images.flip(1)
        views = [self._resize(images)]
        if self.tiles is not None:
            rows, cols = self.tiles
            height, width = images.shape[-2] // rows, images.shape[-1] // cols
            if height < 1 or width < 1:
                raise ValueError(
                    f'{tuple(images.shape[-2:])} images are too small for '
                    f'{rows} x {cols} tiles')
            for i in range(rows):
                for j in range(cols):
                    views.append(
                        self._resize(images[..., i * height:(i + 1) * height,
                                            j * width:(j + 1) * width]))
        return views

    def class_probabilities(self, images: Tensor) -> Tensor:
        """``(N, C)`` softmax of the scaled cosine similarities of RGB
        images of ``input_size`` (0-255, not normalised)."""
        features = self.visual((images - self.mean) / self.std)
        if isinstance(features, (tuple, list)):
            features = features[-1]
        if features.dim() != 2:
            raise ValueError(
                'the image encoder must give (N, D) embeddings (e.g. the '
                "class token: VisionTransformer's out_type='cls_token'), "
                f'got shape {tuple(features.shape)}')
        if self.visual_proj is not None:
            features = self.visual_proj(features)
        features = F.normalize(features.float(), dim=-1)
        logits = self.logit_scale * features @ self.text_embeddings.t()
        return logits.softmax(dim=-1)

    @torch.no_grad()
    def score(self,
              inputs: Tensor,
              observed: Optional[Tensor] = None) -> Tensor:
        views = self.views(inputs)
        probs = self.class_probabilities(torch.cat(views)).view(
            len(views), inputs.size(0), self.num_classes)
        if self.tiles is None:
            return probs[0]
        return combine_tiles(probs[0], probs[1:], self.tile_combine, self.eta,
                             observed)
