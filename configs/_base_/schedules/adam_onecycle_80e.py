# The training recipe of Zhang et al. ("Simple and Robust Loss Design for
# Multi-Label Learning with Missing Labels", Hill / SPLC; official code
# xinyu1205/robust-loss-mlml, train.py, built on ASL's), which the Hill
# paper's tables use for every loss:
#
# - Adam, lr 1e-4, PyTorch's betas with beta1 cycled (below), weight decay
#   1e-4 as coupled L2 (torch's Adam `weight_decay`, not AdamW) on weights
#   only: the official `add_weight_decay` exempts biases and every 1-D
#   parameter (BatchNorm/LayerNorm), here `bias_decay_mult`,
#   `norm_decay_mult` and `flat_decay_mult` = 0.
# - torch's OneCycleLR(max_lr=1e-4, epochs=80, pct_start=0.2) stepped
#   every iteration, with torch's defaults: div_factor 25 (start at 4e-6),
#   final_div_factor 1e4, cosine annealing, two phases. Training stops
#   after 31 of the 80 scheduled epochs (the official loop breaks when the
#   0-based epoch exceeds 30), so the learning rate is still about 0.87 x
#   1e-4 at the end.
# - torch's OneCycleLR also cycles Adam's beta1 (cycle_momentum=True):
#   0.95 -> 0.85 while the learning rate rises, 0.85 -> 0.95 while it
#   falls, cosine. MMEngine's OneCycleLR schedules the learning rate only,
#   so two CosineAnnealingMomentum schedulers do it (MMEngine's momentum
#   schedulers set betas[0] of Adam). The learning rate equals torch's at
#   every iteration; beta1 differs by less than 1e-5 with COCO's 642
#   iterations per epoch (the two cosines are indexed slightly
#   differently), checked against torch's OneCycleLR.
# - Mixed precision (torch.cuda.amp autocast + a dynamic GradScaler in the
#   official code): `AmpOptimWrapper` (its default loss scale is dynamic),
#   which needs CUDA (or NPU/MLU). On a CPU, train in fp32 with
#   `--cfg-options optim_wrapper.type=OptimWrapper`.
# - Model EMA with decay 0.9997 over the whole state dict (buffers too),
#   updated every iteration: MMEngine's `momentum` is 1 - decay. The
#   official code validates the regular and the EMA model after every
#   epoch and keeps the epoch with the higher of the two mAPs.
#   MMPretrain's EMAHook with `evaluate_on_origin=True` evaluates both too:
#   the EMA model's metrics are the main ones (`multi-label/mAP`, which
#   selects the best checkpoint), the regular model's are logged with the
#   suffix `_origin`. The best-checkpoint rule therefore follows the EMA
#   model only; the regular model's mAP is in the log to compare.
# - Validation after every epoch.
optim_wrapper = dict(
    type='AmpOptimWrapper',
    optimizer=dict(
        type='Adam', lr=1e-4, betas=(0.95, 0.999), weight_decay=1e-4),
    paramwise_cfg=dict(
        norm_decay_mult=0., bias_decay_mult=0., flat_decay_mult=0.))

# Iteration-wise schedules defined in epochs (converted with the length of
# the training loader), over the 80 scheduled epochs.
scheduled_epochs = 80
param_scheduler = [
    # ScaledOneCycleLR: MMEngine's OneCycleLR with its peak (eta_max) taken
    # from optimizer.lr, so that --auto-scale-lr scales both.
    dict(
        type='ScaledOneCycleLR',
        pct_start=0.2,
        div_factor=25.,
        final_div_factor=1e4,
        anneal_strategy='cos',
        three_phase=False,
        by_epoch=True,
        convert_to_iter_based=True,
        begin=0,
        end=scheduled_epochs),
    # beta1 0.95 -> 0.85 over the rising phase (20% of 80 epochs) ...
    dict(
        type='CosineAnnealingMomentum',
        eta_min=0.85,
        by_epoch=True,
        convert_to_iter_based=True,
        begin=0,
        end=16),
    # ... and back to 0.95 over the falling phase.
    dict(
        type='CosineAnnealingMomentum',
        eta_min=0.95,
        by_epoch=True,
        convert_to_iter_based=True,
        begin=16,
        end=scheduled_epochs),
]

train_cfg = dict(by_epoch=True, max_epochs=31, val_interval=1)
val_cfg = dict()
test_cfg = dict()

custom_hooks = [
    dict(
        type='EMAHook',
        momentum=0.0003,
        update_buffers=True,
        evaluate_on_ema=True,
        evaluate_on_origin=True,
        priority='ABOVE_NORMAL')
]

# The learning rate is the paper's for a batch of 128 images per step.
# ScaledOneCycleLR takes its peak from `optim_wrapper.optimizer.lr`, so
# `--auto-scale-lr` scales the whole schedule (MMEngine's OneCycleLR keeps
# its own `eta_max`).
auto_scale_lr = dict(base_batch_size=128, enable=False)
