# Token: none. python-redis-lock's Lock is SET lock:<name> <random id> NX EX <expire>; its renewal thread only extends the key's expiry, and nothing grows from one holder to the next, so it gives no fence token.
"""fencecheck client adapter (protocol 2) for python-redis-lock's Lock.

Drives the library as its README shows: `redis.StrictRedis(host, port,
socket_connect_timeout=<op timeout>, socket_timeout=<op timeout + acquire timeout>)` (the
socket outlasts the longest BLPOP an acquire makes; `timeout: library` keeps redis-py's
default, none), a new `redis_lock.Lock(conn, name, expire=<ttl>, auto_renewal=True)` per
acquisition (each has its own random id), `acquire(blocking=True, timeout=...)`, `release()`.
`expiry: library` is `Lock(conn, name)`: the library's defaults, no expiry and no renewal.
The library renews the key in its own daemon thread (every 2/3 of expire) and tells its
caller nothing when a renewal fails (the thread ends), so the adapter has no `renew`.
`check` (with auto renewal only) is the library's own state: its renewal thread still running
(it ends when a renewal finds the key not its own); `server_held` is `get_owner_id() == id`.
Without auto renewal the Lock keeps no belief of its own, and the adapter offers no `check`.
Events: `renewed` each time the renewal thread's `extend()` returns (observed by a subclass
that only calls the library's own `extend` and reports its answer).
"""
import os
import sys

import redis
import redis_lock
from redis.exceptions import RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402


class ObservedLock(redis_lock.Lock):
    """The library's Lock; only its renewal thread calls `extend`, so each return is a renewal."""

    def extend(self, expire=None):
        try:
            super().extend(expire=expire)
        except Exception as e:
            fc.log("python-redis-lock renewal of %s failed: %s" % (self._name, fc.describe(e)))
            raise
        fc.event("renewed", "python-redis-lock renewal thread: extend(%s) of %s" % (expire, self._name))


class Adapter:
    # The errors the library documents (its own RuntimeError subclasses); a RedisError is a lost
    # connection or a timeout: unknown outcome.
    OPERATIONAL = (RedisError, redis_lock.AlreadyAcquired, redis_lock.NotAcquired,
                   redis_lock.AlreadyStarted, redis_lock.TimeoutNotUsable, redis_lock.InvalidTimeout,
                   redis_lock.TimeoutTooLarge, redis_lock.NotExpirable)

    def __init__(self):
        self.conn = None
        self.name = None
        self.lease = None
        self.timeout_s = None
        self.lock = None

    def init(self, rid, init):
        host, port = init.host_port()
        self.name = init.lock
        self.timeout_s = init.acquire_timeout_s
        self.lease = {} if init.library_expiry else {"expire": init.ttl_s, "auto_renewal": True}
        socket = init.timeout
        self.conn = redis.StrictRedis(host=host, port=port, socket_connect_timeout=socket,
                                      socket_timeout=None if socket is None else socket + self.timeout_s)
        self.conn.ping()
        return fc.ok(rid, library="python-redis-lock",
                     version="%s (redis-py %s)" % (redis_lock.__version__, redis.__version__), token=None,
                     capabilities=["release"] + (["check", "events"] if self.lease else []))

    def acquire(self, rid):
        lock = ObservedLock(self.conn, self.name, **self.lease)
        if not lock.acquire(blocking=True, timeout=self.timeout_s):
            return fc.fail(rid, "Lock.acquire: not acquired within timeout")
        self.lock = lock
        return fc.ok(rid, lease="lock:%s:%s" % (self.name, lock.id))

    def release(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        try:
            self.lock.release()
        except redis_lock.NotAcquired as e:  # the key holds another id or none: nothing removed
            self.lock = None
            return fc.fail(rid, fc.describe(e), reason="not-owner")
        self.lock = None
        return fc.ok(rid)

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        thread = self.lock._lock_renewal_thread
        reply = fc.ok(rid, held=thread is not None and thread.is_alive())
        try:
            reply["server_held"] = self.lock.get_owner_id() == self.lock.id
        except Exception as e:
            reply["server_error"] = fc.describe(e)
        return reply


if __name__ == "__main__":
    fc.serve(Adapter())
