"""The skeleton of every script under ``bench/``: its command line, its device, its run, its timer, its record.

A script keeps only what it measures. It hands :func:`main` a ``measure`` function, its docstring (the usage
and help text) and, if it has options of its own, a function that adds them to the parser::

    def arguments(parser):
        parser.add_argument("--mib", type=int, default=256, help="buffer size in MiB")

    def measure(script: Script) -> CopyWidth:
        script.note("256 MiB buffers; L2 flushed before every call")
        copy = script.measure(lambda: dst.copy_(src))  # warm-up, timed samples, clocks: one Measurement
        return CopyWidth(run=script.finished(), ms=copy.summary(), ...)

    if __name__ == "__main__":
        raise SystemExit(main(measure, __doc__, arguments))

:func:`main` parses the output path (a positional argument) and the script's options; refuses to measure
without the device it needs (``device="cuda"``), or joins the process group ``torchrun`` describes (or a
one-rank group) for ``device="ranks"``; describes the run (:func:`~gpukb.records.describe_run`) before
``measure`` starts; and writes the record ``measure`` returns (:func:`~gpukb.records.write`, on rank 0). The
:class:`Script` handed to ``measure`` times work the one way the project times it
(:func:`gpukb.measuring.timing.benchmark`: warm-up, CUDA events, the L2 flushed by a read between calls, SM
clock and power sampled during the timed calls) and marks events for work that is timed step by step
(:class:`gpukb.measuring.timing.Marks`).

It lives with the records, not in :mod:`gpukb.measuring`: it writes records, and measuring sits on the floor
below them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpukb.arguments import choice, integer, positive_int
from gpukb.measuring.timing import Budget, EventTimer, HostTimer, L2Flusher, Marks, Measurement, Timer, benchmark
from gpukb.records.run import Run, describe_run, finished
from gpukb.records.store import Record, check_output, rerecord_option, write

#: What the positional argument names: a results file (``"file"``), a results file that may be left out
#: (``"optional"``: the script then only prints), or a folder for several records (``"folder"``).
OUTPUTS = ("file", "optional", "folder")
#: What a script runs on: a CUDA GPU (``"cuda"``), the CPU alone (``"cpu"``), or one process per rank of a
#: ``torch.distributed`` group (``"ranks"``: NCCL with a GPU per rank, else gloo).
DEVICES = ("cuda", "cpu", "ranks")
BACKENDS = ("nccl", "gloo")
#: Exit status of a script that cannot measure here (argparse uses 2 for a usage error).
NOTHING_MEASURED = 1
#: The warm-up and repetition of :meth:`Script.measure` unless a script gives its own.
DEFAULT_BUDGET = Budget()
#: Where a one-rank process group listens when ``torchrun`` started nothing (it then starts no other process).
SINGLE_RANK_ADDRESS = ("127.0.0.1", "29571")


def parser(
    doc: str | None,
    arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    output: str = "file",
    device: str = "cuda",
    prog: str | None = None,
) -> argparse.ArgumentParser:
    """The command line of a bench script: its output, its own options, and ``--backend`` for ``"ranks"``.

    Args:
        doc: The script's docstring (its usage and what it measures), the description ``--help`` shows.
        arguments: Adds the script's own options to the parser.
        output: One of :data:`OUTPUTS`.
        device: One of :data:`DEVICES`.
        prog: The program name in messages (the script's file name when omitted).

    Raises:
        ValueError: For an unknown ``output`` or ``device``.
        TypeError: If ``arguments`` is not callable.
    """
    choice("output", output, OUTPUTS)
    choice("device", device, DEVICES)
    for name, value in (("doc", doc), ("prog", prog)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string or None; got {type(value).__name__}")
    if arguments is not None and not callable(arguments):
        raise TypeError(f"arguments must be a function that adds options to a parser; got {type(arguments).__name__}")
    made = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if output == "folder":
        made.add_argument("output", type=Path, metavar="OUT_DIR", help="the folder to write the results files into")
    else:
        made.add_argument(
            "output",
            type=Path,
            nargs="?" if output == "optional" else None,
            metavar="OUTPUT.json",
            help="write the results here (JSON)" + ("; print only when left out" if output == "optional" else ""),
        )
    if device == "ranks":
        made.add_argument(
            "--backend", choices=BACKENDS, default=None, help="the process group's backend (default: nccl with CUDA, "
            "else gloo)"
        )  # fmt: skip
    rerecord_option(made)
    if arguments is not None:
        arguments(made)
    return made


def count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number ≥ ``minimum`` (a count of steps, rounds, repeats): a bad value is a
    usage error naming the option before anything runs, not a traceback from a rank after the model is built.

    >>> made = argparse.ArgumentParser()
    >>> made.add_argument("--rounds", type=count(), default=1)  # doctest: +ELLIPSIS
    _StoreAction(...)
    """
    minimum = integer("minimum", minimum)

    def parse(text: str) -> int:
        try:
            return integer("N", int(text), minimum=minimum)
        except ValueError:
            raise argparse.ArgumentTypeError(f"N must be a whole number ≥ {minimum}; got {text!r}") from None

    parse.__name__ = f"whole number ≥ {minimum}"
    return parse


def cuda_missing(torch: Any = None) -> str | None:
    """Why no CUDA GPU can be used here, or ``None`` when one can."""
    if torch is None:
        try:
            import torch
        except ImportError:
            return "torch is not installed, so no GPU can be reached"
    if not torch.cuda.is_available():
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "no CUDA (a CPU build)"
        return f"no CUDA GPU is available (torch {torch.__version__}, built with {build})"
    return None


def join_process_group(backend: str | None = None) -> tuple[int, int, str]:
    """Join the process group ``torchrun`` describes (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_*``), or,
    in a process ``torchrun`` did not start, a group of this one rank. NCCL with one GPU per local rank when CUDA
    is available, else gloo. Returns ``(rank, world_size, device)``.

    Raises:
        ValueError: For a backend that is not ``"nccl"`` or ``"gloo"``.
    """
    import torch
    import torch.distributed as dist

    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    choice("backend", backend, BACKENDS)
    device, kwargs = "cpu", {}
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
        kwargs["device_id"] = torch.device(device)
    if "WORLD_SIZE" not in os.environ:  # not under torchrun: one rank, no other process to meet
        os.environ.setdefault("MASTER_ADDR", SINGLE_RANK_ADDRESS[0])
        os.environ.setdefault("MASTER_PORT", SINGLE_RANK_ADDRESS[1])
        kwargs.update(rank=0, world_size=1)
    if not dist.is_initialized():
        dist.init_process_group(backend, **kwargs)
    return dist.get_rank(), dist.get_world_size(), device


@dataclass
class Script:
    """What a running bench script measures with: its arguments, its run, its device, the timer and the writer.

    Attributes:
        args: The parsed command line (``args.output`` is :attr:`output`).
        output: The results file (or folder) named on the command line; ``None`` when an optional one was left out.
        run: The run, described before ``measure`` started (GPU, driver, versions, the first clock reading).
        started: ``time.perf_counter()`` when the run was described.
        device: ``"cuda"``, ``"cpu"``, or this rank's device (``"cuda:0"``, ``"cpu"``) for ``"ranks"``.
        rank: This process's rank (0 outside a process group).
        world: The number of ranks (1 outside a process group).
        notes: How the run was made, in words; :meth:`finished` adds them to the run's notes.
        budget: Warm-up and repetition of :meth:`measure` unless a call gives its own.
        folder: Whether :attr:`output` is a folder that :meth:`write` puts named files in.
    """

    args: argparse.Namespace
    output: Path | None
    run: Run
    started: float
    device: str = "cuda"
    rank: int = 0
    world: int = 1
    notes: list[str] = field(default_factory=list)
    budget: Budget = DEFAULT_BUDGET
    folder: bool = False
    _flush: L2Flusher | None = field(default=None, repr=False)
    _monitor: Any = field(default=None, repr=False)
    _monitor_made: bool = field(default=False, repr=False)
    _written: set[Path] = field(default_factory=set, repr=False)

    @property
    def torch(self) -> Any:
        """The ``torch`` module (imported when first asked for)."""
        import torch

        return torch

    @property
    def on_gpu(self) -> bool:
        """Whether this script times work on a CUDA device."""
        return self.device.startswith("cuda")

    def note(self, *lines: str) -> None:
        """Say how the run is made (methods, sizes, deviations); kept in the record's ``run.notes``."""
        for line in lines:
            if not isinstance(line, str) or not line.strip():
                raise ValueError(f"a note is a non-empty string; got {line!r}")
            self.notes.append(line)

    def finished(self, **changes: Any) -> Run:
        """The run with its notes, its duration, a last clock reading and any field changes (``clocks=``,
        ``versions=``, ...): what a record's ``run`` holds (:func:`gpukb.records.finished`)."""
        notes = changes.pop("notes", [*self.run.notes, *self.notes])
        return finished(self.run, self.started, notes=notes, **changes)

    def timer(self, calls: int = 1, host: bool = False, hold: bool = True) -> Timer:
        """The timer for this script's device: CUDA events on a GPU, the host clock (synchronizing the GPU, if
        there is one) otherwise or when ``host`` is set; each sample is the mean of ``calls`` back-to-back calls.
        On a GPU the samples are queued behind a gate (``hold``, :class:`~gpukb.measuring.timing.EventTimer`), so
        that a slow host path between a flush and the call it precedes is never timed as the GPU's."""
        positive_int("calls per sample", calls)
        if not isinstance(hold, bool):
            raise TypeError(f"hold must be a bool; got {type(hold).__name__}")
        if self.on_gpu and not host:
            return EventTimer(self.torch, calls_per_sample=calls, hold=hold)
        return HostTimer(self.torch.cuda.synchronize if self.on_gpu else None, calls_per_sample=calls)

    @property
    def flush(self) -> L2Flusher:
        """Evicts the GPU's L2 by reading a buffer four times its size (made when first asked for)."""
        if not self.on_gpu:
            raise ValueError(f"there is no L2 to flush on device {self.device!r}")
        if self._flush is None:
            l2_bytes = self.run.gpu.l2_bytes if self.run.gpu is not None else 0
            self._flush = L2Flusher(self.torch, l2_bytes, device=self.device)
        return self._flush

    @property
    def monitor(self) -> Any:
        """The SM clock and power sampler of GPU 0 (``None`` on the CPU, or where neither NVML nor nvidia-smi
        answers)."""
        if not self._monitor_made:
            from gpukb.measuring.device import sampler

            self._monitor = sampler() if self.on_gpu else None
            self._monitor_made = True
        return self._monitor

    def measure(
        self,
        fn: Callable[[], object],
        budget: Budget | None = None,
        flush: bool = True,
        calls: int = 1,
        before: Callable[[], object] | None = None,
        host: bool = False,
        hold: bool = True,
    ) -> Measurement:
        """Time ``fn``: warm up, then time samples one by one while the clocks are sampled.

        Args:
            fn: The work; it must give the same result however often it is called.
            budget: Warm-up and repetition; :attr:`budget` when omitted.
            flush: Flush the GPU's L2 (untimed, by a read) before each sample; ignored on the CPU.
            calls: Back-to-back calls per sample; a sample is their mean (see
                :class:`~gpukb.measuring.timing.EventTimer`).
            before: Untimed work before each sample, instead of the flush.
            host: Time with the host clock around synchronized calls instead of CUDA events (a copy from
                pageable memory, which the driver stages on the host, say).
            hold: Queue the CUDA-event samples behind a gate, so that the host's time to launch a call is never
                timed as the GPU's (:class:`~gpukb.measuring.timing.EventTimer`); ``host_ms`` of the result is that
                host time.

        Returns:
            The samples (ms per call), the estimate of one call, the warm-up and what the clocks did
            (``.summary()`` is the :class:`~gpukb.measuring.stats.Summary` a record stores).
        """
        step = before if before is not None else (self.flush if flush and self.on_gpu else None)
        return benchmark(fn, self.timer(calls, host, hold), budget or self.budget, step, self.monitor)

    def marks(self) -> Marks:
        """CUDA events to mark the steps of work timed step by step (:class:`~gpukb.measuring.timing.Marks`)."""
        return Marks(self.torch)

    def write(self, record: Record, name: str | None = None) -> Path | None:
        """Write ``record`` to the output (or to ``name`` in an output folder), on rank 0 only. A file that exists
        is replaced only with the script's ``--rerecord`` flag or where this run wrote it before (a script that
        saves its record after each step).

        Returns the path written, or ``None`` on another rank or when no output was given.

        Raises:
            ValueError: If ``name`` is given without an output folder or omitted with one.
        """
        if self.rank != 0 or self.output is None:
            return None
        if self.folder != (name is not None):
            raise ValueError(
                "name a file inside the output folder" if self.folder else f"this script writes one file; got {name!r}"
            )
        path = self.output / name if name is not None else self.output
        # an existing record is replaced only with --rerecord, or where this run wrote it (a partial record)
        written = write(record, path, replace=bool(self.args.rerecord) or path in self._written)
        self._written.add(path)
        print(f"wrote {written}", file=sys.stderr, flush=True)
        return written


def _check_output(made: argparse.ArgumentParser, args: argparse.Namespace, output: str) -> None:
    """Refuse a bad output as a usage error before anything is measured (a GPU run's minutes are not spent on a
    record that could not be written): a results file :func:`~gpukb.records.store.write` would refuse, or an output
    folder that is something else."""
    if args.output is None:
        return
    if output == "folder":
        if os.path.lexists(args.output) and not args.output.is_dir():
            made.error(f"{args.output}: not a folder; give the folder to write the results files into")
        return
    try:
        check_output(args.output, replace=bool(args.rerecord))
    except (TypeError, ValueError) as err:
        made.error(str(err))


def main(
    measure: Callable[[Script], Record | int | None],
    doc: str | None,
    arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    output: Literal["file", "optional", "folder"] = "file",
    device: Literal["cuda", "cpu", "ranks"] = "cuda",
    backend: Callable[[argparse.Namespace], str | None] | None = None,
    check: Callable[[argparse.Namespace], str | None] | None = None,
    budget: Budget = DEFAULT_BUDGET,
    argv: Sequence[str] | None = None,
    prog: str | None = None,
) -> int:
    """Run a bench script: parse its command line, check or join its device, describe the run, measure, write.

    Args:
        measure: Measures, given the :class:`Script`; returns the record to write (or writes its own with
            :meth:`Script.write` and returns ``None``, or an exit status).
        doc: The script's docstring (usage and help).
        arguments: Adds the script's own options (see :func:`parser`).
        output: What the positional argument names; see :data:`OUTPUTS`.
        device: What the script needs; see :data:`DEVICES`.
        backend: For ``"ranks"``: the backend to use, from the parsed arguments (``args.backend`` when omitted;
            ``None`` picks NCCL with CUDA, else gloo).
        check: Why the parsed options do not go together (``--tiny`` with a model it does not train, say), or
            ``None`` when they do: a reason is a usage error, before a device is checked or a process group joined.
        budget: The default warm-up and repetition of :meth:`Script.measure`.
        argv: The arguments (``sys.argv[1:]`` when omitted).
        prog: The program name in messages.

    Returns:
        The exit status: 0, :data:`NOTHING_MEASURED` when the device is missing, or what ``measure`` returned.
        A bad command line, or an output the record could not be written to, exits with status 2 before anything
        is measured.
    """
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a gpukb.measuring.timing.Budget; got {type(budget).__name__}")
    if check is not None and not callable(check):
        raise TypeError(f"check must be a function of the parsed arguments; got {type(check).__name__}")
    made = parser(doc, arguments, output, device, prog)
    args = made.parse_args(argv)
    problem = None if check is None else check(args)
    if problem is not None:  # options that do not go together: refused before a rank starts, not by each rank
        made.error(problem)
    _check_output(made, args, output)
    if device == "cuda":
        reason = cuda_missing()
        if reason is not None:
            print(f"{made.prog}: {reason}; nothing was measured", file=sys.stderr)
            return NOTHING_MEASURED
    rank, world, where = 0, 1, device
    joined = device == "ranks"
    if joined:
        rank, world, where = join_process_group(backend(args) if backend is not None else args.backend)
    try:
        started = time.perf_counter()
        script = Script(
            args=args, output=args.output, run=describe_run(), started=started, device=where, rank=rank,
            world=world, budget=budget, folder=output == "folder",
        )  # fmt: skip
        result = measure(script)
        if isinstance(result, Record):
            script.write(result)
            return 0
        return 0 if result is None else int(result)
    finally:
        if joined:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()
