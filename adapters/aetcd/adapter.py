# Token: Lock.revision after a successful acquire: the header revision of the put in its create-if-absent transaction (compare create_revision == 0), i.e. the lock key's create revision; etcd revisions grow with every write, so each new holder's key is created at a larger revision than any earlier holder's.
"""fencecheck client adapter (protocol 1) for aetcd's Lock (asyncio gRPC etcd client, from PyPI).

Drives the library as its Lock docstring shows: `client.lock(key, ttl=ttl)`,
`await lock.acquire(timeout=...)`, `await lock.refresh()`, `await lock.is_acquired()`,
`await lock.release()`; or, with `client_options: {style: with}`, the context manager its
docstring documents, held open from `acquire` to `release` (aetcd's Lock has only
`__aenter__`/`__aexit__`, so it is `async with client.lock(key, ttl=ttl) as lock:`;
`__aenter__` calls `acquire()` with its default timeout of 10 s and ignores the answer).
A new Lock per acquisition (each has its own uuid and lease). The lease is the caller's to
refresh: `renew` is `Lock.refresh()`. aetcd talks to one endpoint: the first one given.
JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import asyncio
import importlib.metadata
import json
import math
import sys
import traceback

import aetcd

VERSION = importlib.metadata.version("aetcd")
OPERATIONAL = (aetcd.ClientError,)  # aetcd maps every gRPC error to a ClientError subclass


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_reply(rid, e):
    """info for a documented aetcd error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, OPERATIONAL):
        reply["exception"] = True
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return reply


class WithHolder:
    """Holds `async with lock:` open in a task from enter() until leave()."""

    def __init__(self, lock):
        loop = asyncio.get_running_loop()
        self.entered = loop.create_future()
        self.left = loop.create_future()
        self.go = asyncio.Event()
        self.task = loop.create_task(self._run(lock))

    async def _run(self, lock):
        inside = False
        try:
            async with lock as held:
                inside = True
                self.entered.set_result(held)
                await self.go.wait()
        except BaseException as e:  # noqa: B036 - reported to the request handler
            (self.left if inside else self.entered).set_exception(e)
            return
        self.left.set_result(None)

    async def enter(self):
        return await self.entered

    async def leave(self):
        self.go.set()
        await self.left


class Adapter:
    def __init__(self):
        self.client = None
        self.key = None
        self.ttl = None
        self.timeout = None
        self.style = "explicit"
        self.lock = None  # the Lock of the current (or last) acquisition
        self.holder = None

    async def init(self, rid, req):
        host, _, port = req["endpoints"][0].rpartition(":")
        self.key = req["lock"].encode()
        self.ttl = max(1, math.ceil(req["ttl_ms"] / 1000.0))  # etcd lease TTLs are whole seconds
        self.timeout = req["acquire_timeout_ms"] / 1000.0
        self.style = (req.get("options") or {}).get("style", "explicit")
        if self.style not in ("explicit", "with"):
            return {"id": rid, "type": "fail", "error": "unknown style %r (explicit or with)" % self.style}
        self.client = aetcd.Client(host=host, port=int(port), timeout=5)
        try:
            await self.client.status()
        except Exception as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        print("aetcd %s, style %s" % (VERSION, self.style), file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "aetcd", "version": VERSION,
                "token": "Lock.revision: the lock key's create revision",
                "capabilities": ["release", "renew", "check"]}

    def granted(self, rid, lock):
        self.lock = lock
        # In the with style, __aenter__ enters the block even when acquire() returned False: the
        # lock then has no lease and its revision is the holder's key's mod revision. Reported as
        # the library hands it over.
        lease = "lease %x" % lock.lease.id if lock.lease is not None else "no lease"
        return {"id": rid, "type": "ok", "token": lock.revision,
                "lease": "%s@%d %s" % (lock.key.decode(), lock.revision, lease)}

    async def acquire(self, rid):
        lock = self.client.lock(self.key, ttl=self.ttl)
        if self.style == "with":
            self.holder = WithHolder(lock)
            try:
                held = await self.holder.enter()
            except Exception as e:
                self.holder = None
                return error_reply(rid, e)
            return self.granted(rid, held)
        try:
            got = await lock.acquire(timeout=self.timeout)
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            # Its last transaction found the key held and put nothing (its leases are left to expire).
            return {"id": rid, "type": "fail", "error": "Lock.acquire returned False (timed out)"}
        return self.granted(rid, lock)

    async def release(self, rid):
        if self.style == "with":
            holder, self.holder = self.holder, None
            if holder is None:
                return {"id": rid, "type": "fail", "error": "no acquisition to release"}
            try:
                await holder.leave()
            except Exception as e:
                return error_reply(rid, e)
            # __aexit__ awaits release() and drops its answer: the block was left.
            return {"id": rid, "type": "ok"}
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            released = await self.lock.release()
        except Exception as e:
            return error_reply(rid, e)
        if released:
            return {"id": rid, "type": "ok"}
        # release() deletes the key only if it still holds this Lock's uuid.
        return {"id": rid, "type": "fail", "reason": "not-owner", "error": "Lock.release returned False (key not ours)"}

    async def renew(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to renew"}
        try:
            response = await self.lock.refresh()
        except ValueError as e:  # refresh() raises it when the lock has no lease: nothing held
            return {"id": rid, "type": "fail", "error": "Lock.refresh: ValueError: %s" % e}
        except Exception as e:
            return error_reply(rid, e)
        ttl = response.TTL if response is not None else 0
        if ttl <= 0:
            return {"id": rid, "type": "fail", "error": "Lock.refresh: lease %x expired (TTL %d)" % (self.lock.lease.id, ttl)}
        # The keep-alive restarted the lease's TTL after the request was sent.
        return {"id": rid, "type": "ok", "valid_ms": ttl * 1000}

    async def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            return {"id": rid, "type": "ok", "held": bool(await self.lock.is_acquired())}
        except Exception as e:
            return error_reply(rid, e)


async def main():
    adapter = Adapter()
    ops = {"acquire": adapter.acquire, "release": adapter.release,
           "renew": adapter.renew, "check": adapter.check}
    loop = asyncio.get_running_loop()
    while True:
        # stdin is read in a thread, so the event loop (gRPC, the with-block task) keeps running.
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
    if adapter.client is not None:
        await adapter.client.close()


if __name__ == "__main__":
    asyncio.run(main())
