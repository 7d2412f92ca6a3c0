# Token: none by default. pottery's Redlock is SET redlock:<key> <random uuid> NX PX on a majority of independent masters; nothing in it grows from one holder to the next, and pottery's docs never pair its NextID generator with Redlock as a fence token. With client option token: nextid the adapter draws NextID over the same masters right after each grant, as a user pairing the two would, and reports that.
"""fencecheck client adapter (protocol 2) for pottery's Redlock.

Drives the library as its README shows: a new `Redlock(key=..., masters={...},
auto_release_time=<ttl>)` per acquisition ("it's safest to instantiate a new Redlock object every
time you need to protect your resource"; `expiry: library` keeps its default of 10 s), over one
`redis.Redis(host, port, socket_connect_timeout=<op timeout>, socket_timeout=<op timeout>)` per
master (init's `endpoints`; `timeout: library` keeps redis-py's default, none), then either
  style: calls (default)  `acquire(timeout=<acquire timeout>)` -> True/False, `release()`
  style: with             `with lock:` (context_manager_timeout = acquire timeout), entered at
                          acquire and left at release
`renew` is `extend()` (at most `num_extensions` times, the library's limit). `check` is the
library's own answer, `locked()` (the validity left on a majority, 0 when not held), which is
itself a read of the masters: no separate server read.
`token: nextid`: `next(NextID(key=<lock>, masters=<the same masters>))` right after each grant;
a draw that raises leaves the grant `ok`, without a token, its error in `read_back`.
Events: none (pottery extends a hold only when asked: `renew`).
"""
import importlib.metadata
import os
import sys

import redis
from pottery import (ExtendUnlockedLock, NextID, PrimitiveError, QuorumIsImpossible, QuorumNotAchieved,
                     Redlock, ReleaseUnlockedLock, TooManyExtensions)
from redis.exceptions import RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

POTTERY_VERSION = importlib.metadata.version("pottery")


def describe(e):
    if isinstance(e, PrimitiveError):  # its str() would list every master's client repr
        text = "%s: %s" % (type(e).__name__, e.key)
    else:
        text = fc.describe(e)
    errors = getattr(e, "redis_errors", None)
    if errors:
        text += " (redis errors: %s)" % "; ".join(fc.describe(x) for x in errors)
    return text


class Adapter:
    # pottery's own exceptions (PrimitiveError subclasses) and redis-py's: operational.
    OPERATIONAL = (QuorumNotAchieved, QuorumIsImpossible, ExtendUnlockedLock, ReleaseUnlockedLock,
                   TooManyExtensions, RedisError)

    def __init__(self):
        self.lock = None
        self.block = fc.WithBlock()

    def init(self, rid, init):
        self.style = init.style()
        self.key = init.lock
        self.timeout_s = init.acquire_timeout_s
        self.lease = {} if init.library_expiry else {"auto_release_time": init.ttl_s}
        self.num_extensions = int(init.option("num_extensions", Redlock._NUM_EXTENSIONS))
        self.raise_on_redis_errors = bool(init.option("raise_on_redis_errors", False))
        nextid = init.option("token", "none", ("none", "nextid")) == "nextid"
        masters = []
        for endpoint in init.endpoints:
            host, _, port = endpoint.rpartition(":")
            r = redis.Redis(host=host, port=int(port), socket_connect_timeout=init.timeout,
                            socket_timeout=init.timeout)
            r.ping()
            masters.append(r)
        self.masters = set(masters)
        self.nextid = NextID(key=self.key, masters=self.masters) if nextid else None
        fc.log("pottery %s on redis-py %s, %d masters, style %s, %s, num_extensions %d, token %s"
               % (POTTERY_VERSION, redis.__version__, len(masters), self.style, self.lease or "auto_release_time default",
                  self.num_extensions, "nextid" if nextid else "none"))
        return fc.ok(rid, library="pottery", version="%s (redis-py %s)" % (POTTERY_VERSION, redis.__version__),
                     token="NextID(key=<lock>) over the same masters, drawn right after each grant" if nextid else None,
                     capabilities=["release", "renew", "check"])

    def acquire(self, rid):
        lock = Redlock(key=self.key, masters=self.masters, raise_on_redis_errors=self.raise_on_redis_errors,
                       num_extensions=self.num_extensions, context_manager_blocking=True,
                       context_manager_timeout=self.timeout_s, **self.lease)
        if self.style == "with":
            try:
                self.block.enter(lock)
            except QuorumNotAchieved as e:  # README: the context manager failed to acquire the lock
                return fc.fail(rid, describe(e))
        elif not lock.acquire(timeout=self.timeout_s):
            return fc.fail(rid, "Redlock.acquire: not acquired within timeout")
        self.lock = lock
        reply = fc.ok(rid, lease="%s:%s" % (lock.key, lock._uuid))
        if self.nextid is not None:
            try:
                reply["token"] = next(self.nextid)
            except Exception as e:
                reply["read_back"] = "NextID raised %s" % describe(e)
        return reply

    def release(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        try:
            if self.block.open:
                self.block.leave()  # Redlock.__exit__: release()
            else:
                self.lock.release()
        except ReleaseUnlockedLock as e:
            if e.redis_errors:  # some masters did not answer: the key may still be on them
                return fc.info(rid, describe(e))
            self.lock = None
            return fc.fail(rid, describe(e), reason="not-owner")
        self.lock = None
        return fc.ok(rid)

    def renew(self, rid):
        if self.lock is None:
            return fc.fail(rid, "no acquisition to renew")
        try:
            self.lock.extend()
        except ExtendUnlockedLock as e:
            if e.redis_errors:  # some masters did not answer: unknown
                return fc.info(rid, describe(e))
            return fc.fail(rid, describe(e))
        # extend() set PEXPIRE auto_release_time on a majority after the request was sent; the
        # validity is that less Redlock's own clock-drift allowance (as in acquire and locked()).
        ttl_ms = self.lock.auto_release_time * 1000
        drift_ms = ttl_ms * Redlock._CLOCK_DRIFT_FACTOR + 2
        return fc.ok(rid, valid_ms=max(int(ttl_ms - drift_ms), 0))

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        return fc.ok(rid, held=self.lock.locked() > 0)


if __name__ == "__main__":
    fc.serve(Adapter())
