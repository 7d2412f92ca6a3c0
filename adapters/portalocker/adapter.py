# Token: RedisLock(fencing=True)'s fence_token: INCR of "<channel>-fence" drawn by the library for every exclusive grant, before acquire reports the lock held.
"""fencecheck client adapter (protocol 2) for portalocker's RedisLock.

portalocker's RedisLock holds the lock in a pub/sub *subscription*, not in a key: there is no
TTL and nothing to renew (init's ttl_ms is unused, and `expiry` does not apply); the lock is
gone when Redis drops the holder's subscription connection. Driven as its docstrings show, one
new instance per acquisition (each has its own holder_id):

    lock = portalocker.RedisLock(<lock>, redis_kwargs={host, port, socket_connect_timeout,
                                 socket_timeout}, timeout=<acquire timeout>, on_lost=...,
                                 fencing=True, self_check_interval=None)
    style: calls (default)   lock.acquire() / lock.release(), then `lock.lost` (the documented
                             check after a bare release: the hold was revoked)
    style: with              `with lock:` entered at acquire, left at release; its exit raises
                             LockLostError when the lock was lost in the block

Both socket timeouts are the operation timeout (`timeout: library` leaves them out of
redis_kwargs: redis-py's default, none); portalocker documents that a read exceeding
`socket_timeout` counts as a loss of the lock.
`check` is the library's own belief, `ensure_held()` (local recorded state, no Redis call;
LockLostError -> held false); there is no cheap server read of a subscription.
Events: `lost` from `on_lost`.
portalocker 4.x's default `interrupt_on_lost` (kept) raises KeyboardInterrupt in the main
thread when a held lock is lost. The adapter survives it as a user program must: stdin is read
and stdout written by two helper threads, the main thread only runs the library, and an
operation the interrupt lands in is answered `info` naming it.
"""
import collections
import inspect
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback

import portalocker
import redis
from portalocker import exceptions as plexc
from redis.exceptions import RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import fencecheck_adapter as fc  # noqa: E402

# Releases before 4.2 have no loss reporting (no on_lost, LockLostError or ensure_held) and none
# before it has fencing: the adapter drives each release with what that release documents, and
# reports what it lacks as lacking (no token, no events, no check), never makes it up.
PARAMS = inspect.signature(portalocker.RedisLock.__init__).parameters
LOST = tuple(e for e in [getattr(plexc, "LockLostError", None)] if e is not None)

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s portalocker-adapter %(levelname)s %(name)s: %(message)s")

# Lines between threads. deque.append/popleft are single C calls: a KeyboardInterrupt from
# interrupt_on_lost lands before or after them, never inside.
inbox = collections.deque()    # parsed requests, filled by the reader thread
outbox = collections.deque()   # replies and events, drained by the writer thread
wake_writer = threading.Event()
wake_main = threading.Event()
stdin_closed = threading.Event()
written = {"last_id": None}    # id of the last reply the writer wrote


def reader():
    try:
        for line in sys.stdin:
            if line.strip():
                inbox.append(json.loads(line))
                wake_main.set()
    finally:  # stdin closed (or a line that is not JSON): the adapter exits
        stdin_closed.set()
        wake_main.set()


def writer():
    while True:
        wake_writer.wait(0.05)
        wake_writer.clear()
        while outbox:
            obj = outbox[0]
            fc.send(obj)
            if "id" in obj:
                written["last_id"] = obj["id"]
            outbox.popleft()


def emit(obj):
    outbox.append(obj)
    wake_writer.set()


def replied(rid):
    return written["last_id"] == rid or any(o.get("id") == rid for o in list(outbox))


def describe(e):
    text = fc.describe(e)
    if e.__cause__ is not None:
        text += " (cause: %s)" % fc.describe(e.__cause__)
    return text


class Adapter:
    # portalocker's documented errors (LockException and its subclasses AlreadyLocked,
    # LockLostError, ...) and redis-py's: operational.
    OPERATIONAL = (plexc.BaseLockException, RedisError)

    def __init__(self):
        self.lock = None
        self.block = fc.WithBlock()
        self.interrupted = None  # the with block was left by a KeyboardInterrupt

    def init(self, rid, init):
        self.style = init.style()
        self.fencing = bool(init.option("fencing", True)) and "fencing" in PARAMS
        self.self_check_interval = init.option("self_check_interval", None)
        if self.self_check_interval is not None and "self_check_interval" not in PARAMS:
            raise fc.OptionError("portalocker %s has no self_check_interval" % portalocker.__version__)
        host, port = init.host_port()
        self.redis_kwargs = dict(host=host, port=port)
        if init.timeout is not None:
            self.redis_kwargs.update(socket_connect_timeout=init.timeout, socket_timeout=init.timeout)
        self.channel = init.lock
        self.timeout_s = init.acquire_timeout_s
        # Connect once with the settings the lock itself uses, so a wrong endpoint fails here.
        probe = redis.Redis(**dict(portalocker.RedisLock.DEFAULT_REDIS_KWARGS, **self.redis_kwargs))
        try:
            probe.ping()
        finally:
            probe.close()
        fc.log("portalocker %s on redis-py %s: fencing %s, self_check_interval %s, style %s, redis_kwargs %s; "
               "SIGINT handler %r (interrupt_on_lost is a no-op unless it is Python's default_int_handler)"
               % (portalocker.__version__, redis.__version__, self.fencing, self.self_check_interval,
                  self.style, self.redis_kwargs, signal.getsignal(signal.SIGINT)))
        token = "RedisLock(fencing=True).fence_token: INCR <channel>-fence per exclusive grant" if self.fencing else None
        return fc.ok(rid, library="portalocker", version="%s (redis-py %s)" % (portalocker.__version__, redis.__version__),
                     token=token,
                     capabilities=["release"]
                     + (["check"] if hasattr(portalocker.RedisLock, "ensure_held") else [])
                     + (["events"] if "on_lost" in PARAMS else []))

    def on_lost(self, lock):
        """portalocker's on_lost callback (runs on the lock's keep-alive thread)."""
        detail = "portalocker: lock on channel %r (holder %s) revoked while held" % (lock.channel, lock.holder_id)
        try:
            lock.ensure_held()
        except LOST as e:
            detail = describe(e)
        emit({"event": "lost", "detail": detail})

    def acquire(self, rid):
        if self.lock is not None:
            return fc.fail(rid, "already holding a lock; release first")
        self.interrupted = None
        extra = {}
        if "on_lost" in PARAMS:
            extra["on_lost"] = self.on_lost
        if "fencing" in PARAMS:
            extra["fencing"] = self.fencing
        if self.self_check_interval is not None:
            extra["self_check_interval"] = self.self_check_interval
        lock = portalocker.RedisLock(self.channel, redis_kwargs=dict(self.redis_kwargs),
                                     timeout=self.timeout_s, **extra)
        try:
            if self.style == "with":
                self.block.enter(lock)
            else:
                lock.acquire()
        except plexc.AlreadyLocked as e:  # timed out; acquire released everything before raising
            return fc.fail(rid, "RedisLock.acquire: %s: not acquired within timeout" % type(e).__name__)
        self.lock = lock
        reply = fc.ok(rid, lease="%s:%s" % (lock.channel, lock.holder_id))
        if self.fencing:
            reply["token"] = lock.fence_token
        return reply

    def release(self, rid):
        lock, interrupted = self.lock, self.interrupted
        self.interrupted = None
        if lock is None:
            if interrupted:
                return fc.fail(rid, interrupted, reason="not-owner")
            return fc.fail(rid, "no acquisition to release")
        bare = not self.block.open
        try:
            if not bare:
                self.block.leave()  # RedisLock.__exit__: release(), then LockLostError if it was lost
            else:
                lock.release()
        except LOST as e:  # the with block's exit: revoked while held
            self.lock = None
            return fc.fail(rid, describe(e), reason="not-owner")
        self.lock = None
        if bare and getattr(lock, "lost", False):  # the documented check after a bare release()
            return fc.fail(rid, "RedisLock.lost is True after release(): the lock was revoked while held",
                           reason="not-owner")
        return fc.ok(rid)

    def check(self, rid):
        if self.lock is None:
            return fc.ok(rid, held=False)
        try:
            self.lock.ensure_held()
        except LOST as e:
            return fc.ok(rid, held=False, error=describe(e))
        return fc.ok(rid, held=True)

    def interrupted_idle(self, e):
        """A KeyboardInterrupt outside any operation: what a user program's with block would do."""
        if self.block.open:
            self.lock = None
            self.interrupted = ("the with block was left by %s (interrupt_on_lost) and its exit released the lock"
                                % type(e).__name__)
            try:
                self.block.leave(e)  # release; a body exception is not masked
            except Exception:
                traceback.print_exc()


def main():
    threading.Thread(target=reader, name="stdin-reader", daemon=True).start()
    threading.Thread(target=writer, name="stdout-writer", daemon=True).start()
    adapter = Adapter()
    current = None  # id of the request whose library call has started
    while True:
        try:
            if not inbox:
                if stdin_closed.is_set() and not inbox:
                    break
                wake_main.wait(0.05)
                wake_main.clear()
                continue
            req = inbox[0]
            if not replied(req.get("id")):
                current = req.get("id")
                emit(fc.answer(adapter, req))
            inbox.popleft()
            current = None
        except KeyboardInterrupt as e:
            # portalocker's interrupt_on_lost: the lock's keep-alive thread saw the lock lost.
            req = inbox[0] if inbox else None
            if req is not None and current == req.get("id") and not replied(current):
                fc.log("KeyboardInterrupt during %s (id %s)" % (req.get("op"), current))
                emit(fc.info(current, "KeyboardInterrupt (portalocker interrupt_on_lost) during %s" % req.get("op")))
                inbox.popleft()  # (an interrupted acquire rolls itself back on BaseException)
            else:
                fc.log("KeyboardInterrupt between requests (portalocker interrupt_on_lost)")
                adapter.interrupted_idle(e)
            current = None
    while outbox:
        time.sleep(0.01)


if __name__ == "__main__":
    main()
