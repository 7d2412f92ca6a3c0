# Token: Lock.revision after a successful acquire: the header revision of the put in its create-if-absent transaction (compare create_revision == 0), i.e. the lock key's create revision; etcd revisions grow with every write, so each new holder's key is created at a larger revision than any earlier holder's.
"""fencecheck client adapter (protocol 2) for aetcd's Lock (asyncio gRPC etcd client).

Drives the library as its Lock docstring shows: `aetcd.Client(host, port, timeout=<op timeout>)`
(`timeout: library` keeps its default, none), a new `client.lock(key, ttl=<ttl, whole seconds>)`
per acquisition (`expiry: library` keeps its default ttl of 60 s), `await lock.acquire(timeout=...)`,
`refresh()` (`renew`), `release()`; or, with `client_options: {style: with}`, `async with
client.lock(...) as lock:` entered at `acquire` and left at `release` (`__aenter__` calls
`acquire()` with its default timeout of 10 s and ignores the answer: reported as handed over).
With `client_options: {wait_for: true}` each call is bounded by `asyncio.wait_for(..., <op
timeout>)`, as applications do; its timeout is `info`. aetcd talks to one endpoint: the first.
`check` is the library's own answer, `await Lock.is_acquired()`, which is itself a read of the
key (its value compared with the Lock's uuid): no separate server read.
Events: none (the lease is the caller's to refresh).
"""
import importlib.metadata
import os
import sys

import aetcd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

VERSION = importlib.metadata.version("aetcd")


class Adapter:
    OPERATIONAL = (aetcd.ClientError,)  # aetcd maps every gRPC error to a ClientError subclass

    def __init__(self):
        self.client = None
        self.lock = None  # the Lock of the current (or last) acquisition
        self.block = fc.AsyncWithBlock()

    def call(self, awaitable):
        return fc.bounded(self.init_req, awaitable)

    async def init(self, rid, init):
        self.init_req = init
        host, port = init.host_port()
        self.key = init.lock.encode()
        self.ttl = {} if init.library_expiry else {"ttl": init.ttl_whole_s}
        self.timeout = init.acquire_timeout_s
        self.style = init.style()
        self.client = aetcd.Client(host=host, port=port, timeout=init.timeout)
        await self.call(self.client.status())
        fc.log("aetcd %s, style %s, wait_for %s" % (VERSION, self.style, init.wait_for))
        return fc.ok(rid, library="aetcd", version=VERSION, token="Lock.revision: the lock key's create revision",
                     capabilities=["release", "renew", "check"])

    def granted(self, rid, lock):
        self.lock = lock
        # In the with style, __aenter__ enters the block even when acquire() returned False: the
        # lock then has no lease and its revision is the holder's key's mod revision. Reported as
        # the library hands it over.
        lease = "lease %x" % lock.lease.id if lock.lease is not None else "no lease"
        return fc.ok(rid, token=lock.revision, lease="%s@%d %s" % (lock.key.decode(), lock.revision, lease))

    async def acquire(self, rid):
        lock = self.client.lock(self.key, **self.ttl)
        if self.style == "with":
            return self.granted(rid, await self.call(self.block.enter(lock)))
        if not await self.call(lock.acquire(timeout=self.timeout)):
            # Its last transaction found the key held and put nothing (its leases are left to expire).
            return fc.fail(rid, "Lock.acquire returned False (timed out)")
        return self.granted(rid, lock)

    async def release(self, rid):
        if self.block.open:
            await self.call(self.block.leave())  # __aexit__ awaits release() and drops its answer
            return fc.ok(rid)
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        if await self.call(self.lock.release()):
            return fc.ok(rid)
        # release() deletes the key only if it still holds this Lock's uuid.
        return fc.fail(rid, "Lock.release returned False (key not ours)", reason="not-owner")

    async def renew(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to renew")
        try:
            response = await self.call(self.lock.refresh())
        except ValueError as e:  # refresh() raises it when the lock has no lease: nothing held
            return fc.fail(rid, "Lock.refresh: %s" % fc.describe(e))
        ttl = response.TTL if response is not None else 0
        if ttl <= 0:
            return fc.fail(rid, "Lock.refresh: lease %x expired (TTL %d)" % (self.lock.lease.id, ttl))
        # The keep-alive restarted the lease's TTL after the request was sent.
        return fc.ok(rid, valid_ms=ttl * 1000)

    async def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        return fc.ok(rid, held=bool(await self.call(self.lock.is_acquired())))

    async def close(self):
        if self.client is not None:
            await self.client.close()


if __name__ == "__main__":
    fc.serve_async(Adapter())
