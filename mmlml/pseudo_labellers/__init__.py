"""Pseudo-labellers: frozen models that score every class of the training
images before training (a CLIP image encoder against class text
embeddings, as VLPL and AEVLP do, or a classifier trained earlier), the
scoring of a whole dataset (sharded, resumable) and the thresholds that
turn scores into the pseudo-labels of the label store."""
from .base_pseudo_labeller import BasePseudoLabeller
from .clip_pseudo_labeller import (CLIP_MEAN, CLIP_STD, TILE_COMBINES,
                                   CLIPPseudoLabeller, ImageProjection,
                                   combine_tiles, load_text_embeddings)
from .model_pseudo_labeller import ModelPseudoLabeller
from .scoring import (all_ranks_agree, default_chunk_size, load_scores,
                      parts_dir_of, remove_parts, save_scores, score_dataset)
from .thresholds import (PseudoLabels, check_threshold_arguments,
                         select_pseudo_labels)

__all__ = [
    'BasePseudoLabeller', 'CLIPPseudoLabeller', 'ModelPseudoLabeller',
    'ImageProjection', 'combine_tiles', 'load_text_embeddings', 'CLIP_MEAN',
    'CLIP_STD', 'TILE_COMBINES', 'score_dataset', 'default_chunk_size',
    'load_scores', 'save_scores', 'parts_dir_of', 'remove_parts',
    'all_ranks_agree', 'PseudoLabels', 'check_threshold_arguments',
    'select_pseudo_labels'
]
