# Token: none. etcd3gw's Lock is one key /locks/<name> put (with a fresh lease) in a transaction when its create revision is 0; acquire() returns only True/False and the Lock keeps no revision of its key (it drops the transaction's header), so etcd3gw gives no fence token.
"""fencecheck client adapter (protocol 2) for etcd3gw's Lock (etcd's HTTP/JSON gateway client).

Drives the library as its own example and tests show: `etcd3gw.client(host, port,
timeout=<op timeout>)` (`timeout: library` keeps its default, none), a new
`client.lock(id=name, ttl=<ttl, whole seconds>)` per acquisition (`expiry: library` keeps its
default ttl of 30 s), `acquire()`, `refresh()` (`renew`), `release()`; or, with
`client_options: {style: with}`, `with client.lock(...) as lock:` entered at `acquire` and left
at `release` (`__enter__` returns the lock whatever acquire() answered, `__exit__` drops
release()'s answer: both reported as the library hands them over).
etcd3gw's acquire() is one attempt: it does not wait for a held lock, so a contended acquire
answers `fail` at once. etcd3gw talks to one endpoint: the first one given.
`check` is the library's own answer, `Lock.is_acquired()`, which is itself a read of the key
(its values compared with the Lock's uuid): no separate server read.
Events: none (the lease is the caller's to refresh).
"""
import importlib.metadata
import os
import sys

import etcd3gw
from etcd3gw.exceptions import Etcd3Exception

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

VERSION = importlib.metadata.version("etcd3gw")


def lease_name(lock):
    lease = "lease %x" % lock.lease.id if lock.lease is not None else "no lease"
    return "%s=%s %s" % (lock.key, lock.uuid, lease)


class Adapter:
    OPERATIONAL = (Etcd3Exception,)  # etcd3gw wraps requests' connection errors and timeouts in these

    def __init__(self):
        self.lock = None  # the Lock of the current (or last) acquisition
        self.block = fc.WithBlock()

    def init(self, rid, init):
        host, port = init.host_port()
        self.name = init.lock
        self.ttl = {} if init.library_expiry else {"ttl": init.ttl_whole_s}
        self.style = init.style()
        self.client = etcd3gw.client(host=host, port=port, timeout=init.timeout)
        self.client.status()
        fc.log("etcd3gw %s, api path %s, style %s" % (VERSION, self.client.api_path, self.style))
        return fc.ok(rid, library="etcd3gw", version=VERSION, token=None, capabilities=["release", "renew", "check"])

    def acquire(self, rid):
        lock = self.client.lock(id=self.name, **self.ttl)
        if self.style == "with":
            self.lock = self.block.enter(lock)
            return fc.ok(rid, lease=lease_name(self.lock))
        if not lock.acquire():
            # The transaction's compare failed: no key was put (the lease it granted is left to expire).
            return fc.fail(rid, "Lock.acquire returned False (the key exists)")
        self.lock = lock
        return fc.ok(rid, lease=lease_name(lock))

    def release(self, rid):
        if self.block.open:
            self.block.leave()  # Lock.__exit__ calls release() and drops its answer: the block was left
            return fc.ok(rid)
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        if self.lock.release():
            return fc.ok(rid)
        # release() deletes the key only if it still holds this Lock's uuid.
        return fc.fail(rid, "Lock.release returned False (key not ours)", reason="not-owner")

    def renew(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to renew")
        ttl = self.lock.refresh()
        if ttl <= 0:
            return fc.fail(rid, "Lock.refresh returned %d (lease expired)" % ttl)
        # The keep-alive restarted the lease's TTL after the request was sent.
        return fc.ok(rid, valid_ms=ttl * 1000)

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        return fc.ok(rid, held=bool(self.lock.is_acquired()))


if __name__ == "__main__":
    fc.serve(Adapter())
