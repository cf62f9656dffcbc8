from . import backbones  # noqa: F401,E402
from . import classifiers  # noqa: F401,E402
from . import heads  # noqa: F401,E402
from .losses import *  # noqa: F401,F403
from .losses import __all__  # noqa: F401
