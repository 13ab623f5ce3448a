"""The ZeroGPU adapter: model work in the forked GPU worker of a Hugging Face ZeroGPU Space (the `spaces` package),
and on this process's CPU when the GPU is not there for a visitor. Every use of the `spaces` package is here.

- `gpu_job` is decorated with `spaces.GPU` at import, so the Space reports a GPU function at launch. Each call asks
  for the seconds `gpu_cost.seconds` expects of its job (never the package's 60 s default), capped at CAP_S.
- What crosses the fork is a `Job`: the owner's class (the service, the CIFAR lab, the paper findings), the method's
  name and its plain arguments (a decoded photo, the run it works on, the settings), pickled to bytes; the results
  come back the same way, on the CPU. The service object itself never crosses: the worker keeps its own services,
  built there with the parent's seed and hub status, whose models load once per worker (from the hub cache the
  Space fills at start, `preload_from_hub`) and run on the worker's GPU, chosen there.
- The job runs on a thread of the worker while the generator yields one item per batch boundary (progress), then
  its result or its error as data, so a refusal keeps the app's own line; when the page stops or leaves, the parent
  closes the generator and the worker's job stops at its next batch.
- Forks go one at a time (`_one_fork_at_a_time`): visitors arriving together start workers together.
- A quota refusal, an empty queue timeout or no free GPU (`NO_GPU_TITLES`) before the job starts sends the same job
  to this process's model thread on the CPU, and the page is told so in one line (NOTICE).
"""

from __future__ import annotations

import inspect
import logging
import os
import pickle
import queue
import threading
from contextlib import closing
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, Callable, Hashable, Iterator

import gradio as gr
import spaces
import torch

from app.server import gpu_cost
from app.server.context import stoppable, visitor
from app.server.refusal import refuse
from app.server.work import Inline, ModelThread, VisitorJobs

NOTICE = (
    "The free GPU time for your network is used up for now: running on the CPU, slower. "
    "Logged-in visitors get their own GPU time."
)
ON_CPU = "On the CPU (no free GPU time now): "  # before each later progress line of a job that fell back
log = logging.getLogger("vit_explorer")
NO_GPU_TITLES = ("ZeroGPU quota exceeded", "ZeroGPU queue timeout", "ZeroGPU client error")
# the `spaces` client's gr.Error titles when no GPU is given (quota, queue, none free): the job has not started


_FORKS = threading.Lock()
_FORK = os.fork


def _one_fork_at_a_time() -> int:
    """os.fork, one thread at a time. Visitors arriving at once start GPU workers at once, and filelock (which torch
    and the hub client use) refuses a fork while another thread's fork is under way ("os.fork is unsafe while
    filelock is changing descriptor ownership", seen with five visitors at once)."""
    with _FORKS:
        return _FORK()


@dataclass(frozen=True)
class Job:
    """One model job as it crosses to the worker: `owner.method(*args, **kwargs)` where `owner` is the worker's
    own instance of class `owner` (the service, or an object built over it), made with the parent's `seed` and hub
    status (`online`); `reports`: the method takes a `report` keyword."""

    owner: type
    service: type  # the class of the owner's service (the worker builds its own)
    method: str
    args: tuple
    kwargs: dict
    seed: int = 0
    online: bool = False
    reports: bool = False
    models: tuple[str, ...] = field(default=(), compare=False)  # the models it runs, for the duration


def seconds_for(job: bytes) -> int:
    """The GPU seconds a call asks for (the `spaces` package evaluates this before scheduling it)."""
    return gpu_cost.seconds(pickle.loads(job))


@spaces.GPU(duration=seconds_for)
def gpu_job(job: bytes) -> Iterator[bytes]:
    """In the GPU worker: run the pickled Job; yield ('progress', fraction, line) per batch boundary, then ('done',
    result) or ('error', exception), each pickled."""
    yield from (pickle.dumps(item) for item in worker_items(pickle.loads(job)))


_OWNERS: dict[tuple[type, int, bool], Any] = {}  # in a worker: its services and the objects over them


def worker_owner(job: Job) -> Any:
    """The worker's own instance of the job's owner (built once per worker), over a service on the worker's device."""
    key = (job.owner, job.seed, job.online)
    if key not in _OWNERS:
        service_key = (job.service, job.seed, job.online)
        if service_key not in _OWNERS:
            _OWNERS[service_key] = job.service(seed=job.seed, device="auto", runner=Inline(), _online=[job.online])
        service = _OWNERS[service_key]
        _OWNERS[key] = service if job.owner is job.service else job.owner(service)
    return _OWNERS[key]


class Stopped(Exception):
    """The parent closed the job's generator (Stop, a closed page): the job ends at its next batch boundary."""


def worker_items(job: Job) -> Iterator[tuple]:
    """Run `job` on a thread here, yielding its progress as it comes, then its outcome. Closing the generator stops
    the job at its next report."""
    if not torch.cuda.is_available():  # a worker forked after the parent's OpenMP pool ran: one thread, or it hangs
        torch.set_num_threads(1)
    items: queue.Queue[tuple] = queue.Queue()
    stop = threading.Event()

    def report(fraction: float, line: str) -> None:
        if stop.is_set():
            raise Stopped
        items.put(("progress", float(fraction), str(line)))

    def work() -> None:
        try:
            method = getattr(worker_owner(job), job.method)
            kwargs = {**job.kwargs, "report": report} if job.reports else job.kwargs
            items.put(("done", on_cpu(method(*job.args, **kwargs))))
        except Stopped:
            items.put(("stopped",))
        except Exception as exc:  # its class and line cross as data, never as the worker's own error
            items.put(("error", crossing(exc)))

    thread = threading.Thread(target=work, name="gpu-job", daemon=True)
    thread.start()
    try:
        while (item := items.get())[0] == "progress":
            yield item
        yield item
    finally:
        stop.set()
        thread.join()


def crossing(exc: Exception) -> Exception:
    """`exc` as it can cross to the parent: itself when it pickles, else an EngineError with its line."""
    from engine.errors import EngineError

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return EngineError(str(exc))


def on_cpu(value: Any) -> Any:
    """`value` with every tensor in it (in dataclasses, dicts, lists and tuples) moved to the CPU, for the parent."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {key: on_cpu(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(on_cpu(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: on_cpu(getattr(value, f.name)) for f in fields(value) if f.init}
        return replace(value, **changed)
    return value


class NoGpu(Exception):
    """ZeroGPU gave no GPU for this call (quota, queue, none free), before the job started."""


@dataclass
class ZeroGPU:
    """The runner of a ZeroGPU Space: model jobs in the GPU worker; on `fallback`, this process's model thread on
    its CPU, when no GPU is given; a job's nested calls and this process's own models (`call_here`) on `fallback`."""

    fallback: ModelThread = field(default_factory=ModelThread)
    jobs: VisitorJobs = field(default_factory=VisitorJobs)

    def __post_init__(self) -> None:
        os.fork = _one_fork_at_a_time  # this process starts GPU workers: one fork at a time

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self.fallback.turns.holding():  # inside a job running here already
            return fn(*args, **kwargs)
        owner, rest = args[0], args[1:]
        service = getattr(owner, "service", owner)
        report = kwargs.get("report")
        takes_report = "report" in inspect.signature(fn).parameters
        job = Job(
            type(owner),
            type(service),
            fn.__name__,
            rest,
            {key: value for key, value in kwargs.items() if key != "report"},
            seed=service.seed,
            online=service.online,
            reports=takes_report,
            models=gpu_cost.models_of(fn.__name__, rest, kwargs),
        )
        with self.jobs.one(visitor()):
            try:
                return self._on_gpu(job, report)
            except NoGpu as exc:
                log.warning("no GPU for %s (%s): on the CPU", job.method, exc)
                stoppable(report)(0.0, NOTICE)
                _warn(NOTICE)
                if report is not None:  # every later line says where the job runs
                    kwargs = {**kwargs, "report": lambda fraction, line: report(fraction, f"{ON_CPU}{line}")}
                return self.fallback.call(fn, args, kwargs)

    def call_here(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        return self.fallback.call(fn, args, kwargs)

    def call_once(self, key: Hashable, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        return self.call(fn, args, kwargs)  # Gradio only: each handler's thread waits to the end of its own job

    def pause(self) -> None:
        self.fallback.pause()

    def computed(self) -> float:
        return self.fallback.computed()

    @staticmethod
    def _on_gpu(job: Job, report: Callable[[float, str], None] | None) -> Any:
        told, started = stoppable(report), False
        with closing(gpu_job(pickle.dumps(job))) as items:  # closed early: the worker stops at its next batch
            try:
                for data in items:
                    kind, *payload = pickle.loads(data)
                    started = True
                    if kind == "progress":
                        told(*payload)  # raises once the request is abandoned or stopped
                    elif kind == "done":
                        return payload[0]
                    elif kind == "error":
                        raise payload[0]
                    else:
                        raise refuse("stopped", "a stopped job")
            except gr.Error as exc:
                if not started and getattr(exc, "title", "") in NO_GPU_TITLES:
                    raise NoGpu(str(exc)) from exc
                raise
        raise refuse("the GPU worker ended without an answer; try again", "a job without an answer")


def _warn(line: str) -> None:
    """`line` as a warning on the page of the Gradio event running here (nothing outside one)."""
    try:
        gr.Warning(line)
    except Exception:  # noqa: BLE001 - outside an event there is no page to tell
        pass
