"""The tiny CLIP of the pseudo-labeller tests: the package's random tiny
CLIP (``mmlml.pseudo_labellers.tiny_clip``, also written by
``tools/write_tiny_clip.py``)."""
from mmlml.pseudo_labellers.tiny_clip import (PROJ_DIMS, TINY_ENCODER,
                                              write_tiny_clip)

__all__ = ['TINY_ENCODER', 'PROJ_DIMS', 'write_tiny_clip']
