"""Whether a config builds the model its checkpoint was trained as.

A checkpoint of one head loads strictly into the model of another config
when their parameters share names and shapes (BoostLU's activation-map
head and the plain linear head both hold ``head.fc``), and the tools would
then predict with the wrong head, silently. MMEngine saves the training
config's text in the checkpoint (``meta['cfg']``); its model's parts are
read from that text as data (Python's parser, nothing executed) and
compared with the config's.
"""
import ast
from typing import Dict, Optional

__all__ = ['MODEL_PARTS', 'trained_model_types', 'check_trained_model']

#: The parts of a model whose ``type`` must agree.
MODEL_PARTS = ('model', 'backbone', 'neck', 'head')


def _short(name: str) -> str:
    """A registered type without its scope (``mmpretrain.ResNet``)."""
    return name.rsplit('.', 1)[-1]


def _types_of(call: ast.Call) -> Dict[str, str]:
    """The string ``type`` of a ``dict(...)`` call and of its parts."""
    types = {}
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == 'type' and isinstance(value, ast.Constant) \
                and isinstance(value.value, str):
            types['model'] = _short(value.value)
        elif keyword.arg in MODEL_PARTS[1:] and isinstance(value, ast.Call):
            part = _types_of(value).get('model')
            if part is not None:
                types[keyword.arg] = part
    return types


def trained_model_types(cfg_text: object) -> Dict[str, str]:
    """``{part: type}`` of the ``model = dict(...)`` in a saved config's
    text (:data:`MODEL_PARTS` found there); empty when the text is not
    such a config."""
    if not isinstance(cfg_text, str):
        return {}
    try:
        tree = ast.parse(cfg_text)
    except (SyntaxError, ValueError):
        return {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == 'model'
                and isinstance(node.value, ast.Call)):
            return _types_of(node.value)
    return {}


def _config_types(model_cfg) -> Dict[str, str]:
    types = {}
    for part in MODEL_PARTS:
        spec = model_cfg if part == 'model' else model_cfg.get(part)
        kind = spec.get('type') if isinstance(spec, dict) else None
        if isinstance(kind, str):
            types[part] = _short(kind)
    return types


def check_trained_model(model_cfg,
                        checkpoint: dict,
                        config: Optional[str] = None,
                        path: Optional[str] = None) -> None:
    """Refuse a checkpoint trained as another model than ``model_cfg``.

    Args:
        model_cfg (dict): The config's ``model``.
        checkpoint (dict): The loaded checkpoint; without a saved config
            (``meta['cfg']``: weights from elsewhere) nothing is checked.
        config (str, optional): The config's path, for the message.
        path (str, optional): The checkpoint's path, for the message.

    Raises:
        ValueError: A part (model, backbone, neck, head) of another type,
            in one line naming both.
    """
    meta = checkpoint.get('meta') if isinstance(checkpoint, dict) else None
    trained = trained_model_types((meta or {}).get('cfg'))
    built = _config_types(model_cfg)
    differ = [
        part for part in MODEL_PARTS
        if part in trained and part in built and trained[part] != built[part]
    ]
    if differ:
        was = ', '.join(f'{part} {trained[part]}' for part in differ)
        now = ', '.join(f'{part} {built[part]}' for part in differ)
        checkpoint_name = f'The checkpoint {path}' if path else \
            'The checkpoint'
        config_name = f'the config {config}' if config else 'the config'
        raise ValueError(
            f'{checkpoint_name} was trained as {was}, but {config_name} '
            f'builds {now}: its weights load, and its predictions would be '
            "another model's. Pass the config it was trained with (its work "
            'dir keeps a copy).')
