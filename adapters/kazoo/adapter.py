# Token: the czxid of kazoo's lock node, read with exists() once kazoo granted the lock: ZooKeeper orders a lock's contenders by creation, so each holder's node was created by a later transaction (larger zxid) than the previous holder's.
"""fencecheck client adapter (protocol 2) for kazoo's Lock recipe.

`KazooClient(hosts, timeout=<ttl>)` (the session timeout; `expiry: library` keeps kazoo's 10 s),
`start(timeout=<op timeout>)` (kazoo has no per-request timeout: a request waits for its
session), one `zk.Lock(path, worker)` for the whole run: `acquire(timeout=<acquire timeout>)`,
`release()`. After kazoo grants the lock the adapter reads its node's czxid with `exists()`;
a node that read finds gone (or a read that fails) is still the grant kazoo answered: `ok`
without a token, with `read_back` saying what the read found.
`check` is kazoo's own belief, `Lock.is_acquired`; the server is not read.
Events: `suspended`, `lost`, `reconnected` from kazoo's connection state listener.
"""
import logging
import os
import sys

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, LockTimeout
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.version import __version__ as KAZOO_VERSION

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s kazoo-adapter %(levelname)s %(name)s: %(message)s")


class Adapter:
    OPERATIONAL = (KazooException, KazooTimeoutError)

    def __init__(self):
        self.zk = None
        self.lock = None
        self.acquire_timeout = None
        self.troubled = False  # saw SUSPENDED or LOST since the last CONNECTED

    def listener(self, state):
        # Called on kazoo's event thread: must not block.
        if state == KazooState.SUSPENDED:
            self.troubled = True
            fc.event("suspended", "kazoo: connection to ZooKeeper lost (SUSPENDED)")
        elif state == KazooState.LOST:
            self.troubled = True
            fc.event("lost", "kazoo: session lost or expired (LOST)")
        elif state == KazooState.CONNECTED and self.troubled:
            self.troubled = False
            fc.event("reconnected", "kazoo: CONNECTED, session 0x%x" % self.zk.client_id[0])

    def init(self, rid, init):
        hosts = ",".join(init.endpoints)
        self.acquire_timeout = init.acquire_timeout_s
        session = {} if init.library_expiry else {"timeout": init.ttl_s}
        start = {} if init.timeout is None else {"timeout": init.timeout}
        self.zk = KazooClient(hosts=hosts, **session)
        try:
            self.zk.start(**start)
        except self.OPERATIONAL:
            self.zk.stop()
            raise
        self.zk.add_listener(self.listener)
        self.lock = self.zk.Lock("/" + init.lock, init.worker)
        return fc.ok(rid, library="kazoo", version=KAZOO_VERSION, token="the lock node's czxid",
                     capabilities=["release", "check", "events"])

    def acquire(self, rid):
        try:
            got = self.lock.acquire(timeout=self.acquire_timeout)
        except LockTimeout as e:
            # kazoo deletes its contender node before raising LockTimeout.
            return fc.fail(rid, str(e))
        if not got:
            # Only when kazoo's retries ran out (connection trouble); its cleanup is best effort.
            return fc.info(rid, "Lock.acquire returned False (retries exhausted)")
        node = self.lock.path + "/" + self.lock.node
        try:
            stat = self.zk.exists(node)
        except Exception as e:
            return fc.ok(rid, lease=node, read_back="exists(%s) raised %s" % (node, fc.describe(e)))
        if stat is None:
            return fc.ok(rid, lease=node, read_back="lock node %s gone" % node)
        return fc.ok(rid, lease=node, token=stat.czxid)

    def release(self, rid):
        if self.lock.release():
            return fc.ok(rid)
        return fc.fail(rid, "Lock.release returned False (not acquired)", reason="not-owner")

    def check(self, rid):
        return fc.ok(rid, held=bool(self.lock.is_acquired))

    def close(self):
        if self.zk is not None:
            self.zk.remove_listener(self.listener)  # stop() reports LOST: not a lost lease
            self.zk.stop()
            self.zk.close()


if __name__ == "__main__":
    fc.serve(Adapter())
