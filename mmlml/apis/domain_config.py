"""A demo config parsed in a domain: the demo configs choose their data
and backbone by ``{{$MMLML_DEMO_DOMAIN:synthetic_shapes}}`` in their
``_base_``, which MMEngine reads from the environment while it parses a
file, and only then. :func:`load_config` takes the domain as an argument
and sets the variable for that parse alone, under a lock, putting the
previous value back as soon as the parse ends: nothing started later
(a run, a subprocess) inherits it.
"""
import contextlib
import os
import threading
from typing import Iterator, Optional

from mmengine.config import Config

__all__ = ['DOMAIN_VARIABLE', 'load_config']

#: The environment variable of the demo configs' domain
#: (``{{$MMLML_DEMO_DOMAIN:synthetic_shapes}}`` in their ``_base_``).
DOMAIN_VARIABLE = 'MMLML_DEMO_DOMAIN'

_PARSING = threading.Lock()


@contextlib.contextmanager
def _domain_parse(domain: Optional[str]) -> Iterator[None]:
    """While a config is parsed: the domain variable set to ``domain``
    (MMEngine substitutes ``{{$VAR:default}}`` from the environment while
    it reads a file, and only then); the previous value is back as soon
    as the parse ends, so nothing started later inherits it."""
    if domain is None:
        yield
        return
    with _PARSING:
        previous = os.environ.get(DOMAIN_VARIABLE)
        os.environ[DOMAIN_VARIABLE] = domain
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(DOMAIN_VARIABLE, None)
            else:
                os.environ[DOMAIN_VARIABLE] = previous


def load_config(config: str,
                cfg_options: Optional[dict] = None,
                domain: Optional[str] = None) -> Config:
    """The config at ``config`` in ``domain`` (None: the caller's
    environment decides, as for ``tools/train.py``), with ``cfg_options``
    merged: the one place where a config is parsed in a domain
    (the demo configs name theirs as ``{{$MMLML_DEMO_DOMAIN:...}}``, which
    MMEngine reads from the environment during the parse only)."""
    with _domain_parse(domain):
        cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    return cfg
