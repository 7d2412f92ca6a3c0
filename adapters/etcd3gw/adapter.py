# Token: none. etcd3gw's Lock is one key /locks/<name> put (with a fresh lease) in a transaction when its create revision is 0; acquire() returns only True/False and the Lock keeps no revision of its key (it drops the transaction's header), so etcd3gw gives no fence token.
"""fencecheck client adapter (protocol 1) for etcd3gw's Lock (etcd's HTTP/JSON gateway client, from PyPI).

Drives the library as its own example and tests show: `client.lock(id=name, ttl=ttl)`,
`acquire()`, `refresh()`, `is_acquired()`, `release()`; or, with `client_options: {style: with}`,
`with client.lock(id=name, ttl=ttl) as lock:` held open from `acquire` to `release` (the class
documents itself as a context manager). A new Lock per acquisition (each has its own uuid).
etcd3gw's acquire() is one attempt: it does not wait for a held lock, so a contended acquire
answers `fail` at once. The lease is the caller's to refresh: `renew` is `Lock.refresh()`.
etcd3gw talks to one endpoint: the first one given.
JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import importlib.metadata
import json
import math
import queue
import sys
import threading
import traceback

import etcd3gw
from etcd3gw.exceptions import Etcd3Exception

VERSION = importlib.metadata.version("etcd3gw")
OPERATIONAL = (Etcd3Exception,)  # etcd3gw wraps requests' connection errors and timeouts in these


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_reply(rid, e):
    """info for a documented etcd3gw error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, OPERATIONAL):
        reply["exception"] = True
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return reply


class WithHolder:
    """Holds `with lock:` open in a thread from enter() until leave()."""

    def __init__(self, lock):
        self.lock = lock
        self.entered = queue.Queue()
        self.left = queue.Queue()
        self.go = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        inside = False
        try:
            with self.lock as lock:
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
        self.client = None
        self.name = None
        self.ttl = None
        self.style = "explicit"
        self.lock = None  # the Lock of the current (or last) acquisition
        self.holder = None  # style with: the thread holding the with block

    def init(self, rid, req):
        host, _, port = req["endpoints"][0].rpartition(":")
        self.name = req["lock"]
        self.ttl = max(1, math.ceil(req["ttl_ms"] / 1000.0))  # etcd lease TTLs are whole seconds
        self.style = (req.get("options") or {}).get("style", "explicit")
        if self.style not in ("explicit", "with"):
            return {"id": rid, "type": "fail", "error": "unknown style %r (explicit or with)" % self.style}
        self.client = etcd3gw.client(host=host, port=int(port), timeout=5)
        try:
            self.client.status()
        except Exception as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        print("etcd3gw %s, api path %s, style %s" % (VERSION, self.client.api_path, self.style), file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "etcd3gw", "version": VERSION,
                "token": None, "capabilities": ["release", "renew", "check"]}

    def lease_name(self, lock):
        lease = "lease %x" % lock.lease.id if lock.lease is not None else "no lease"
        return "%s=%s %s" % (lock.key, lock.uuid, lease)

    def acquire(self, rid):
        lock = self.client.lock(id=self.name, ttl=self.ttl)
        if self.style == "with":
            self.holder = WithHolder(lock)
            got_lock, e = self.holder.enter()
            if e is not None:
                self.holder = None
                return error_reply(rid, e)
            # Lock.__enter__ returns the lock whatever acquire() answered: the block is entered.
            self.lock = got_lock
            return {"id": rid, "type": "ok", "lease": self.lease_name(got_lock)}
        try:
            got = lock.acquire()
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            # The transaction's compare failed: no key was put (the lease it granted is left to expire).
            return {"id": rid, "type": "fail", "error": "Lock.acquire returned False (the key exists)"}
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
        # release() deletes the key only if it still holds this Lock's uuid.
        return {"id": rid, "type": "fail", "reason": "not-owner", "error": "Lock.release returned False (key not ours)"}

    def renew(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to renew"}
        try:
            ttl = self.lock.refresh()
        except Exception as e:
            return error_reply(rid, e)
        if ttl <= 0:
            return {"id": rid, "type": "fail", "error": "Lock.refresh returned %d (lease expired)" % ttl}
        # The keep-alive restarted the lease's TTL after the request was sent.
        return {"id": rid, "type": "ok", "valid_ms": ttl * 1000}

    def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            return {"id": rid, "type": "ok", "held": bool(self.lock.is_acquired())}
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
