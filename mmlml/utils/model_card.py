"""The model card of a training run: ``model_card.md`` in its work
directory, a markdown file of ``## `` sections.

:class:`~mmlml.hooks.ModelCardHook` writes it at the end of training (what
was trained, on what, with which results and software); the steps after
training fill in their own section: ``tools/test.py`` (through the same
hook, when it tests a checkpoint of the directory) adds a block of test
metrics per test, ``tools/choose_thresholds.py`` replaces the thresholds.
This module only reads and writes the file; it knows nothing of runners.
"""
import os
import os.path as osp
import re
from typing import List, Optional, Sequence, Tuple

__all__ = [
    'MODEL_CARD', 'card_sections', 'write_model_card', 'update_model_card',
    'software_versions', 'source_commit'
]

#: The file name of a run's model card, in its work directory.
MODEL_CARD = 'model_card.md'

_HEADING = re.compile(r'^## (.+)$', re.MULTILINE)


def write_model_card(path: str, title: str,
                     sections: Sequence[Tuple[str, str]]) -> str:
    """Write a card: ``# title`` then one ``## heading`` and body per
    section, atomically (a reader never sees half a card). Returns
    ``path``."""
    text = f'# {title}\n'
    for heading, body in sections:
        text += f'\n## {heading}\n\n{body.strip()}\n'
    temporary = f'{path}.tmp{os.getpid()}'
    with open(temporary, 'w') as f:
        f.write(text)
    os.replace(temporary, path)
    return path


def _parts(text: str, heading) -> List[Tuple[str, str]]:
    """The ``(title, body)`` parts of ``text`` that start at each match of
    ``heading`` (a compiled pattern whose group 1 is the title)."""
    found = list(heading.finditer(text))
    ends = [match.start() for match in found[1:]] + [len(text)]
    return [(match.group(1).strip(), text[match.end():end].strip())
            for match, end in zip(found, ends)]


def card_sections(text: str) -> Tuple[str, List[Tuple[str, str]]]:
    """The title and the ``(heading, body)`` sections of a card's text."""
    title_match = re.match(r'# (.+)\n', text)
    title = title_match.group(1) if title_match else 'Model card'
    return title, _parts(text, _HEADING)


_BLOCK = re.compile(r'^### (.+)$', re.MULTILINE)


def _with_block(section: str, title: str, body: str) -> str:
    """``section`` with its ``### title`` block replaced by ``body`` (or
    appended); text before the first block (a placeholder) is dropped."""
    blocks = _parts(section, _BLOCK)
    names = [name for name, _ in blocks]
    if title in names:
        blocks[names.index(title)] = (title, body.strip())
    else:
        blocks.append((title, body.strip()))
    return '\n\n'.join(f'### {name}\n\n{text}' for name, text in blocks)


def update_model_card(directory: str,
                      heading: str,
                      body: str,
                      block: Optional[str] = None) -> Optional[str]:
    """Replace (or append) one section of the card in ``directory``; with
    ``block``, only the ``### block`` part of that section (the other
    blocks are kept: one per test, say).

    Returns:
        str or None: The card's path, None when ``directory`` holds no
        card (a checkpoint that did not come from an mmlml training run:
        nothing is created).
    """
    path = osp.join(directory, MODEL_CARD)
    if not osp.isfile(path):
        return None
    with open(path) as f:
        title, sections = card_sections(f.read())
    names = [name for name, _ in sections]
    if block is not None:
        old = sections[names.index(heading)][1] if heading in names else ''
        body = _with_block(old, block, body)
    if heading in names:
        sections[names.index(heading)] = (heading, body)
    else:
        sections.append((heading, body))
    return write_model_card(path, title, sections)


def software_versions() -> List[Tuple[str, str]]:
    """``(name, version)`` of Python, mmlml (and the git commit of its
    checkout, :func:`source_commit`) and the packages a run depends on; a
    package that is not installed is left out."""
    import platform
    from importlib import metadata

    from mmlml.version import __version__
    versions = [('python', platform.python_version()), ('mmlml', __version__)]
    commit = source_commit()
    if commit:
        versions.append(('mmlml source', commit))
    for package in ('torch', 'torchvision', 'mmengine', 'mmpretrain', 'mmcv',
                    'mmcv-lite', 'numpy'):
        try:
            versions.append((package, metadata.version(package)))
        except metadata.PackageNotFoundError:
            continue
    return versions


def source_commit() -> Optional[str]:
    """The git commit of the mmlml checkout the package runs from, with
    ``(with uncommitted changes)`` when its tracked files differ from it;
    None outside a git checkout (an installed wheel) or without git."""
    import subprocess
    folder = osp.dirname(osp.dirname(osp.abspath(__file__)))

    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(['git', '-C', folder, *args],
                                  capture_output=True,
                                  text=True,
                                  timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git('rev-parse', 'HEAD')
    if not commit:
        return None
    changed = git('status', '--porcelain', '--untracked-files=no')
    return f'{commit} (with uncommitted changes)' if changed else commit
