"""Reading the annotation files of the dataset classes, with errors that
name the file."""
import json
import os.path as osp
from typing import Any, List

__all__ = [
    'check_file', 'read_lines', 'quote', 'load_annotation', 'refuse_pickle',
    'file_format', 'SAFE_FORMATS', 'PICKLE_EXTENSIONS'
]

#: The formats :func:`load_annotation` reads, by file extension: parsers
#: that build plain values only (no Python objects, no code).
SAFE_FORMATS = {'.json': 'JSON', '.yaml': 'YAML', '.yml': 'YAML'}
#: Extensions of pickle files, refused: unpickling can run any code.
PICKLE_EXTENSIONS = ('.pkl', '.pickle', '.pk')


def check_file(path: str, what: str) -> None:
    """Raise ``FileNotFoundError`` naming ``what`` and ``path`` if ``path``
    is not a file."""
    if not osp.isfile(path):
        raise FileNotFoundError(f'{what} {path!r} does not exist.')


def read_lines(path: str, what: str) -> List[str]:
    """The lines of a text file, without line ends (a byte order mark and
    Windows line ends are accepted) and without the empty lines at its
    end."""
    check_file(path, what)
    with open(path, encoding='utf-8-sig') as f:
        lines = f.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def quote(entry: Any, limit: int = 120) -> str:
    """An entry of an annotation file as an error message quotes it."""
    text = repr(entry)
    return text if len(text) <= limit else text[:limit] + '...'


def file_format(path: Any) -> str:
    """The format ``mmengine.load`` reads ``path`` in, as an extension:
    the text after the last dot of the whole path, lower-cased, with a
    leading dot (``''`` without a dot).

    This is MMEngine's rule (``file.split('.')[-1]``), not
    ``os.path.splitext``'s: a file named ``.pkl`` has no extension for
    ``splitext`` but is unpickled by ``mmengine.load``, so every check of
    a file that MMEngine may load decides by this function.

    Example:
        >>> file_format('ann/.pkl'), file_format('a.b/x.JSON')
        ('.pkl', '.json')
    """
    text = str(path)
    return '.' + text.rsplit('.', 1)[1].lower() if '.' in text else ''


def _formats() -> str:
    """The formats :func:`load_annotation` reads, as errors list them."""
    return ', '.join(f'{name} ({ext})' for ext, name in SAFE_FORMATS.items())


def refuse_pickle(path: Any, what: str = 'The annotation file') -> None:
    """Refuse ``path`` if its format (:func:`file_format`, the rule of
    ``mmengine.load``) is a pickle's (``.pkl``, ``.pickle``, ``.pk``, any
    case), before anything reads it: unpickling (as
    ``mmengine.load`` does for these extensions) can run any code the file
    names.

    Raises:
        ValueError: ``path`` is a pickle, naming it and the formats to
            convert it to.
    """
    if file_format(path) not in PICKLE_EXTENSIONS:
        return
    raise ValueError(
        f'{what} {str(path)!r} is a pickle file: loading a pickle can run any '
        'code it names, so it is refused. Annotation files are read in '
        f'{_formats()}. Convert a file you trust once, in a session you '
        "allow to run its code: mmengine.dump(mmengine.load('x.pkl'), "
        "'x.json').")


def load_annotation(path: str, what: str = 'The annotation file') -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``, ``.yml``) annotation
    file with a safe parser (``json.loads``, ``yaml.safe_load``), from a
    local path or any URI MMEngine's file backends read.

    Raises:
        ValueError: ``path`` is a pickle (``.pkl``, ``.pickle``): loading
            one can run any code it names, so it is refused; or another
            format; or a file that does not parse.
    """
    refuse_pickle(path, what)
    extension = file_format(path)
    if extension not in SAFE_FORMATS:
        raise ValueError(f'{what} {path!r} has the extension '
                         f'{extension or "(none)"!r}: annotation files are '
                         f'read in {_formats()}.')
    if '://' in path:  # MMEngine's file backends (http, s3, ...)
        from mmengine.fileio import get_text
        text = get_text(path)
    else:
        check_file(path, what)
        with open(path, encoding='utf-8-sig') as f:
            text = f.read()
    try:
        if SAFE_FORMATS[extension] == 'JSON':
            return json.loads(text)
        import yaml
        return yaml.safe_load(text)
    except ValueError as error:  # json.JSONDecodeError
        raise ValueError(f'{what} {path!r} cannot be parsed: '
                         f'{error}.') from error
    except Exception as error:  # yaml.YAMLError (incl. python/ tags)
        if type(error).__module__.startswith('yaml'):
            raise ValueError(f'{what} {path!r} cannot be parsed as safe '
                             f'YAML (plain values only): {error}') from error
        raise
