# Token: none. redis-py's Lock is SET NX PX with a random value; nothing in it grows from one holder to the next, so it gives no fence token.
"""fencecheck client adapter (protocol 2) for redis-py's Lock.

`redis.Redis(host, port, socket_connect_timeout=<op timeout>, socket_timeout=<op timeout>)`
(`timeout: library` keeps redis-py's default, no timeout), one
`r.lock(name, timeout=<ttl>, blocking_timeout=<acquire timeout>)` for the whole run
(`expiry: library` keeps redis-py's default `timeout=None`: a key that never expires, and
nothing to renew, so no `renew`): `acquire()`, `release()`, `extend(ttl, replace_ttl=True)`.
`check` is the Lock's own belief, its local token being set (redis-py clears it at release),
with `server_held` from `owned()` (a GET of the key compared with that token).
Events: none.
"""
import os
import sys

import redis
from redis.exceptions import LockError, RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402


class Adapter:
    OPERATIONAL = (RedisError,)

    def __init__(self):
        self.lock = None
        self.ttl_ms = None

    def init(self, rid, init):
        host, port = init.host_port()
        self.r = redis.Redis(host=host, port=port, socket_connect_timeout=init.timeout,
                             socket_timeout=init.timeout)
        self.r.ping()
        self.ttl_ms = None if init.library_expiry else init.ttl_ms
        self.lock = self.r.lock(init.lock, timeout=None if self.ttl_ms is None else self.ttl_ms / 1000.0,
                                blocking_timeout=init.acquire_timeout_s)
        caps = ["release", "check"] + ([] if self.ttl_ms is None else ["renew"])
        return fc.ok(rid, library="redis-py", version=redis.__version__, token=None, capabilities=caps)

    def acquire(self, rid):
        if not self.lock.acquire():
            return fc.fail(rid, "Lock.acquire: not acquired within blocking_timeout")
        return fc.ok(rid, lease="%s:%s" % (self.lock.name, self.lock.local.token.decode()))

    def release(self, rid):
        try:
            self.lock.release()
        except LockError as e:  # LockNotOwnedError: the compare-and-delete found another value or none
            return fc.fail(rid, fc.describe(e), reason="not-owner")
        return fc.ok(rid)

    def renew(self, rid):
        try:
            self.lock.extend(self.ttl_ms / 1000.0, replace_ttl=True)
        except LockError as e:  # not owned any more (or never acquired): the lock is certainly not ours
            return fc.fail(rid, fc.describe(e))
        # The key's TTL was set to ttl_ms after the request was sent.
        return fc.ok(rid, valid_ms=self.ttl_ms)

    def check(self, rid):
        reply = fc.ok(rid, held=self.lock.local.token is not None)
        try:
            reply["server_held"] = bool(self.lock.owned())
        except Exception as e:
            reply["server_error"] = fc.describe(e)
        return reply


if __name__ == "__main__":
    fc.serve(Adapter())
