"""Key-value stores with torch.distributed's names: `TCPStore`, a store a master process serves
on a TCP port for every process that connects (what launchers and libraries use to meet and
exchange small values), `HashStore`, one in this process, and `PrefixStore`, a namespace in
another. Values are bytes (a str is stored as its UTF-8); `get` and `wait` block until the
keys are set or the store's timeout passes, then raise DistStoreError with torch's message.
autojit's own process groups meet through MPI and need none of it (docs/distributed.md).
"""

from __future__ import annotations

import pickle
import socket
import struct
import threading
import time
from datetime import timedelta

from .work import DistStoreError

__all__ = ["HashStore", "PrefixStore", "Store", "TCPStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


def _bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class _Table:
    """The keys and values, with a condition that get and wait sleep on."""

    def __init__(self):
        self.values: dict = {}
        self.changed = threading.Condition()

    def call(self, operation: str, *arguments):
        with self.changed:
            result = getattr(self, "_" + operation)(*arguments)
            self.changed.notify_all()
            return result

    def _set(self, key, value):
        self.values[key] = value

    def _add(self, key, amount):
        value = int(self.values.get(key, b"0")) + amount
        self.values[key] = str(value).encode()
        return value

    def _append(self, key, value):
        self.values[key] = self.values.get(key, b"") + value

    def _compare_set(self, key, expected, desired):
        current = self.values.get(key)
        if current is None and expected == b"" or current == expected:
            self.values[key] = desired
            return desired
        return current if current is not None else expected

    def _check(self, keys):
        return all(key in self.values for key in keys)

    def _delete_key(self, key):
        return self.values.pop(key, None) is not None

    def _num_keys(self):
        return len(self.values)

    def wait(self, keys: list, seconds: float) -> list | None:
        """The values of `keys` once all are set, or None after `seconds`."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while not all(key in self.values for key in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(left)
            return [self.values[key] for key in keys]


class Store:
    """The base of the stores: set, get, add, append, compare_set, wait, check, delete_key,
    num_keys, multi_get and multi_set, with a timeout for get and wait."""

    def __init__(self, timeout: timedelta = _DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def _call(self, operation: str, *arguments):
        raise NotImplementedError

    def _wait(self, keys: list, seconds: float):
        raise NotImplementedError

    def set(self, key: str, value) -> None:
        self._call("set", key, _bytes(value))

    def get(self, key: str) -> bytes:
        return self._waited([key], None)[0]

    def add(self, key: str, amount: int) -> int:
        return self._call("add", key, int(amount))

    def append(self, key: str, value) -> None:
        self._call("append", key, _bytes(value))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        return self._call("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def check(self, keys: list) -> bool:
        return self._call("check", list(keys))

    def delete_key(self, key: str) -> bool:
        return self._call("delete_key", key)

    def num_keys(self) -> int:
        return self._call("num_keys")

    def wait(self, keys: list, timeout: timedelta | None = None) -> None:
        self._waited(list(keys), timeout)

    def multi_get(self, keys: list) -> list:
        return self._waited(list(keys), None)

    def multi_set(self, keys: list, values: list) -> None:
        for key, value in zip(keys, values):
            self.set(key, value)

    def _waited(self, keys: list, timeout: timedelta | None) -> list:
        limit = (timeout if timeout is not None else self._timeout).total_seconds()
        found = self._wait(keys, limit)
        if found is None:
            raise DistStoreError(f"wait timeout after {round(limit * 1000)}ms, keys: "
                                 + ", ".join("/" + key for key in keys))
        return found


class HashStore(Store):
    """A store in this process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, operation: str, *arguments):
        return self._table.call(operation, *arguments)

    def _wait(self, keys: list, seconds: float):
        return self._table.wait(keys, seconds)


class PrefixStore(Store):
    """`store`'s keys under `prefix/`."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self.underlying_store = store
        self._prefix = prefix + "/"

    def _key(self, key: str) -> str:
        return self._prefix + key

    def _call(self, operation: str, *arguments):
        if operation in ("check",):
            return self.underlying_store._call(operation, [self._key(k) for k in arguments[0]])
        if operation == "num_keys":
            return self.underlying_store._call(operation)
        return self.underlying_store._call(operation, self._key(arguments[0]), *arguments[1:])

    def _wait(self, keys: list, seconds: float):
        return self.underlying_store._wait([self._key(key) for key in keys], seconds)


# ---- TCPStore: a server thread in the master process, a connection in each client ----------

def _send(connection, message) -> None:
    data = pickle.dumps(message)
    connection.sendall(struct.pack("!Q", len(data)) + data)


def _receive(connection):
    header = _exactly(connection, 8)
    if header is None:
        return None
    return pickle.loads(_exactly(connection, struct.unpack("!Q", header)[0]))


def _exactly(connection, size: int):
    chunks, left = [], size
    while left:
        chunk = connection.recv(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Server:
    """The master's table, served to each connection by a thread of its own."""

    def __init__(self, host: str, port: int):
        self.table = _Table()
        self.table.values["init/"] = b"1"  # (torch's store holds one key of its own too)
        self.listener = socket.create_server((host, port))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection) -> None:
        with connection:
            while True:
                request = _receive(connection)
                if request is None:
                    return
                operation, arguments = request
                if operation == "wait":
                    _send(connection, self.table.wait(*arguments))
                else:
                    _send(connection, self.table.call(operation, *arguments))


class TCPStore(Store):
    """A store served on `host_name:port` by the process made with `is_master=True` (port 0:
    a free one, then `.port`), reached by every other process through a connection of its
    own; made by a client, it waits up to `timeout` for the master to listen."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = _DEFAULT_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd=None, use_libuv: bool = True):
        super().__init__(timeout)
        self.host = host_name
        self._server = _Server(host_name, port) if is_master else None
        self.port = self._server.port if is_master else port
        self.libuvBackend = use_libuv
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                self._connection = socket.create_connection((host_name, self.port))
                break
            except OSError as error:
                if time.monotonic() >= deadline:
                    raise DistStoreError(f"The client socket has timed out after "
                                         f"{timeout.total_seconds():g}s while trying to "
                                         f"connect to ({host_name}, {self.port}).") from error
                time.sleep(0.05)
        self._lock = threading.Lock()

    def _request(self, operation: str, arguments: tuple):
        with self._lock:
            _send(self._connection, (operation, arguments))
            return _receive(self._connection)

    def _call(self, operation: str, *arguments):
        return self._request(operation, arguments)

    def _wait(self, keys: list, seconds: float):
        return self._request("wait", (keys, seconds))
