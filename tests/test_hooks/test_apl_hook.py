"""APLHook: its arguments, and a warm-up that leaves no epoch to
pseudo-label."""
import numpy as np
import pytest
from conftest import case, train_tiny

from mmlml.hooks import APLHook

NAN = float('nan')

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=0), ValueError,
         r'warmup_epochs must be an integer >= 1, got 0', 0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=2.0),
         ValueError, r'warmup_epochs must be an integer >= 1, got 2\.0', 2.0),
    case('apl-hook-warmup-bad', lambda t: APLHook(warmup_epochs=True),
         ValueError, r'warmup_epochs must be an integer >= 1, got True', True),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=0), ValueError,
         r'theta must lie in \(0, 1\], got 0', 0),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=1.5), ValueError,
         r'theta must lie in \(0, 1\], got 1\.5', 1.5),
    case('apl-hook-theta-bad', lambda t: APLHook(theta=NAN), ValueError,
         r'theta must lie in \(0, 1\], got nan', 'nan'),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    hook = APLHook(warmup_epochs=np.int64(3), theta=np.float32(0.5))
    assert (hook.warmup_epochs, hook.theta) == (3, 0.5)
    assert type(hook.warmup_epochs) is int


def test_warmup_ge_max_epochs_refused(tiny_train):
    """apl-hook-warmup-ge-max-epochs: a warm-up as long as the training
    refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'APLHook: warmup_epochs=2 leaves no epoch to '
            r'pseudo-label in 2 epochs'):
        train_tiny(tiny_train, dict(type='EMAPLLoss', alpha=0.2, beta=0.5),
                   dict(type='APLHook', warmup_epochs=2))
