# Token: none. python-etcd3's Lock is one key /locks/<name> put with a random uuid value when absent; the library exposes no revision or counter for its holder, so it gives no fence token.
"""fencecheck client adapter (protocol 1) for python-etcd3's Lock (Debian python3-etcd3).

JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
python-etcd3 0.12 talks to one endpoint: the first one given.
"""
import json
import math
import sys
import traceback

import etcd3
import grpc
from etcd3.exceptions import Etcd3Exception

OPERATIONAL = (Etcd3Exception, grpc.RpcError)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error_reply(rid, e):
    """info for a documented python-etcd3 / gRPC error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, OPERATIONAL):
        reply["exception"] = True
        traceback.print_exc()
    return reply


class Adapter:
    def __init__(self):
        self.client = None
        self.lock = None  # the Lock of the current (or last) acquisition
        self.name = None
        self.ttl = None
        self.acquire_timeout = None

    def init(self, rid, req):
        host, _, port = req["endpoints"][0].rpartition(":")
        self.name = req["lock"]
        self.ttl = max(1, math.ceil(req["ttl_ms"] / 1000.0))  # etcd lease TTLs are whole seconds
        self.acquire_timeout = req["acquire_timeout_ms"] / 1000.0
        self.client = etcd3.client(host=host, port=int(port), timeout=5)
        try:
            self.client.status()
        except OPERATIONAL as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        return {"id": rid, "type": "ok", "library": "python-etcd3", "version": etcd3.__version__,
                "token": None, "capabilities": ["release", "renew", "check"]}

    def acquire(self, rid):
        self.lock = self.client.lock(self.name, ttl=self.ttl)
        try:
            got = self.lock.acquire(timeout=self.acquire_timeout)
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            return {"id": rid, "type": "fail", "error": "Lock.acquire: not acquired within %ss" % self.acquire_timeout}
        return {"id": rid, "type": "ok",
                "lease": "%s=%s lease %x" % (self.lock.key, self.lock.uuid.hex(), self.lock.lease.id)}

    def release(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            released = self.lock.release()
        except Exception as e:
            return error_reply(rid, e)
        if released:
            return {"id": rid, "type": "ok"}
        # release() is a transaction that deletes the key only if it still holds this lock's uuid.
        return {"id": rid, "type": "fail", "reason": "not-owner", "error": "Lock.release returned False (key not ours)"}

    def renew(self, rid):
        if self.lock is None or self.lock.lease is None:
            return {"id": rid, "type": "fail", "error": "no acquisition to renew"}
        try:
            responses = self.lock.refresh()
        except Exception as e:
            return error_reply(rid, e)
        ttl = responses[0].TTL if responses else 0
        if ttl <= 0:
            return {"id": rid, "type": "fail", "error": "Lock.refresh: lease %x expired (TTL %d)" % (self.lock.lease.id, ttl)}
        # The keep-alive restarted the lease's TTL after the request was sent.
        return {"id": rid, "type": "ok", "valid_ms": ttl * 1000}

    def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            return {"id": rid, "type": "ok", "held": self.lock.is_acquired()}
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
