"""Activation checkpointing, reentrant and non-reentrant, measured on the CPU.

:class:`LiveBytes` counts the bytes of every tensor storage an operation creates while it is alive (a
``TorchDispatchMode`` with a finalizer on each storage; torch keeps a storage's Python object alive as long as the
C++ storage lives, so the finalizer runs when the last reference, including autograd's saved copy, is gone).
:func:`measure` runs a forward and backward under it and reports the bytes held for backward after forward, the
peak, and how many times the checkpointed function ran.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from gpukb.arguments import choice

#: The three ways :func:`checkpointed` runs a function: no checkpoint, ``use_reentrant=True`` or ``False``.
IMPLS = ("none", "reentrant", "non-reentrant")


def _live_bytes_mode():
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class LiveBytes(TorchDispatchMode):
        """Bytes of storages created by operations inside the mode that are still alive, and their peak."""

        def __init__(self) -> None:
            super().__init__()
            self.live = 0
            self.peak = 0
            self._seen: set[int] = set()

        def _free(self, key: int, nbytes: int) -> None:
            self.live -= nbytes
            self._seen.discard(key)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            # an output that shares an input's storage (a view) is counted with that input, or not at all when the
            # input was made outside the mode (a parameter, the batch)
            inputs = {
                a.untyped_storage()._cdata
                for a in tree_flatten((args, kwargs))[0]
                if isinstance(a, torch.Tensor) and a.device.type != "meta"
            }
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.device.type != "meta":
                    storage = t.untyped_storage()
                    key = storage._cdata
                    if key in self._seen or key in inputs:
                        continue
                    self._seen.add(key)
                    self.live += storage.nbytes()
                    self.peak = max(self.peak, self.live)
                    weakref.finalize(storage, self._free, key, storage.nbytes())
            return out

    return LiveBytes


def live_bytes():
    """A new ``LiveBytes`` dispatch mode (use as a context manager; read ``.live`` and ``.peak``)."""
    return _live_bytes_mode()()


def checkpointed(fn: Callable, impl: str) -> Callable:
    """``fn`` run through ``torch.utils.checkpoint.checkpoint`` with ``use_reentrant`` set by ``impl``, or
    unchanged for ``"none"``."""
    from torch.utils.checkpoint import checkpoint

    choice("impl", impl, IMPLS)
    if impl == "none":
        return fn
    return lambda *args, **kwargs: checkpoint(fn, *args, use_reentrant=(impl == "reentrant"), **kwargs)


@dataclass(frozen=True)
class Measurement:
    """One forward+backward: bytes alive after forward (held for backward), peak bytes, forward calls."""

    impl: str
    after_forward: int
    peak: int
    forward_calls: int


def measure(module, x, impl: str, segments: int | None = None) -> Measurement:
    """Forward and backward of ``module`` (an ``nn.Sequential`` of blocks, each checkpointed when ``impl`` is
    not ``"none"``) on ``x``; counts every block's forward calls with a forward pre-hook."""
    import torch

    choice("impl", impl, IMPLS)
    calls = [0]
    handles = [m.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1)) for m in module]
    try:
        mode = live_bytes()
        with mode:
            h = x
            for block in module:
                h = checkpointed(block, impl)(h)
            loss = h.float().square().mean()
            after_forward = mode.live
            loss.backward()
            del h, loss
        return Measurement(impl, after_forward, mode.peak, calls[0])
    finally:
        for handle in handles:
            handle.remove()
        del torch


# --8<-- [start:default]
def default_behaviour() -> dict[str, object]:
    """What ``checkpoint(fn, x)`` does in the installed torch when ``use_reentrant`` is not passed: the warning's
    category and text (or the error's), and whether it then ran the reentrant variant (which refuses keyword
    arguments)."""
    import warnings

    import torch
    from torch.utils.checkpoint import checkpoint

    x = torch.ones(2, requires_grad=True)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            checkpoint(lambda t: t * 2, x)
        except Exception as e:  # a torch that refuses the call
            error = e
    if caught:
        category, message = type(caught[0].message).__name__, str(caught[0].message)
    elif error is not None:
        category, message = type(error).__name__, str(error)
    else:
        category = message = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            checkpoint(lambda t, scale: t * scale, x, scale=2.0)
            reentrant = False
        except ValueError:
            reentrant = True
    return {"torch": torch.__version__, "category": category, "message": message, "default_is_reentrant": reentrant}


# --8<-- [end:default]


def _outcome(fn: Callable[[], object]) -> str:
    try:
        return str(fn())
    except Exception as e:  # the outcome is the error, shown by its type and first words
        return f"{type(e).__name__}: {str(e).splitlines()[0][:60]}..."


def behaviours() -> tuple[list[str], list[list[str]]]:
    """Each behaviour in which the variants differ (or are said to), probed in the installed torch:
    ``(headers, rows)`` with the outcome under ``use_reentrant=True`` and ``False``."""
    import warnings

    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    def grad_probe(reentrant):
        lin = nn.Linear(4, 4)
        x = torch.randn(2, 4, requires_grad=True)
        torch.autograd.grad(checkpoint(lambda t: lin(t).tanh(), x, use_reentrant=reentrant).sum(), x)
        return "works"

    def kwargs_probe(reentrant):
        x = torch.randn(3, requires_grad=True)
        checkpoint(lambda t, scale: t * scale, x, scale=2.0, use_reentrant=reentrant)
        return "works"

    def no_grad_input_probe(reentrant):
        lin = nn.Linear(4, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = checkpoint(lambda t: lin(t), torch.randn(2, 4), use_reentrant=reentrant)
        if not out.requires_grad:
            return "parameters get no gradient (a warning)"
        out.sum().backward()
        return "parameters get gradients"

    def nested_probe(reentrant):
        lin = nn.Linear(4, 4)
        calls = [0]

        def inner(t):
            calls[0] += 1
            return lin(t).tanh()

        x = torch.randn(2, 4, requires_grad=True)
        (want,) = torch.autograd.grad(lin(x).tanh().sin().sum(), x)
        checkpoint(
            lambda t: checkpoint(inner, t, use_reentrant=reentrant).sin(), x, use_reentrant=reentrant
        ).sum().backward()
        same = torch.allclose(x.grad, want)
        return f"{'correct' if same else 'WRONG'} gradients, inner function run {calls[0]} times"

    def early_stop_probe(reentrant):
        ops = [0]

        def f(t):
            a = t.exp()
            ops[0] += 1
            b = a * 2
            ops[0] += 1
            return b + 1

        checkpoint(f, torch.randn(4, requires_grad=True), use_reentrant=reentrant).sum().backward()
        return f"{ops[0] - 2} of 2 lines after the saving op re-run"

    probes = [
        ("torch.autograd.grad(out, x)", grad_probe),
        ("keyword arguments to the function", kwargs_probe),
        ("inputs that do not require grad", no_grad_input_probe),
        ("nested checkpoints", nested_probe),
        ("recomputation stops once the needed tensors exist", early_stop_probe),
    ]
    torch.manual_seed(0)
    rows = [[name, _outcome(lambda p=p: p(True)), _outcome(lambda p=p: p(False))] for name, p in probes]
    return ["behaviour", "use_reentrant=True", "use_reentrant=False"], rows


@functools.cache
def memory_table(batch: int = 2, seq: int = 16, hidden: int = 32, heads: int = 4, layers: int = 3):
    """:func:`measure` for the three implementations on a stack of ``layers`` chapter blocks (float32, CPU):
    ``(headers, rows)`` with bytes alive after forward, peak bytes and forward calls (computed once per process)."""
    import torch
    from torch import nn

    from gpukb.distributed.model import block

    torch.manual_seed(0)
    stack = nn.Sequential(*[block(hidden, heads) for _ in range(layers)])
    x = torch.randn(batch, seq, hidden, requires_grad=True)
    rows = []
    for impl in IMPLS:
        m = measure(stack, x, impl)
        rows.append((impl, m.after_forward, m.peak, m.forward_calls))
    return ("checkpointing", "bytes held after forward", "peak bytes", "block forward calls"), tuple(rows)
