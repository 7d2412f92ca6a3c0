# Token: none. redis.asyncio's Lock is the same SET NX PX with a random value as redis-py's sync Lock; nothing in it grows from one holder to the next, so it gives no fence token.
"""fencecheck client adapter (protocol 2) for redis-py's asyncio Lock (redis.asyncio).

The asyncio sibling of adapters/redis-py: `redis.asyncio.Redis(host, port,
socket_connect_timeout=<op timeout>, socket_timeout=<op timeout>)` (`timeout: library` keeps
redis-py's default, none), one `lock(name, timeout=<ttl>, blocking_timeout=<acquire timeout>)`
(`expiry: library`: `timeout=None`, no expiry, no `renew`), then `await lock.acquire()`,
`release()`, `extend(ttl, replace_ttl=True)`, all on one event loop. With
`client_options: {wait_for: true}` each call is bounded by `asyncio.wait_for(..., <op
timeout>)`, as applications do; its timeout is `info`.
`check` is the Lock's own belief, its local token being set, with `server_held` from
`await owned()`. Events: none.
"""
import os
import sys

import redis
import redis.asyncio
from redis.exceptions import LockError, RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402


class Adapter:
    OPERATIONAL = (RedisError,)

    def __init__(self):
        self.r = None
        self.lock = None
        self.ttl_ms = None
        self.init_req = None

    def call(self, awaitable):
        return fc.bounded(self.init_req, awaitable)

    async def init(self, rid, init):
        self.init_req = init
        host, port = init.host_port()
        self.r = redis.asyncio.Redis(host=host, port=port, socket_connect_timeout=init.timeout,
                                     socket_timeout=init.timeout)
        await self.call(self.r.ping())
        self.ttl_ms = None if init.library_expiry else init.ttl_ms
        self.lock = self.r.lock(init.lock, timeout=None if self.ttl_ms is None else self.ttl_ms / 1000.0,
                                blocking_timeout=init.acquire_timeout_s)
        caps = ["release", "check"] + ([] if self.ttl_ms is None else ["renew"])
        return fc.ok(rid, library="redis-py (redis.asyncio)", version=redis.__version__, token=None,
                     capabilities=caps)

    async def acquire(self, rid):
        if not await self.call(self.lock.acquire()):
            return fc.fail(rid, "Lock.acquire: not acquired within blocking_timeout")
        return fc.ok(rid, lease="%s:%s" % (self.lock.name, self.lock.local.token.decode()))

    async def release(self, rid):
        try:
            await self.call(self.lock.release())
        except LockError as e:  # LockNotOwnedError: the compare-and-delete found another value or none
            return fc.fail(rid, fc.describe(e), reason="not-owner")
        return fc.ok(rid)

    async def renew(self, rid):
        try:
            await self.call(self.lock.extend(self.ttl_ms / 1000.0, replace_ttl=True))
        except LockError as e:  # not owned any more (or never acquired): the lock is certainly not ours
            return fc.fail(rid, fc.describe(e))
        # The key's TTL was set to ttl_ms after the request was sent.
        return fc.ok(rid, valid_ms=self.ttl_ms)

    async def check(self, rid):
        reply = fc.ok(rid, held=self.lock.local.token is not None)
        try:
            reply["server_held"] = bool(await self.call(self.lock.owned()))
        except Exception as e:
            reply["server_error"] = fc.describe(e)
        return reply

    async def close(self):
        if self.r is not None:
            await self.r.aclose()


if __name__ == "__main__":
    fc.serve_async(Adapter())
