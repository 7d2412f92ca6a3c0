# Token: the czxid of kazoo's lock node, read with exists(): ZooKeeper orders a lock's contenders by creation, so each holder's node was created by a later transaction (larger zxid) than the previous holder's.
"""fencecheck client adapter (protocol 1) for kazoo's Lock recipe (Debian python3-kazoo).

JSON lines on stdin/stdout, free text on stderr. See docs/adapters.md.
"""
import json
import logging
import sys
import traceback
import threading

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, LockTimeout
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.version import __version__ as KAZOO_VERSION

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s kazoo-adapter %(levelname)s %(name)s: %(message)s")

_out = threading.Lock()


def send(obj):
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


OPERATIONAL = (KazooException, KazooTimeoutError)


def error_reply(rid, e):
    """info for a documented kazoo error; info with exception for anything else (a bug)."""
    reply = {"id": rid, "type": "info", "error": "%s: %s" % (type(e).__name__, e)}
    if not isinstance(e, OPERATIONAL):
        reply["exception"] = True
        traceback.print_exc()
    return reply


class Adapter:
    def __init__(self):
        self.zk = None
        self.lock = None
        self.acquire_timeout = None
        self.troubled = False  # saw SUSPENDED or LOST since the last CONNECTED

    def listener(self, state):
        # Called on kazoo's event thread: must not block.
        if state == KazooState.SUSPENDED:
            self.troubled = True
            send({"event": "suspended", "detail": "kazoo: connection to ZooKeeper lost (SUSPENDED)"})
        elif state == KazooState.LOST:
            self.troubled = True
            send({"event": "lost", "detail": "kazoo: session lost or expired (LOST)"})
        elif state == KazooState.CONNECTED and self.troubled:
            self.troubled = False
            send({"event": "reconnected",
                  "detail": "kazoo: CONNECTED, session 0x%x" % self.zk.client_id[0]})

    def init(self, rid, req):
        hosts = ",".join(req["endpoints"])
        self.acquire_timeout = req["acquire_timeout_ms"] / 1000.0
        self.zk = KazooClient(hosts=hosts, timeout=req["ttl_ms"] / 1000.0)
        try:
            self.zk.start(timeout=10)
        except OPERATIONAL as e:
            self.zk.stop()
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (hosts, type(e).__name__, e)}
        self.zk.add_listener(self.listener)
        self.lock = self.zk.Lock("/" + req["lock"], req.get("worker", ""))
        return {"id": rid, "type": "ok", "library": "kazoo", "version": KAZOO_VERSION,
                "token": "the lock node's czxid", "capabilities": ["release", "check", "events"]}

    def acquire(self, rid):
        try:
            got = self.lock.acquire(timeout=self.acquire_timeout)
        except LockTimeout as e:
            # kazoo deletes its contender node before raising LockTimeout.
            return {"id": rid, "type": "fail", "error": str(e)}
        except Exception as e:
            return error_reply(rid, e)
        if not got:
            # Only when kazoo's retries ran out (connection trouble); its cleanup is best effort.
            return {"id": rid, "type": "info", "error": "Lock.acquire returned False (retries exhausted)"}
        node = self.lock.path + "/" + self.lock.node
        try:
            stat = self.zk.exists(node)
        except Exception as e:
            return error_reply(rid, e)
        if stat is None:
            return {"id": rid, "type": "info", "error": "lock node %s gone before its czxid was read" % node}
        return {"id": rid, "type": "ok", "lease": node, "token": stat.czxid}

    def release(self, rid):
        try:
            released = self.lock.release()
        except Exception as e:
            return error_reply(rid, e)
        if released:
            return {"id": rid, "type": "ok"}
        return {"id": rid, "type": "fail", "reason": "not-owner", "error": "Lock.release returned False (not acquired)"}

    def check(self, rid):
        return {"id": rid, "type": "ok", "held": bool(self.lock.is_acquired)}

    def close(self):
        if self.zk is not None:
            self.zk.remove_listener(self.listener)  # stop() reports LOST: not a lost lease
            self.zk.stop()
            self.zk.close()


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
        elif op == "check":
            reply = adapter.check(rid)
        else:
            reply = {"id": rid, "type": "fail", "error": "unsupported op %r" % op}
        send(reply)
    adapter.close()


if __name__ == "__main__":
    main()
