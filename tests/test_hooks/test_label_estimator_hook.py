"""LabelEstimatorHook: its arguments."""
import numpy as np
import pytest
from conftest import case

from mmlml.hooks import LabelEstimatorHook

#: Refused arguments (the case ids follow
#: ``tests/test_datasets/test_dataset_bad_input.py``).
ARGUMENT_CASES = [
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=1.5), ValueError,
         r'seed must be a non-negative integer or None, got 1\.5', 1.5),
    case('label-estimator-hook-seed-bad',
         lambda t: LabelEstimatorHook(seed=-3), ValueError,
         r'seed must be a non-negative integer or None, got -3', -3),
]


@pytest.mark.parametrize('make, error, match', ARGUMENT_CASES)
def test_arguments_refused(make, error, match, tmp_path):
    with pytest.raises(error, match=match):
        make(tmp_path)


def test_numpy_arguments_accepted():
    """hook-numpy-arguments: numpy numbers are numbers."""
    assert LabelEstimatorHook(seed=np.int64(4)).seed == 4
