"""What training code and the tools call on a trained model (MMPretrain's
name for it): build it from a config and a checkpoint, find the pipeline
that feeds it, score every sample of a dataset with it, find its class
names, check that a config builds the model its checkpoint was trained as,
export it to ONNX (``onnx`` and ``onnxruntime`` are imported by the
export only)."""
from .class_names import class_names
from .model_scores import build_model, find_pipeline, predict_scores
from .onnx_export import OnnxExportError, export_onnx, input_size_of
from .trained_model import check_trained_model

__all__ = [
    'build_model', 'check_trained_model', 'class_names', 'export_onnx',
    'find_pipeline', 'input_size_of', 'OnnxExportError', 'predict_scores'
]
