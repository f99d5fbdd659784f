"""WorkerTask: the thread that runs one source or sink task (Kafka's ``WorkerTask``).

A task thread is not a daemon: the worker stops it with :meth:`WorkerTask.stop` (a signal)
and joins it within ``task.shutdown.graceful.timeout.ms``; a task that does not finish in
time is *cancelled*: it may still exit later, but reports no more statuses.

Status transitions go to a :class:`TaskStatusListener` (the herder): RUNNING once started,
PAUSED/RUNNING on target-state changes, FAILED with the trace on an uncaught error,
UNASSIGNED on a clean shutdown.
"""

from __future__ import annotations

import abc
import logging
import threading
import traceback
from typing import Protocol

from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.herder import ConnectorTaskId, TargetState
from seaway.connect.runtime.metrics import new_task_metrics
from seaway.log_setup import set_connector_context

__all__ = ["TaskStatusListener", "WorkerTask", "format_trace"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)


def format_trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


class TaskStatusListener(Protocol):
    def on_task_startup(self, task_id: ConnectorTaskId) -> None: ...

    def on_task_pause(self, task_id: ConnectorTaskId) -> None: ...

    def on_task_resume(self, task_id: ConnectorTaskId) -> None: ...

    def on_task_failure(self, task_id: ConnectorTaskId, error: BaseException) -> None: ...

    def on_task_shutdown(self, task_id: ConnectorTaskId) -> None: ...

    def on_topic(self, task_id: ConnectorTaskId, topic: str) -> None: ...


class WorkerTask(abc.ABC):
    """Lifecycle shared by source and sink tasks; subclasses implement the data loop."""

    version: str | None = None
    """The task plugin's ``version()``, read once when the worker built it (statuses carry it)."""

    def __init__(self, task_id: ConnectorTaskId, listener: TaskStatusListener, target: TargetState) -> None:
        self.id = task_id
        self.listener = listener
        self.stopping = threading.Event()
        self.cancelled = False
        self.failed = False
        self._cond = threading.Condition()
        self._target = target
        self.metrics = new_task_metrics()  # per-batch counters read by /metrics (runtime/metrics.py)
        self.thread = threading.Thread(target=self._run, name=f"task-thread-{task_id}", daemon=False)

    # -- control (any thread) -------------------------------------------------------------------
    def start(self) -> None:
        self.thread.start()

    def transition_to(self, target: TargetState) -> None:
        with self._cond:
            self._target = target
            self._cond.notify_all()

    def stop(self) -> None:
        """Signal the task to stop (never blocks)."""
        self.stopping.set()
        with self._cond:
            self._cond.notify_all()
        self.signal_stop()

    def await_stop(self, timeout: float) -> bool:
        self.thread.join(max(0.0, timeout))
        return not self.thread.is_alive()

    def cancel(self) -> None:
        """Stop reporting statuses: the task overran its shutdown timeout or was replaced."""
        self.cancelled = True

    @property
    def paused(self) -> bool:
        return self._target is TargetState.PAUSED

    # -- task thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        set_connector_context(self.id.connector, f"task-{self.id.task}")  # Kafka's connector.context MDC
        try:
            self.initialize_and_start()
            if not self.stopping.is_set() and not self.cancelled:
                if self.paused:
                    self.listener.on_task_pause(self.id)
                else:
                    self.listener.on_task_startup(self.id)
            self.execute()
        except BaseException as e:
            self.failed = True
            if self.stopping.is_set() and not isinstance(e, Exception):
                log.info("Task %s interrupted while stopping", self.id)
            else:
                log.error("%s Task threw an uncaught and unrecoverable exception. Task is being killed and "
                          "will not recover until manually restarted", self.id, exc_info=e)
            if not self.cancelled:
                self.listener.on_task_failure(self.id, e)
        finally:
            try:
                self.close()
            except Exception:
                log.exception("%s Task failed while closing", self.id)
            if not self.failed and not self.cancelled:
                self.listener.on_task_shutdown(self.id)

    def await_unpaused(self) -> bool:
        """Block while PAUSED (reporting PAUSED then RUNNING); False if stopping meanwhile."""
        with self._cond:
            if self._target is not TargetState.PAUSED:
                return not self.stopping.is_set()
        self.on_pause()
        if not self.cancelled:
            self.listener.on_task_pause(self.id)
        while True:
            with self._cond:
                if self._target is not TargetState.PAUSED or self.stopping.is_set():
                    break
                self._cond.wait(self.pause_wait_s())
            self.while_paused()
        if self.stopping.is_set():
            return False
        self.on_resume()
        if not self.cancelled:
            self.listener.on_task_resume(self.id)
        return True

    def pause_wait_s(self) -> float:
        return 1.0

    def while_paused(self) -> None:
        """Called periodically while paused (a sink keeps polling its consumer to stay in the group)."""
        return

    def on_pause(self) -> None:
        """Hook: entering PAUSED."""
        return

    def on_resume(self) -> None:
        """Hook: leaving PAUSED."""
        return

    @abc.abstractmethod
    def initialize_and_start(self) -> None:
        """Create clients, configure converters/SMTs, call the task's ``initialize`` and ``start``."""

    @abc.abstractmethod
    def execute(self) -> None:
        """The data loop; returns when :attr:`stopping` is set."""

    @abc.abstractmethod
    def signal_stop(self) -> None:
        """Wake the loop (source tasks call ``SourceTask.stop`` here, from the stopping thread)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release clients and plugin instances (task thread, after the loop)."""
