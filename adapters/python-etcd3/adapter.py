# Token: none. python-etcd3's Lock is one key /locks/<name> put with a random uuid value when absent; the library exposes no revision or counter for its holder, so it gives no fence token.
"""fencecheck client adapter (protocol 2) for python-etcd3's Lock.

`etcd3.client(host, port, timeout=<op timeout>)` (`timeout: library` keeps its default, none),
then per acquisition `client.lock(name, ttl=<ttl, whole seconds>)` (`expiry: library` keeps its
default ttl of 60 s): `acquire(timeout=<acquire timeout>)`, `refresh()` (`renew`), `release()`.
`check` is the library's own answer, `Lock.is_acquired()`, which is itself a read of the key
(its value compared with the Lock's uuid): no separate server read.
Events: none (the lease is the caller's to refresh). python-etcd3 talks to one endpoint: the
first one given.
"""
import os
import sys

import etcd3
import grpc
from etcd3.exceptions import Etcd3Exception

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402


class Adapter:
    OPERATIONAL = (Etcd3Exception, grpc.RpcError)

    def __init__(self):
        self.client = None
        self.lock = None  # the Lock of the current (or last) acquisition
        self.name = None
        self.ttl = None
        self.acquire_timeout = None

    def init(self, rid, init):
        host, port = init.host_port()
        self.name = init.lock
        self.ttl = {} if init.library_expiry else {"ttl": init.ttl_whole_s}
        self.acquire_timeout = init.acquire_timeout_s
        self.client = etcd3.client(host=host, port=port, timeout=init.timeout)
        self.client.status()
        return fc.ok(rid, library="python-etcd3", version=etcd3.__version__, token=None,
                     capabilities=["release", "renew", "check"])

    def acquire(self, rid):
        self.lock = self.client.lock(self.name, **self.ttl)
        if not self.lock.acquire(timeout=self.acquire_timeout):
            return fc.fail(rid, "Lock.acquire: not acquired within %ss" % self.acquire_timeout)
        return fc.ok(rid, lease="%s=%s lease %x" % (self.lock.key, self.lock.uuid.hex(), self.lock.lease.id))

    def release(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        if self.lock.release():
            return fc.ok(rid)
        # release() is a transaction that deletes the key only if it still holds this lock's uuid.
        return fc.fail(rid, "Lock.release returned False (key not ours)", reason="not-owner")

    def renew(self, rid):
        if self.lock is None or self.lock.lease is None:
            return fc.fail(rid, "no acquisition to renew")
        responses = self.lock.refresh()
        ttl = responses[0].TTL if responses else 0
        if ttl <= 0:
            return fc.fail(rid, "Lock.refresh: lease %x expired (TTL %d)" % (self.lock.lease.id, ttl))
        # The keep-alive restarted the lease's TTL after the request was sent.
        return fc.ok(rid, valid_ms=ttl * 1000)

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        return fc.ok(rid, held=bool(self.lock.is_acquired()))


if __name__ == "__main__":
    fc.serve(Adapter())
