# Token: none. pottery's Redlock is SET redlock:<key> <random uuid> NX PX on a majority of independent masters; nothing in it grows from one holder to the next, and pottery's docs never pair its NextID generator with Redlock as a fence token, so it gives none.
"""fencecheck client adapter (protocol 1) for pottery's Redlock (a release from PyPI).

Drives the library as its README shows: a new `Redlock(key=..., masters={...},
auto_release_time=ttl)` per acquisition ("it's safest to instantiate a new Redlock object every
time you need to protect your resource"), over one redis-py client per master (init's
`endpoints`, five independent Redis masters), then either
  style: calls (default)  `acquire(timeout=acquire timeout)` -> True/False, `release()`
  style: with             `with lock:` (context_manager_timeout = acquire timeout; the block is
                          entered at acquire and left at release, through an ExitStack)
`renew` is `extend()` (at most `num_extensions` times, the library's limit), `check` is
`locked()` (the validity left in seconds, 0 when not held). JSON lines on stdin/stdout, free
text on stderr. See docs/adapters.md.
"""
import contextlib
import importlib.metadata
import json
import logging
import sys
import traceback

import redis
from pottery import (ExtendUnlockedLock, PrimitiveError, QuorumIsImpossible, QuorumNotAchieved,
                     Redlock, ReleaseUnlockedLock, TooManyExtensions)
from redis.exceptions import RedisError

POTTERY_VERSION = importlib.metadata.version("pottery")

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s pottery-adapter %(levelname)s %(name)s: %(message)s")

# pottery's own exceptions (PrimitiveError subclasses) and redis-py's: operational.
DOCUMENTED = (QuorumNotAchieved, QuorumIsImpossible, ExtendUnlockedLock, ReleaseUnlockedLock,
              TooManyExtensions, RedisError)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def describe(e):
    if isinstance(e, PrimitiveError):  # its str() would list every master's client repr
        text = "%s: %s" % (type(e).__name__, e.key)
    else:
        text = "%s: %s" % (type(e).__name__, e)
    errors = getattr(e, "redis_errors", None)
    if errors:
        text += " (redis errors: %s)" % "; ".join("%s: %s" % (type(x).__name__, x) for x in errors)
    return text


def error_reply(rid, e):
    """info for a documented pottery / redis-py error; info with exception for anything else."""
    reply = {"id": rid, "type": "info", "error": describe(e)}
    if not isinstance(e, DOCUMENTED):
        reply["exception"] = True
        traceback.print_exception(e, file=sys.stderr)
        sys.stderr.flush()
    return reply


class Adapter:
    def __init__(self):
        self.masters = None
        self.key = None
        self.ttl_s = None
        self.timeout_s = None
        self.style = "calls"
        self.num_extensions = Redlock._NUM_EXTENSIONS
        self.raise_on_redis_errors = False
        self.lock = None
        self.stack = None

    def init(self, rid, req):
        opts = req.get("options") or {}
        self.style = opts.get("style", "calls")
        if self.style not in ("calls", "with"):
            return {"id": rid, "type": "fail", "error": "client option style must be 'calls' or 'with', not %r" % self.style}
        self.num_extensions = int(opts.get("num_extensions", Redlock._NUM_EXTENSIONS))
        self.raise_on_redis_errors = bool(opts.get("raise_on_redis_errors", False))
        self.key = req["lock"]
        self.ttl_s = req["ttl_ms"] / 1000.0
        self.timeout_s = req["acquire_timeout_ms"] / 1000.0
        masters = []
        for endpoint in req["endpoints"]:
            host, _, port = endpoint.rpartition(":")
            r = redis.Redis(host=host, port=int(port), socket_connect_timeout=5, socket_timeout=5)
            try:
                r.ping()
            except RedisError as e:
                return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (endpoint, type(e).__name__, e)}
            masters.append(r)
        self.masters = set(masters)
        print("pottery %s on redis-py %s, %d masters, style %s, auto_release_time %.3fs, num_extensions %d"
              % (POTTERY_VERSION, redis.__version__, len(masters), self.style, self.ttl_s, self.num_extensions),
              file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "pottery",
                "version": "%s (redis-py %s)" % (POTTERY_VERSION, redis.__version__),
                "token": None, "capabilities": ["release", "renew", "check"]}

    def new_lock(self):
        return Redlock(key=self.key, masters=self.masters, auto_release_time=self.ttl_s,
                       raise_on_redis_errors=self.raise_on_redis_errors,
                       num_extensions=self.num_extensions,
                       context_manager_blocking=True, context_manager_timeout=self.timeout_s)

    def acquire(self, rid):
        try:
            lock = self.new_lock()
            if self.style == "with":
                stack = contextlib.ExitStack()
                try:
                    stack.enter_context(lock)
                except QuorumNotAchieved as e:  # README: the context manager failed to acquire the lock
                    return {"id": rid, "type": "fail", "error": describe(e)}
                self.stack = stack
            else:
                if not lock.acquire(timeout=self.timeout_s):
                    return {"id": rid, "type": "fail", "error": "Redlock.acquire: not acquired within timeout"}
        except Exception as e:
            return error_reply(rid, e)
        self.lock = lock
        return {"id": rid, "type": "ok", "lease": "%s:%s" % (lock.key, lock._uuid)}

    def release(self, rid):
        lock, stack = self.lock, self.stack
        self.lock = self.stack = None
        if lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            if stack is not None:
                stack.close()  # Redlock.__exit__: release()
            else:
                lock.release()
        except ReleaseUnlockedLock as e:
            if e.redis_errors:  # some masters did not answer: the key may still be on them
                return {"id": rid, "type": "info", "error": describe(e)}
            return {"id": rid, "type": "fail", "reason": "not-owner", "error": describe(e)}
        except Exception as e:
            return error_reply(rid, e)
        return {"id": rid, "type": "ok"}

    def renew(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to renew"}
        try:
            self.lock.extend()
        except ExtendUnlockedLock as e:
            if e.redis_errors:  # some masters did not answer: unknown
                return {"id": rid, "type": "info", "error": describe(e)}
            return {"id": rid, "type": "fail", "error": describe(e)}
        except Exception as e:  # TooManyExtensions: not extended, the hold runs out: unknown
            return error_reply(rid, e)
        # extend() set PEXPIRE auto_release_time on a majority after the request was sent; the
        # validity is that less Redlock's own clock-drift allowance (as in acquire and locked()).
        drift_ms = self.ttl_s * 1000 * Redlock._CLOCK_DRIFT_FACTOR + 2
        return {"id": rid, "type": "ok", "valid_ms": max(int(self.ttl_s * 1000 - drift_ms), 0)}

    def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            return {"id": rid, "type": "ok", "held": self.lock.locked() > 0}
        except Exception as e:
            return error_reply(rid, e)


def main():
    adapter = Adapter()
    ops = {"acquire": adapter.acquire, "release": adapter.release,
           "renew": adapter.renew, "check": adapter.check}
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


if __name__ == "__main__":
    main()
