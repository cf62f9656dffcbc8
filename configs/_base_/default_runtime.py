# Runtime settings shared by mmlml configs (MMPretrain's defaults, with
# the mmlml plugin imported, the best checkpoint kept by validation mAP, and
# mmlml's check of the training setup before the first iteration).
custom_imports = dict(imports=['mmlml'], allow_failed_imports=False)
default_scope = 'mmpretrain'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(
        type='CheckpointHook',
        interval=1,
        max_keep_ckpts=1,
        save_best='multi-label/mAP',
        rule='greater'),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='VisualizationHook', enable=False),
    # Settings that disagree (class counts, a stock loss on observed
    # negatives, epochs without a batch) fail with a clear error.
    setup_check=dict(type='TrainingSetupCheckHook'),
    # A resumed checkpoint must come from this run: model, per-sample state
    # and partial labels.
    resume_check=dict(type='ResumeCheckHook'),
    # Checkpoints keep the random generators: a resumed run draws the
    # random augmentation of the uninterrupted one.
    random_state=dict(type='RandomStateHook'),
    # model_card.md in the work directory: config, data, metrics,
    # commands, versions (docs/inference.md).
    model_card=dict(type='ModelCardHook'),
)

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)

vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='UniversalVisualizer', vis_backends=vis_backends)

log_level = 'INFO'
load_from = None
resume = False
randomness = dict(seed=None, deterministic=False)
