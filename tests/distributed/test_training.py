"""The training loop without a process group: plain training of the tiny model, and the checkpointing choice."""

from __future__ import annotations

import pytest
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, CheckpointWrapper

from gpukb.distributed.fsdp_config import plan
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.training import build, checkpointing_of, train


def test_plain_training_lowers_the_loss() -> None:
    result = train(ModelConfig.tiny(), None, "non-reentrant", batch=2, steps=2, warmup=0, repeats=1)
    first, last = result.losses
    assert 0 < last < first
    assert result.tokens_per_repeat == 2 * 2 * ModelConfig.tiny().seq
    assert len(result.tokens_per_s) == 1
    assert result.peak_bytes == result.activation_bytes == 0  # measured on CUDA only


def test_checkpointing_follows_the_plan() -> None:
    assert checkpointing_of(None) == checkpointing_of(plan()) == "none"
    assert checkpointing_of(plan(activation_checkpointing=True)) == "reentrant"
    model = build(ModelConfig.tiny(), None, "reentrant")
    assert all(isinstance(b, CheckpointWrapper) for b in model.blocks)
    assert {b.checkpoint_impl for b in model.blocks} == {CheckpointImpl.REENTRANT}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"checkpointing": "always"}, "unknown checkpointing 'always'"),
        ({"batch": 0}, "batch must be an int ≥ 1"),
        ({"autocast": "float8"}, "unknown autocast 'float8'"),
    ],
)
def test_bad_input(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        train(ModelConfig.tiny(), **kwargs)
