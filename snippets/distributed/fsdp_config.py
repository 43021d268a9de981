"""Translate a Composer-style fsdp_config into the torch objects it implies, and see a bad key refused."""

# --8<-- [start:example]
from gpukb.distributed.fsdp_config import plan

config = {
    "mixed_precision": "PURE",
    "activation_checkpointing": True,
    "activation_checkpointing_reentrant": False,
}
p = plan(config, precision="amp_bf16")
print("FSDP2 mp_policy:", p.mp_policy())
print("FSDP1 mixed_precision:", p.fsdp1_kwargs()["mixed_precision"].buffer_dtype, "buffers")
print("checkpoint_impl:", p.checkpoint_impl())
print("reshard_after_forward:", p.reshard_after_forward)
print("mesh for 8 ranks, 2 replicas:", plan(config, data_parallel_replicate_degree=2).mesh_shape(8))
try:
    plan({"mixed_precison": "PURE"})
except ValueError as err:
    print("error:", err)
# --8<-- [end:example]
