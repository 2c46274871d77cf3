"""torch.multiprocessing.spawn under the drop-in: `spawn` and `start_processes`, which run a
function in new processes with their index as the first argument, the ProcessContext that
joins them, and the errors a process's failure raises in the parent
(ProcessRaisedException, ProcessExitedException). drop_in/multiprocessing/__init__.py
re-exports them as torch.multiprocessing does.
"""

from __future__ import annotations

import multiprocessing as _multiprocessing


class ProcessRaisedException(Exception):
    """A process started by spawn raised; the message holds its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(Exception):
    """A process started by spawn exited with a nonzero code."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int):
        super().__init__(msg)
        self.error_index, self.pid, self.exit_code = error_index, error_pid, exit_code


def _wrap(fn, index: int, args: tuple, errors) -> None:
    import traceback

    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - reported to the parent, as torch's spawn does
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes of one spawn call; join() waits for them and raises for a failed one."""

    def __init__(self, processes: list, error_queues: list):
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list:
        return [process.pid for process in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        for index, process in enumerate(self.processes):
            process.join(timeout)
            if process.exitcode is None:
                return False
            if process.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                queue = self.error_queues[index]
                if not queue.empty():
                    raise ProcessRaisedException(
                        f"\n\n-- Process {index} terminated with the following error:\n"
                        f"{queue.get()}", index, process.pid)
                raise ProcessExitedException(
                    f"process {index} terminated with exit code {process.exitcode}", index,
                    process.pid, process.exitcode)
        return True


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """Run fn(i, *args) for i in range(nprocs), each in a process of `start_method`."""
    context = _multiprocessing.get_context(start_method)
    processes, queues = [], []
    for index in range(nprocs):
        queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, index, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    processes_context = ProcessContext(processes, queues)
    if not join:
        return processes_context
    while not processes_context.join():
        pass
    return None


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """start_processes with the spawn start method (torch.multiprocessing.spawn)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
