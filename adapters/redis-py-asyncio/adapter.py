# Token: none. redis.asyncio's Lock is the same SET NX PX with a random value as redis-py's sync Lock; nothing in it grows from one holder to the next, so it gives no fence token.
"""fencecheck client adapter (protocol 1) for redis-py's asyncio Lock (redis.asyncio, a release from PyPI).

The asyncio sibling of adapters/redis-py: `redis.asyncio.Redis(...).lock(name, timeout=ttl,
blocking_timeout=acquire timeout)`, then `await lock.acquire()`, `await lock.release()`,
`await lock.extend(ttl, replace_ttl=True)` and `await lock.owned()`, all on one event loop
(asyncio.run). stdin is read in the loop's default executor so that the loop itself only runs
the library. JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import asyncio
import json
import sys
import traceback

import redis
import redis.asyncio
from redis.exceptions import LockError, RedisError


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_reply(rid, e):
    """info for a documented redis-py error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, RedisError):
        reply["exception"] = True
        traceback.print_exception(e, file=sys.stderr)
        sys.stderr.flush()
    return reply


class Adapter:
    def __init__(self):
        self.r = None
        self.lock = None
        self.ttl_ms = None

    async def init(self, rid, req):
        host, _, port = req["endpoints"][0].rpartition(":")
        self.ttl_ms = req["ttl_ms"]
        self.r = redis.asyncio.Redis(host=host, port=int(port), socket_connect_timeout=5, socket_timeout=5)
        try:
            await self.r.ping()
        except RedisError as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        self.lock = self.r.lock(req["lock"], timeout=self.ttl_ms / 1000.0,
                                blocking_timeout=req["acquire_timeout_ms"] / 1000.0)
        print("redis-py %s, redis.asyncio Lock" % redis.__version__, file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "redis-py (redis.asyncio)", "version": redis.__version__,
                "token": None, "capabilities": ["release", "renew", "check"]}

    async def acquire(self, rid):
        try:
            got = await self.lock.acquire()
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            return {"id": rid, "type": "fail", "error": "Lock.acquire: not acquired within blocking_timeout"}
        return {"id": rid, "type": "ok", "lease": "%s:%s" % (self.lock.name, self.lock.local.token.decode())}

    async def release(self, rid):
        try:
            await self.lock.release()
        except LockError as e:  # LockNotOwnedError: the compare-and-delete found another value or none
            return {"id": rid, "type": "fail", "reason": "not-owner", "error": "%s: %s" % (type(e).__name__, e)}
        except Exception as e:
            return error_reply(rid, e)
        return {"id": rid, "type": "ok"}

    async def renew(self, rid):
        try:
            await self.lock.extend(self.ttl_ms / 1000.0, replace_ttl=True)
        except LockError as e:  # not owned any more (or never acquired): the lock is certainly not ours
            return {"id": rid, "type": "fail", "error": "%s: %s" % (type(e).__name__, e)}
        except Exception as e:
            return error_reply(rid, e)
        # The key's TTL was set to ttl_ms after the request was sent.
        return {"id": rid, "type": "ok", "valid_ms": self.ttl_ms}

    async def check(self, rid):
        try:
            return {"id": rid, "type": "ok", "held": await self.lock.owned()}
        except Exception as e:
            return error_reply(rid, e)


async def main():
    adapter = Adapter()
    ops = {"acquire": adapter.acquire, "release": adapter.release,
           "renew": adapter.renew, "check": adapter.check}
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if not line.strip():
            continue
        req = json.loads(line)
        rid, op = req.get("id"), req.get("op")
        if op == "init":
            reply = await adapter.init(rid, req)
        elif op in ops:
            reply = await ops[op](rid)
        else:
            reply = {"id": rid, "type": "fail", "error": "unsupported op %r" % op}
        send(reply)
    if adapter.r is not None:
        await adapter.r.aclose()


if __name__ == "__main__":
    asyncio.run(main())
