"""The argument parser of a tool, described by the tool's own docstring."""
import argparse
import re

__all__ = ['tool_parser']


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
