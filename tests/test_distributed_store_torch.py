"""torch.distributed's key-value stores against torch's: TCPStore (a master and a client
over loopback), HashStore and PrefixStore, every operation and the timeout errors, and a
get that blocks until another thread sets the key."""

import datetime
import threading
import time

import pytest

import autojit.distributed as dist

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")


def _operations(d) -> list:
    out = []
    short = datetime.timedelta(seconds=1)
    master = d.TCPStore("127.0.0.1", 0, 1, True, timeout=short)
    client = d.TCPStore("127.0.0.1", master.port, 1, False, timeout=short)
    out.append(master.num_keys())
    master.set("a", "x")
    out += [client.get("a"), master.num_keys(), client.add("c", 5), master.add("c", 2),
            client.get("c")]
    out += [client.compare_set("a", "x", "y"), client.compare_set("a", "z", "w"),
            client.compare_set("new", "", "q"), master.get("new")]
    out += [client.check(["a"]), client.check(["zz"]), client.delete_key("a"),
            client.delete_key("a"), master.num_keys()]
    client.append("ap", "x")
    client.append("ap", b"y")
    client.multi_set(["m1", "m2"], ["1", "2"])
    out += [master.get("ap"), master.multi_get(["m1", "m2"]), master.timeout]
    for call in (lambda: client.get("missing"),
                 lambda: client.wait(["missing"], datetime.timedelta(seconds=0.3))):
        with pytest.raises(d.DistStoreError) as raised:
            call()
        out.append(str(raised.value))
    local = d.HashStore()
    local.set("k", b"v")
    prefixed = d.PrefixStore("pre", local)
    prefixed.set("x", "1")
    out += [local.get("k"), local.get("pre/x"), prefixed.get("x"),
            prefixed.underlying_store is local, prefixed.check(["x"]), prefixed.add("n", 3),
            local.get("pre/n")]
    return out


def test_the_stores_answer_as_torchs():
    assert _operations(dist) == _operations(tdist)


def test_a_get_waits_for_another_thread_to_set_the_key():
    master = dist.TCPStore("127.0.0.1", 0, 2, True, timeout=datetime.timedelta(seconds=10))
    client = dist.TCPStore("127.0.0.1", master.port, 2, False)
    threading.Thread(target=lambda: (time.sleep(0.2), master.set("ready", "go"))).start()
    started = time.monotonic()
    assert client.get("ready") == b"go" and time.monotonic() - started >= 0.15
