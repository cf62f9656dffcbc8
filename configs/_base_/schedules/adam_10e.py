# The single-positive protocol of Cole et al. (CVPR 2021), reused by the
# EM + APL, Large Loss, GR and LASD papers: Adam with PyTorch's default
# betas, no weight decay, a constant learning rate, 10 epochs of
# end-to-end fine-tuning, validation after every epoch (the checkpoint
# hook keeps the epoch with the best validation mAP). Each method's config
# sets the learning rate and batch size its paper used.
optim_wrapper = dict(
    optimizer=dict(type='Adam', lr=1e-5, betas=(0.9, 0.999), weight_decay=0.))

# A constant learning rate.
param_scheduler = []

train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()

# The learning rates are the papers' for their batch size on one GPU. On
# more GPUs, `--auto-scale-lr` scales the learning rate linearly with the
# total batch size (`tools/train.py`, `tools/dist_train.sh`).
auto_scale_lr = dict(base_batch_size=8, enable=False)
