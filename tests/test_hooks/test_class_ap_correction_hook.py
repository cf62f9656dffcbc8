"""ClassAPCorrectionHook: its arguments, and a warm-up that leaves no
epoch trained on corrected labels."""
import numpy as np
import pytest
from conftest import case, train_tiny

from mmlml.hooks import ClassAPCorrectionHook

NAN = float('nan')

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('class-ap-hook-warmup-bad',
         lambda t: ClassAPCorrectionHook(warmup_epochs=-1), ValueError,
         r'warmup_epochs must be an integer >= 1, got -1'),
    case('class-ap-hook-delta-bad', lambda t: ClassAPCorrectionHook(delta=NAN),
         ValueError, r'delta must be a finite real number, got nan', 'nan'),
    case('class-ap-hook-delta-bad',
         lambda t: ClassAPCorrectionHook(delta=-0.1), ValueError,
         r'delta must lie in \[0, inf\], got -0\.1', -0.1),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    assert ClassAPCorrectionHook(warmup_epochs=np.int32(2)).warmup_epochs == 2


def test_warmup_ge_max_epochs_refused(tiny_train):
    """class-ap-hook-warmup-ge-max-epochs: a warm-up as long as the
    training refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'ClassAPCorrectionHook: warmup_epochs=3 leaves no epoch '
            r'trained on corrected labels in 2 epochs'):
        train_tiny(
            tiny_train,
            dict(type='LossSum', losses=[dict(type='OPMLSPLoss', rho=0.5)]),
            dict(type='ClassAPCorrectionHook', warmup_epochs=3))
