"""The argument parser of a tool, described by the tool's own docstring."""
import argparse
import os.path as osp
import re

__all__ = ['tool_parser', 'check_checkout']


def tool_parser(doc: str, **kwargs) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` whose description (the head of ``--help``) is
    the first paragraph of ``doc``, the tool's module docstring, on one
    line: a tool says what it does once.

    Args:
        doc (str): The tool's ``__doc__``.
        **kwargs: Other arguments of ``argparse.ArgumentParser``
            (``epilog`` ...).

    Examples:
        >>> tool_parser('Plot the curves\\nof a run.\\n\\nMore.').description
        'Plot the curves of a run.'
    """
    if not doc or not doc.strip():
        raise ValueError('a tool needs a docstring: its first paragraph is '
                         'the description of its --help')
    first = doc.strip().split('\n\n')[0]
    description = ' '.join(first.replace('``', '').split())
    return argparse.ArgumentParser(
        description=re.sub(r'::$', '.', description), **kwargs)


def check_checkout(tool_file: str) -> None:
    """Refuse a tool that lies in another checkout than the mmlml it
    imports (a second clone run with the first one installed): the tools
    that read the checkout's configs, presets and trainer would read the
    installed checkout's, beside another version of their code.

    Raises:
        ValueError: naming both checkouts and the fix.
    """
    import mmlml
    tool = osp.dirname(osp.dirname(osp.realpath(tool_file)))
    package = osp.dirname(osp.dirname(osp.realpath(mmlml.__file__)))
    # An installed package's own tools: mmlml/.mim/tools (setup.py).
    shipped = osp.join(osp.dirname(osp.realpath(mmlml.__file__)), '.mim')
    if tool != package and tool != shipped:
        raise ValueError(
            f'this tool lies in the checkout {tool}, but mmlml is imported '
            f'from the checkout {package}: run {package}/tools/'
            f'{osp.basename(tool_file)}, or make {tool} the one imported '
            f'(pip install -e {tool}, or PYTHONPATH={tool})')
