# Zhou et al.'s runs of the baselines ("Acknowledging the Unknown for
# Multi-label Learning with Single Positive Labels", ECCV 2022, Table 1):
# what the recipes of the configs of configs/baselines/ that mirror their
# numbers share: ./baseline_an.py (AN and full labels), ./baseline_dw.py,
# ./baseline_an_ls.py and ./baseline_role.py. Protocol, optimiser, batch
# size, lr and loss scale: ./baseline_protocol.py.
# - Early stopping as in Zhou et al. (Sec. 4.1, "early stopping is performed
#   when mAP on the validation set descends", and their code): training
#   stops after the first epoch whose validation mAP does not improve, and
#   the best epoch seen is tested.
# - Seed: none (randomness.seed=None). Zhou et al.'s code seeds torch with 0,
#   1 and 8 for its three runs (randomness.seed=0 mirrors the first); Cole et
#   al. do not seed torch.
# - NUS-WIDE: Zhou et al.'s images are not those the dataset base reads (see
#   the nuswide configs).
_base_ = './baseline_protocol.py'

custom_hooks = [
    dict(
        type='EarlyStoppingHook',
        monitor='multi-label/mAP',
        rule='greater',
        min_delta=0.,
        patience=1),
]
