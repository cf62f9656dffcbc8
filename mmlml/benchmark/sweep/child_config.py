"""A config written as a short child of another config file: ``_base_`` is
the parent's file and the body is only what differs, so that the reader
sees the changes (``tools/select_method.py``: a method and the point
chosen for it over the user's own config) and later edits of the parent
carry over.

The body is the difference of two loaded configs under MMEngine's merge
rules (:func:`config_diff`); the written file is read back and compared
with the config it stands for, and where MMEngine's merge cannot express
the difference the whole config is written instead.
"""
import os
import os.path as osp
import tempfile
from typing import List

from mmengine.config import Config

from mmlml.compat.stack_repairs import readable_text

__all__ = ['config_diff', 'child_config_text']

#: MMEngine's key for "replace this dict instead of merging into it".
DELETE = '_delete_'


def config_diff(parent: dict, child: dict) -> dict:
    """The entries of a child config file that turn ``parent`` into
    ``child`` (plain nested dicts) under MMEngine's merge: a changed value
    or list whole, a dict merged key by key, a dict that loses keys (or
    replaces a value that is no dict) with ``_delete_=True`` and all its
    keys. (A top-level key that ``child`` lacks cannot be removed: the
    child sets it to None.)"""
    diff = {}
    for key, value in child.items():
        if key not in parent:
            diff[key] = value
        elif isinstance(value, dict):
            old = parent[key]
            if not isinstance(old, dict) or set(old) - set(value):
                diff[key] = {DELETE: True, **value}
            else:
                inner = config_diff(old, value)
                if inner:
                    diff[key] = inner
        elif type(value) is not type(parent[key]) or value != parent[key]:
            diff[key] = value
    return diff


def _top_level_removed(parent: dict, child: dict) -> dict:
    return {key: None for key in parent if key not in child}


def child_config_text(parent_file: str, child: Config, out: str,
                      comments: List[str]) -> str:
    """The text of a config file at ``out`` whose base is ``parent_file``
    and whose body makes it ``child`` (``comments`` first, one line
    each); the whole of ``child`` where the short form does not load back
    as ``child``."""
    parent = Config.fromfile(parent_file).to_dict()
    target = child.to_dict()
    diff = config_diff(parent, target)
    removed = _top_level_removed(parent, target)
    diff.update(removed)
    base = osp.relpath(osp.abspath(parent_file), osp.dirname(osp.abspath(out)))
    header = ''.join(f'# {line}\n' for line in comments)
    text = header + f'_base_ = [{base!r}]\n'
    if diff:
        text += '\n' + readable_text(Config(diff))
    folder = osp.dirname(osp.abspath(out))
    os.makedirs(folder, exist_ok=True)
    with tempfile.NamedTemporaryFile(
            'w', suffix='.py', dir=folder, delete=False) as f:
        f.write(text)
    try:
        loaded = Config.fromfile(f.name).to_dict()
        same = {k: v for k, v in loaded.items() if k not in removed} == target
    except Exception:  # a difference MMEngine's merge cannot express
        same = False
    finally:
        os.remove(f.name)
    if same:
        return text
    return header + '# (the whole config: MMEngine cannot merge its ' \
        'changes into the base)\n' + readable_text(child)
