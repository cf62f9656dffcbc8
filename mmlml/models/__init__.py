from .losses import *  # noqa: F401,F403
from .losses import __all__  # noqa: F401
