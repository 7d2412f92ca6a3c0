# Token: none. python-redis-lock's Lock is SET lock:<name> <random id> NX EX <expire>; its renewal thread only extends the key's expiry, and nothing grows from one holder to the next, so it gives no fence token.
"""fencecheck client adapter (protocol 1) for python-redis-lock's Lock (a release from PyPI).

Drives the library as its README shows: `redis_lock.Lock(conn, name, expire=ttl,
auto_renewal=True)`, `acquire(blocking=True, timeout=...)`, `release()`. A new Lock per
acquisition (each has its own random id). The library renews the key in its own daemon thread
(every 2/3 of expire) and tells its caller nothing when a renewal fails, so the adapter lists
neither `renew` nor `check` nor events: the worker trusts the library's own renewal.
JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import json
import logging
import sys
import traceback

import redis
import redis_lock
from redis.exceptions import RedisError

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s python-redis-lock-adapter %(levelname)s %(name)s: %(message)s")

# The errors the library documents (its own RuntimeError subclasses); a RedisError is a lost
# connection or a timeout: unknown outcome.
DOCUMENTED = (redis_lock.AlreadyAcquired, redis_lock.NotAcquired, redis_lock.AlreadyStarted,
              redis_lock.TimeoutNotUsable, redis_lock.InvalidTimeout, redis_lock.TimeoutTooLarge,
              redis_lock.NotExpirable)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_reply(rid, e):
    """info for a connection error or a documented library error; with exception for anything else."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, (RedisError,) + DOCUMENTED):
        reply["exception"] = True
        traceback.print_exc()
    return reply


class Adapter:
    def __init__(self):
        self.conn = None
        self.name = None
        self.ttl_s = None
        self.timeout_s = None
        self.lock = None

    def init(self, rid, req):
        host, _, port = req["endpoints"][0].rpartition(":")
        self.name = req["lock"]
        self.ttl_s = req["ttl_ms"] / 1000.0
        self.timeout_s = req["acquire_timeout_ms"] / 1000.0
        # The socket timeout outlasts the longest BLPOP the acquire makes (its timeout).
        self.conn = redis.StrictRedis(host=host, port=int(port), socket_connect_timeout=5,
                                      socket_timeout=5 + self.timeout_s)
        try:
            self.conn.ping()
        except RedisError as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        print("python-redis-lock %s on redis-py %s" % (redis_lock.__version__, redis.__version__),
              file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "python-redis-lock",
                "version": "%s (redis-py %s)" % (redis_lock.__version__, redis.__version__),
                "token": None, "capabilities": ["release"]}

    def acquire(self, rid):
        try:
            lock = redis_lock.Lock(self.conn, self.name, expire=self.ttl_s, auto_renewal=True)
            got = lock.acquire(blocking=True, timeout=self.timeout_s)
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            return {"id": rid, "type": "fail", "error": "Lock.acquire: not acquired within timeout"}
        self.lock = lock
        return {"id": rid, "type": "ok", "lease": "lock:%s:%s" % (self.name, lock.id)}

    def release(self, rid):
        lock, self.lock = self.lock, None
        if lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            lock.release()
        except redis_lock.NotAcquired as e:  # the key holds another id or none: nothing removed
            return {"id": rid, "type": "fail", "reason": "not-owner", "error": "%s: %s" % (type(e).__name__, e)}
        except Exception as e:
            return error_reply(rid, e)
        return {"id": rid, "type": "ok"}


def main():
    adapter = Adapter()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid, op = req.get("id"), req.get("op")
        if op == "init":
            reply = adapter.init(rid, req)
        elif op == "acquire":
            reply = adapter.acquire(rid)
        elif op == "release":
            reply = adapter.release(rid)
        else:
            reply = {"id": rid, "type": "fail", "error": "unsupported op %r" % op}
        send(reply)


if __name__ == "__main__":
    main()
