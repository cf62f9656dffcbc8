"""What training code and the tools call on a trained model (MMPretrain's
name for it): build it from a config and a checkpoint, find the pipeline
that feeds it, score every sample of a dataset with it."""
from .model_scores import build_model, find_pipeline, predict_scores

__all__ = ['build_model', 'find_pipeline', 'predict_scores']
