"""FSDP options and distributed training: Composer's ``fsdp_config`` translated to torch objects
(:mod:`~gpukb.distributed.fsdp_config`), a memory calculator (:mod:`~gpukb.distributed.memory`), collectives
simulated and benchmarked (:mod:`~gpukb.distributed.collectives`), activation checkpointing measured
(:mod:`~gpukb.distributed.checkpointing`), the measured transformer (:mod:`~gpukb.distributed.model`,
:mod:`~gpukb.distributed.training`)."""
