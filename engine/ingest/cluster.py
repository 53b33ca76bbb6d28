"""Ingest on Ray (``lineup ingest SOURCES --workers N`` or ``--ray ADDRESS``; docs/scaling.md): the sources are
cut into work units (``engine.ingest.units``: a source each, a built world in shards) that Ray actors read
(``engine.ingest.remote.UnitWorker``: networks loaded once per worker; each batch shipped back as items,
vectors, evidence and crop bytes), and this process, the gallery's one writer, commits them
(``engine.ingest.shipments``) in the order of the units. A gallery made so holds the items, ids, crops and
evidence an ingest in one process gives, in the same order.

Resuming is the one-process ingest's: done markers per source (and per world shard) are written after a unit's
last batch is committed, items already in the gallery are skipped. A killed writer leaves committed batches and
no marker for the units it was in; running it again skips the done units and reads the others again without
duplicates. A worker lost half way through a unit (its process killed, its machine gone) is restarted by Ray
and the unit is read again from its start (``MAX_TRIES`` times at most).

The writer builds the encoder too (it decides the gallery's appearance view, checks the gallery against the
model, and repairs what an interrupted ingest left); the workers build theirs from the same factory and refuse
to run when theirs differs. With ``address``, the workers read the sources by the same paths: keep them on a
file system every node mounts at the same place.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError
from engine.ingest.markers import done_markers
from engine.ingest.options import IngestOptions
from engine.ingest.pipeline import IngestRun, SourcePaths, run_ingest
from engine.ingest.ray_session import ray_session, require_ray
from engine.ingest.remote import EncoderPlan, Shipment, UnitEnd, UnitWorker, present_ids
from engine.ingest.shipments import ShipmentWriter
from engine.ingest.summary import IngestSummary
from engine.ingest.units import DEFAULT_WORLD_SHARD, WorkUnit, work_units
from engine.kernel.permissions import owner_only_umask
from engine.kernel.progress import ProgressFn, no_progress
from engine.perception.detection.detectors import PersonDetector
from engine.retrieval.evidence.ranking import DomainWeights

MAX_TRIES = 3  # readings of one unit when its worker is lost
QUEUED_PER_WORKER = 2  # units given to a worker at once: the next starts while the writer commits the last
WAIT_SECONDS = 1.0


class UnitQueue:
    """Hands ``units`` to ``actors`` and gives back their messages in the order of the units: at most
    ``QUEUED_PER_WORKER`` units wait on an actor, and the units after the one being committed run ahead."""

    def __init__(self, ray, actors: list, units: list[WorkUnit], present, markers) -> None:
        self.ray = ray
        self.actors = actors
        self.units = units
        self.present = present
        self.markers = markers
        self.running: dict[int, tuple[int, Any]] = {}  # unit → (actor, its generator)
        self.load = [0] * len(actors)
        self.tries = [0] * len(units)
        self.submitted = 0

    def _submit(self, index: int) -> None:
        actor = min(range(len(self.actors)), key=self.load.__getitem__)
        self.tries[index] += 1
        generator = self.actors[actor].read.remote(self.units[index], self.present, self.markers)
        self.running[index] = (actor, generator)
        self.load[actor] += 1

    def _release(self, index: int) -> None:
        actor, _ = self.running.pop(index)
        self.load[actor] -= 1

    def _top_up(self) -> None:
        while self.submitted < len(self.units) and min(self.load) < QUEUED_PER_WORKER:
            self._submit(self.submitted)
            self.submitted += 1

    def _lost(self) -> tuple[type, ...]:
        errors = self.ray.exceptions
        return errors.RayActorError, errors.WorkerCrashedError, errors.ObjectLostError

    def messages(self) -> Iterator[tuple[int, Shipment | UnitEnd]]:
        finished: set[int] = set()  # units after the head whose task has ended (their actor is free)
        for head in range(len(self.units)):
            while True:
                self._top_up()
                _, generator = self.running[head]
                ends = {self.running[i][1].completed(): i for i in self.running if i != head and i not in finished}
                ready, _ = self.ray.wait([generator, *ends], num_returns=1, timeout=WAIT_SECONDS, fetch_local=False)
                for ref in ready:
                    if isinstance(ref, self.ray.ObjectRef) and ref in ends:
                        finished.add(ends[ref])
                        self.load[self.running[ends[ref]][0]] -= 1
                if not any(ref is generator for ref in ready):
                    continue
                message = self._next(head, generator, finished)
                if message is None:
                    continue
                yield head, message
                if isinstance(message, UnitEnd):
                    if head in finished:
                        finished.discard(head)
                        self.running.pop(head)
                    else:
                        self._release(head)
                    break

    def _next(self, head: int, generator, finished: set[int]) -> Shipment | UnitEnd | None:
        """The head unit's next message; None when its worker was lost and the unit was handed out again."""
        try:
            return self.ray.get(next(generator))
        except StopIteration:
            path = self.units[head].source.path
            problem: BaseException | None = IngestError(f"a worker ended {path} without its report")
        except self.ray.exceptions.ActorUnavailableError:  # restarting after a loss: not a try of its own
            self.tries[head] -= 1
            problem = None
            time.sleep(WAIT_SECONDS)
        except self._lost() as exc:
            problem = exc
        except self.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else IngestError(str(exc))) from None
        if self.tries[head] >= MAX_TRIES:
            raise IngestError(f"the workers reading {self.units[head].source.path} were lost {self.tries[head]} "
                              f"times: {problem}")
        if head in finished:
            finished.discard(head)
            self.running.pop(head)
        else:
            self._release(head)
        self._submit(head)
        return None


@owner_only_umask()
def ingest_on_ray(source: SourcePaths, gallery: str | Path, make_encoder: Callable[[], Encoder],
                  make_detector: Callable[[], PersonDetector] | None = None, options: IngestOptions | None = None, *,
                  workers: int | None = 2, address: str | None = None, progress: ProgressFn = no_progress,
                  weights: DomainWeights | None = None, world_shard: int = DEFAULT_WORLD_SHARD) -> IngestSummary:
    """``engine.ingest.ingest`` with the reading spread over Ray workers (see the module docstring):
    ``make_encoder``/``make_detector`` build the networks (in each worker, and the encoder here too; they travel
    pickled, so module-level functions or partials of them); ``workers``: actors to run (a local Ray with that
    many CPUs, or with ``address`` that many on the cluster, default one per CPU); ``world_shard``: images of a
    built world per unit. An ``IngestError`` when Ray is not installed."""
    ray = require_ray("ingest with --workers or --ray")
    options = options or IngestOptions()
    if workers is not None and workers < 1:
        raise IngestError(f"workers must be at least 1, got {workers}")

    def consume(run: IngestRun) -> None:
        markers = {} if options.force else done_markers(run.store.root)
        units = work_units(run.found.sources, world_shard, set(markers))
        total = sum(unit.source.expected_frames(options.stride) for unit in units)
        writer = ShipmentWriter(run.store, run.summary, run.encoder.fingerprint, markers, progress, total)
        progress(0, total)
        with ray_session(ray, workers, address) as count:
            worker = ray.remote(UnitWorker).options(num_cpus=1, max_restarts=MAX_TRIES, max_task_retries=0)
            plan = EncoderPlan.of(run.encoder)
            actors = [worker.remote(make_encoder, make_detector, plan, options, run.pretrained)
                      for _ in range(max(1, min(count, len(units))))]
            queue = UnitQueue(ray, actors, units, ray.put(present_ids(run.store.ids)), ray.put(markers))
            for index, message in queue.messages():
                if isinstance(message, Shipment):
                    writer.commit(index, message)
                else:
                    writer.end(index, units[index], message)

    return run_ingest(source, gallery, make_encoder(), options, consume, weights, network_here=False)
