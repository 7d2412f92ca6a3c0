# Token: none. tooz's Lock API (acquire/release/is_still_owner) answers only booleans on every backend; none exposes a value that grows per acquisition (the zookeeper driver's kazoo lock node has a czxid, but tooz keeps that node private), so tooz gives no fence token.
"""fencecheck client adapter (protocol 1) for tooz (OpenStack's coordination library, from PyPI).

One adapter over four tooz drivers, chosen by init's `provider`:
  zookeeper -> zookeeper://<endpoints>?timeout=<ttl s>          (kazoo: session timeout)
  redis     -> redis://<endpoint>?timeout=5&lock_timeout=<ttl s> (redis-py Lock, expiry ttl)
  etcd      -> etcd3+http://<endpoint>?timeout=5&lock_timeout=<ttl s> (etcd3gw: lease TTL)
  postgres  -> postgresql://<user>[:<password>]@<endpoint>/<dbname> (pg_advisory_lock on its own connection)
Drives tooz as its tutorial shows: `coordination.get_coordinator(url, member_id)`,
`start(start_heart=True)` (tooz's heart thread calls `heartbeat()`, which keeps the redis and
etcd locks' expiry alive), `get_lock(name)` per acquisition, `acquire(blocking=<acquire timeout
in seconds>)` ("otherwise, the value is used as a timeout value"), `release()`; or, with
`client_options: {style: with}`, the context manager the tutorial documents, as
`with lock(blocking=<acquire timeout>):` held open from `acquire` to `release` (`__enter__`
raises LockAcquireFailed when acquire answers False). `check` is `is_still_owner()` where the
driver has it (zookeeper, redis). Options: `style`, and for postgres `user` (postgres),
`password`, `dbname` (postgres).
JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import importlib.metadata
import json
import logging
import math
import os
import queue
import sys
import threading
import traceback
import uuid

import tenacity
import tooz
from tooz import coordination

logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                    format="%(asctime)s tooz-adapter %(levelname)s %(name)s: %(message)s")

VERSION = importlib.metadata.version("tooz")
BACKEND = {"zookeeper": "kazoo", "redis": "redis", "etcd": "etcd3gw", "postgres": "psycopg2-binary"}
CHECK = ("zookeeper", "redis")  # the drivers whose Lock has is_still_owner()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def kazoo_lock_timeout():
    try:
        from kazoo.exceptions import LockTimeout
        return LockTimeout
    except ImportError:
        return ()


LOCK_TIMEOUT = kazoo_lock_timeout()


def error_reply(rid, e):
    """info for a documented tooz error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, tooz.ToozError):
        reply["exception"] = True
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return reply


def acquire_error(rid, e):
    """What an acquire that raised answers."""
    if isinstance(e, coordination.LockAcquireFailed):
        # with style: __enter__ raises it when acquire() answered False.
        return {"id": rid, "type": "fail", "error": "%s: %s" % (type(e).__name__, e)}
    if LOCK_TIMEOUT and isinstance(e, LOCK_TIMEOUT):
        # zookeeper: tooz passes kazoo's LockTimeout through; kazoo removed its contender node.
        return {"id": rid, "type": "fail", "error": "kazoo LockTimeout passed through tooz: %s" % e}
    if isinstance(e, tenacity.RetryError):
        # etcd, postgres: tooz's retry of "not acquired" (TryAgain) ran out of time and tenacity
        # raised instead of acquire() returning False; its last attempt put nothing.
        return {"id": rid, "type": "fail",
                "error": "tenacity.RetryError (tooz's acquire retries ran out; it raised instead of returning False): %s" % e}
    return error_reply(rid, e)


class WithHolder:
    """Holds `with lock(blocking=...):` open in a thread from enter() until leave()."""

    def __init__(self, cm):
        self.entered = queue.Queue()
        self.left = queue.Queue()
        self.go = threading.Event()
        threading.Thread(target=self._run, args=(cm,), daemon=True).start()

    def _run(self, cm):
        inside = False
        try:
            with cm as lock:
                inside = True
                self.entered.put((lock, None))
                self.go.wait()
        except BaseException as e:  # noqa: B036 - reported to the main thread
            (self.left if inside else self.entered).put((None, e))
            return
        self.left.put((None, None))

    def enter(self):
        return self.entered.get()

    def leave(self):
        self.go.set()
        return self.left.get()


class Adapter:
    def __init__(self):
        self.coord = None
        self.provider = None
        self.name = None
        self.timeout = None
        self.style = "explicit"
        self.member = None
        self.lock = None
        self.holder = None
        self.count = 0

    def url(self, req, ttl_s):
        eps, opts = req["endpoints"], req.get("options") or {}
        p = self.provider
        if p == "zookeeper":
            return "zookeeper://%s?timeout=%d" % (",".join(eps), ttl_s)
        if p == "redis":
            return "redis://%s?timeout=5&lock_timeout=%d" % (eps[0], ttl_s)
        if p == "etcd":
            return "etcd3+http://%s?timeout=5&lock_timeout=%d" % (eps[0], ttl_s)
        if p == "postgres":
            user = opts.get("user", "postgres")
            if opts.get("password"):
                user += ":" + opts["password"]
            return "postgresql://%s@%s/%s" % (user, eps[0], opts.get("dbname", "postgres"))
        return None

    def init(self, rid, req):
        self.provider = req.get("provider")
        self.name = req["lock"].encode()
        self.timeout = req["acquire_timeout_ms"] / 1000.0
        self.style = (req.get("options") or {}).get("style", "explicit")
        if self.style not in ("explicit", "with"):
            return {"id": rid, "type": "fail", "error": "unknown style %r (explicit or with)" % self.style}
        ttl_s = max(1, math.ceil(req["ttl_ms"] / 1000.0))  # tooz reads these options as whole seconds
        url = self.url(req, ttl_s)
        if url is None:
            return {"id": rid, "type": "fail", "error": "provider %r: tooz adapter knows zookeeper, redis, etcd, postgres" % self.provider}
        self.member = ("%s-%d-%s" % (req.get("worker", "fencecheck"), os.getpid(), uuid.uuid4().hex[:8])).encode()
        try:
            self.coord = coordination.get_coordinator(url, self.member)
            self.coord.start(start_heart=True)
        except Exception as e:
            if not isinstance(e, tooz.ToozError):
                traceback.print_exc()
            return {"id": rid, "type": "fail", "error": "start %s: %s: %s" % (url, type(e).__name__, e)}
        backend = "%s %s" % (BACKEND[self.provider], importlib.metadata.version(BACKEND[self.provider]))
        print("tooz %s, driver %s (%s), member %s, heart %s, style %s" % (
            VERSION, type(self.coord).__name__, backend, self.member.decode(),
            self.coord.heart.is_alive(), self.style), file=sys.stderr, flush=True)
        caps = ["release"] + (["check"] if self.provider in CHECK else [])
        return {"id": rid, "type": "ok", "library": "tooz (%s driver)" % self.provider,
                "version": "%s (%s)" % (VERSION, backend), "token": None, "capabilities": caps}

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
            print("lease name: %s: %s" % (type(e).__name__, e), file=sys.stderr, flush=True)
        return "%s %s #%d" % (self.name.decode(), self.member.decode(), self.count)

    def acquire(self, rid):
        try:
            lock = self.coord.get_lock(self.name)
        except Exception as e:
            return error_reply(rid, e)
        if self.style == "with":
            self.holder = WithHolder(lock(blocking=self.timeout))
            held, e = self.holder.enter()
            if e is not None:
                self.holder = None
                return acquire_error(rid, e)
            self.lock = held
            return {"id": rid, "type": "ok", "lease": self.lease_name(held)}
        try:
            got = lock.acquire(blocking=self.timeout)
        except Exception as e:
            return acquire_error(rid, e)
        if not got:
            return {"id": rid, "type": "fail", "error": "Lock.acquire returned False"}
        self.lock = lock
        return {"id": rid, "type": "ok", "lease": self.lease_name(lock)}

    def release(self, rid):
        if self.style == "with":
            holder, self.holder = self.holder, None
            if holder is None:
                return {"id": rid, "type": "fail", "error": "no acquisition to release"}
            _, e = holder.leave()
            if e is not None:
                return error_reply(rid, e)
            # Lock.__exit__ calls release() and drops its answer: the block was left.
            return {"id": rid, "type": "ok"}
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            released = self.lock.release()
        except Exception as e:
            return error_reply(rid, e)
        if released:
            return {"id": rid, "type": "ok"}
        return {"id": rid, "type": "fail", "reason": "not-owner", "error": "Lock.release returned False"}

    def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            return {"id": rid, "type": "ok", "held": bool(self.lock.is_still_owner())}
        except Exception as e:
            return error_reply(rid, e)

    def close(self):
        if self.coord is not None:
            try:
                self.coord.stop()
            except Exception as e:
                print("stop: %s: %s" % (type(e).__name__, e), file=sys.stderr, flush=True)


def main():
    adapter = Adapter()
    ops = {"acquire": adapter.acquire, "release": adapter.release, "check": adapter.check}
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid, op = req.get("id"), req.get("op")
        if op == "init":
            reply = adapter.init(rid, req)
        elif op in ops:
            reply = ops[op](rid)
        else:
            reply = {"id": rid, "type": "fail", "error": "unsupported op %r" % op}
        send(reply)
    adapter.close()


if __name__ == "__main__":
    main()
