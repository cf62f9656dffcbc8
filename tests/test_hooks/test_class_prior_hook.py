"""ClassPriorHook: a warm-up that leaves no epoch trained with the
estimated priors."""
import pytest
from conftest import train_tiny


def test_warmup_ge_max_epochs_refused(tiny_train):
    """class-prior-hook-warmup-ge-max-epochs: a warm-up as long as the
    training refuses to start."""
    with pytest.raises(
            ValueError,
            match=r'ClassPriorHook: warmup_epochs=2 leaves no epoch trained '
            r'with the estimated priors in 2 epochs'):
        train_tiny(tiny_train, dict(type='CRISPLoss'),
                   dict(type='ClassPriorHook', warmup_epochs=2))
