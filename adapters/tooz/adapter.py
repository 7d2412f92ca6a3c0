# Token: none. tooz's Lock API (acquire/release/is_still_owner) answers only booleans on every backend; none exposes a value that grows per acquisition (the zookeeper driver's kazoo lock node has a czxid, but tooz keeps that node private), so tooz gives no fence token.
"""fencecheck client adapter (protocol 2) for tooz (OpenStack's coordination library).

One adapter over four tooz drivers, chosen by init's `provider`:
  zookeeper -> zookeeper://<endpoints>?timeout=<ttl s>               (kazoo's session timeout)
  redis     -> redis://<endpoint>?timeout=<op s>&lock_timeout=<ttl s> (socket timeout; Lock expiry)
  etcd      -> etcd3+http://<endpoint>?timeout=<op s>&lock_timeout=<ttl s> (request timeout; lease TTL)
  postgres  -> postgresql://<user>[:<password>]@<endpoint>/<dbname> (pg_advisory_lock on its own connection)
`timeout: library` leaves `timeout` out of the redis and etcd URLs (tooz's default, 30 s);
`expiry: library` leaves out `lock_timeout` (tooz then uses its `timeout`) and zookeeper's
session `timeout` (kazoo's 10 s). Times are whole seconds, as tooz reads them.
Drives tooz as its tutorial shows: `coordination.get_coordinator(url, member_id)`,
`start(start_heart=True)` (tooz's heart thread calls `heartbeat()`, which keeps the redis and
etcd locks' expiry alive), `get_lock(name)` per acquisition, `acquire(blocking=<acquire timeout
in seconds>)` ("otherwise, the value is used as a timeout value"), `release()`; or, with
`client_options: {style: with}`, the context manager the tutorial documents, as
`with lock(blocking=<acquire timeout>):` entered at `acquire` and left at `release`
(`__enter__` raises LockAcquireFailed when acquire answers False).
`check` is tooz's own belief, the Lock's `acquired` flag; where the driver can read the server
(`is_still_owner()`: zookeeper, redis) the reply adds `server_held`.
Options: `style`, `timeout`, `expiry`, and for postgres `user` (postgres), `password`, `dbname`
(postgres).
Events: `renewed` each time tooz's heartbeat refreshed a held lock (redis, etcd: the Lock's
`heartbeat()` answered True; observed by wrapping that method of the lock, which only calls it).
"""
import importlib.metadata
import logging
import math
import os
import sys
import uuid

import tenacity
import tooz
from tooz import coordination

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                    format="%(asctime)s tooz-adapter %(levelname)s %(name)s: %(message)s")

VERSION = importlib.metadata.version("tooz")
BACKEND = {"zookeeper": "kazoo", "redis": "redis", "etcd": "etcd3gw", "postgres": "psycopg2-binary"}
SERVER_CHECK = ("zookeeper", "redis")  # the drivers whose Lock has is_still_owner()
HEARTBEAT = ("redis", "etcd")  # the drivers whose heartbeat refreshes held locks


def kazoo_lock_timeout():
    try:
        from kazoo.exceptions import LockTimeout
        return LockTimeout
    except ImportError:
        return ()


LOCK_TIMEOUT = kazoo_lock_timeout()


def acquire_error(rid, e):
    """What an acquire that raised answers."""
    if isinstance(e, coordination.LockAcquireFailed):
        # with style: __enter__ raises it when acquire() answered False.
        return fc.fail(rid, fc.describe(e))
    if LOCK_TIMEOUT and isinstance(e, LOCK_TIMEOUT):
        # zookeeper: tooz passes kazoo's LockTimeout through; kazoo removed its contender node.
        return fc.fail(rid, "kazoo LockTimeout passed through tooz: %s" % e)
    if isinstance(e, tenacity.RetryError):
        # etcd, postgres: tooz's retry of "not acquired" (TryAgain) ran out of time and tenacity
        # raised instead of acquire() returning False; its last attempt put nothing.
        return fc.fail(rid, "tenacity.RetryError (tooz's acquire retries ran out; it raised instead of returning False): %s" % e)
    return fc.error_reply(rid, e, Adapter.OPERATIONAL)


def observe_heartbeat(lock, name):
    """Wraps the lock's own heartbeat (called by tooz's heart thread) to report each refresh."""
    beat = lock.heartbeat

    def heartbeat():
        refreshed = beat()
        if refreshed:
            fc.event("renewed", "tooz heartbeat refreshed lock %s" % name)
        return refreshed

    lock.heartbeat = heartbeat


class Adapter:
    OPERATIONAL = (tooz.ToozError,)

    def __init__(self):
        self.coord = None
        self.lock = None
        self.block = fc.WithBlock()
        self.count = 0

    def url(self, init):
        eps, p = init.endpoints, self.provider
        timeout = init.timeout
        query = [] if timeout is None else ["timeout=%d" % max(1, math.ceil(timeout))]
        if not init.library_expiry:
            query.append("lock_timeout=%d" % init.ttl_whole_s)
        query = "?" + "&".join(query) if query else ""
        if p == "zookeeper":
            return "zookeeper://%s%s" % (",".join(eps), "" if init.library_expiry else "?timeout=%d" % init.ttl_whole_s)
        if p == "redis":
            return "redis://%s%s" % (eps[0], query)
        if p == "etcd":
            return "etcd3+http://%s%s" % (eps[0], query)
        if p == "postgres":
            user = init.option("user", "postgres")
            if init.options.get("password"):
                user += ":" + init.options["password"]
            return "postgresql://%s@%s/%s" % (user, eps[0], init.option("dbname", "postgres"))
        raise fc.OptionError("provider %r: tooz adapter knows zookeeper, redis, etcd, postgres" % p)

    def init(self, rid, init):
        self.provider = init.provider
        self.name = init.lock.encode()
        self.timeout = init.acquire_timeout_s
        self.style = init.style()
        url = self.url(init)
        self.member = ("%s-%d-%s" % (init.worker or "fencecheck", os.getpid(), uuid.uuid4().hex[:8])).encode()
        self.coord = coordination.get_coordinator(url, self.member)
        self.coord.start(start_heart=True)
        backend = "%s %s" % (BACKEND[self.provider], importlib.metadata.version(BACKEND[self.provider]))
        fc.log("tooz %s, driver %s (%s), url %s, member %s, heart %s, style %s" % (
            VERSION, type(self.coord).__name__, backend, url, self.member.decode(),
            self.coord.heart.is_alive(), self.style))
        caps = ["release", "check"] + (["events"] if self.provider in HEARTBEAT else [])
        return fc.ok(rid, library="tooz (%s driver)" % self.provider, version="%s (%s)" % (VERSION, backend),
                     token=None, capabilities=caps)

    def lease_name(self, lock):
        """A name of this acquisition, read from the driver's lock (private state: for naming only)."""
        self.count += 1
        try:
            if self.provider == "zookeeper":
                return "%s/%s" % (lock._lock.path, lock._lock.node)
            if self.provider == "redis":
                return "%s:%s" % (lock.name.decode(), lock._lock.local.token.decode())
            if self.provider == "etcd":
                return "%s=%s lease %x" % (lock._key.decode(), lock._uuid, lock._lease.id)
            if self.provider == "postgres":
                return "pg_advisory_lock(%d, %d) %s #%d" % (lock.key[0], lock.key[1], self.member.decode(), self.count)
        except Exception as e:  # a name only: never fails the acquisition
            fc.log("lease name: %s" % fc.describe(e))
        return "%s %s #%d" % (self.name.decode(), self.member.decode(), self.count)

    def acquire(self, rid):
        lock = self.coord.get_lock(self.name)
        if self.provider in HEARTBEAT:
            observe_heartbeat(lock, self.name.decode())
        try:
            if self.style == "with":
                self.block.enter(lock(blocking=self.timeout))
            elif not lock.acquire(blocking=self.timeout):
                return fc.fail(rid, "Lock.acquire returned False")
        except Exception as e:
            return acquire_error(rid, e)
        self.lock = lock
        return fc.ok(rid, lease=self.lease_name(lock))

    def release(self, rid):
        if self.block.open:
            self.block.leave()  # Lock.__exit__ calls release() and drops its answer: the block was left
            return fc.ok(rid)
        if self.lock is None:
            return fc.fail(rid, "no acquisition to release")
        if self.lock.release():
            return fc.ok(rid)
        return fc.fail(rid, "Lock.release returned False", reason="not-owner")

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        reply = fc.ok(rid, held=bool(self.lock.acquired))
        if self.provider in SERVER_CHECK:
            try:
                reply["server_held"] = bool(self.lock.is_still_owner())
            except Exception as e:
                reply["server_error"] = fc.describe(e)
        return reply

    def close(self):
        if self.coord is not None:
            try:
                self.coord.stop()
            except Exception as e:
                fc.log("stop: %s" % fc.describe(e))


if __name__ == "__main__":
    fc.serve(Adapter())
