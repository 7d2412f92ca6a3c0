# Token: RedisLock(fencing=True)'s fence_token: INCR of "<channel>-fence" drawn by the library for every exclusive grant, before acquire reports the lock held.
"""fencecheck client adapter (protocol 1) for portalocker's RedisLock (a release from PyPI).

portalocker's RedisLock holds the lock in a pub/sub *subscription*, not in a key: there is no
TTL and nothing to renew (init's ttl_ms is unused); the lock is gone when Redis drops the
holder's subscription connection. Driven as its docstrings show, one new instance per
acquisition (each has its own holder_id):

    lock = portalocker.RedisLock(<lock>, redis_kwargs={host, port}, timeout=<acquire timeout>,
                                 on_lost=..., fencing=True, self_check_interval=None)
    style: calls (default)   lock.acquire() / lock.release(), then `lock.lost` (the documented
                             check after a bare release: the hold was revoked)
    style: with              `with lock:` entered at acquire, left at release (ExitStack); its
                             exit raises LockLostError when the lock was lost in the block

`check` is `ensure_held()` (LockLostError -> held false). `on_lost` -> a `lost` event.
portalocker 4.x's default `interrupt_on_lost` (kept) raises KeyboardInterrupt in the main
thread when a held lock is lost. The adapter survives it as a user program must: stdin is read
and stdout written by two helper threads, the main thread only runs the library, and an
operation the interrupt lands in is answered `info` naming it. JSON lines on stdin/stdout, free
text on stderr. See docs/adapters.md.
"""
import collections
import contextlib
import inspect
import json
import logging
import signal
import sys
import threading
import time
import traceback

import portalocker
import redis
from portalocker import exceptions as plexc
from redis.exceptions import RedisError

# Releases before 4.2 have no loss reporting (no on_lost, LockLostError or ensure_held) and none
# before it has fencing: the adapter drives each release with what that release documents, and
# reports what it lacks as lacking (no token, no events, no check), never makes it up.
PARAMS = inspect.signature(portalocker.RedisLock.__init__).parameters
LOST = tuple(e for e in [getattr(plexc, "LockLostError", None)] if e is not None)

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s portalocker-adapter %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("portalocker-adapter")

# portalocker's documented errors (LockException and its subclasses AlreadyLocked,
# LockLostError, ...) and redis-py's: operational.
DOCUMENTED = (plexc.BaseLockException, RedisError)

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
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()
            if "id" in obj:
                written["last_id"] = obj["id"]
            outbox.popleft()


def emit(obj):
    outbox.append(obj)
    wake_writer.set()


def replied(rid):
    return written["last_id"] == rid or any(o.get("id") == rid for o in list(outbox))


def describe(e):
    text = "%s: %s" % (type(e).__name__, e)
    if e.__cause__ is not None:
        text += " (cause: %s: %s)" % (type(e.__cause__).__name__, e.__cause__)
    return text


def error_reply(rid, e):
    """info for a documented portalocker / redis-py error; info with exception for anything else."""
    reply = {"id": rid, "type": "info", "error": describe(e)}
    if not isinstance(e, DOCUMENTED):
        reply["exception"] = True
        traceback.print_exception(e, file=sys.stderr)
        sys.stderr.flush()
    return reply


class Adapter:
    def __init__(self):
        self.redis_kwargs = None
        self.channel = None
        self.timeout_s = None
        self.fencing = True
        self.self_check_interval = None
        self.style = "calls"
        self.lock = None
        self.stack = None
        self.interrupted = None  # the with block was left by a KeyboardInterrupt

    def init(self, rid, req):
        opts = req.get("options") or {}
        self.style = opts.get("style", "calls")
        if self.style not in ("calls", "with"):
            return {"id": rid, "type": "fail", "error": "client option style must be 'calls' or 'with', not %r" % self.style}
        self.fencing = bool(opts.get("fencing", True)) and "fencing" in PARAMS
        self.self_check_interval = opts.get("self_check_interval")
        if self.self_check_interval is not None and "self_check_interval" not in PARAMS:
            return {"id": rid, "type": "fail", "error": "portalocker %s has no self_check_interval" % portalocker.__version__}
        host, _, port = req["endpoints"][0].rpartition(":")
        self.redis_kwargs = dict(host=host, port=int(port))
        self.channel = req["lock"]
        self.timeout_s = req["acquire_timeout_ms"] / 1000.0
        # Connect once with the settings the lock itself uses, so a wrong endpoint fails here.
        probe = redis.Redis(**dict(portalocker.RedisLock.DEFAULT_REDIS_KWARGS, **self.redis_kwargs),
                            socket_connect_timeout=5, socket_timeout=5)
        try:
            probe.ping()
        except RedisError as e:
            return {"id": rid, "type": "fail", "error": "connect to %s: %s: %s" % (req["endpoints"][0], type(e).__name__, e)}
        finally:
            probe.close()
        print("portalocker %s on redis-py %s: fencing %s, self_check_interval %s, style %s; SIGINT handler %r "
              "(interrupt_on_lost is a no-op unless it is Python's default_int_handler)"
              % (portalocker.__version__, redis.__version__, self.fencing, self.self_check_interval,
                 self.style, signal.getsignal(signal.SIGINT)), file=sys.stderr, flush=True)
        return {"id": rid, "type": "ok", "library": "portalocker",
                "version": "%s (redis-py %s)" % (portalocker.__version__, redis.__version__),
                "token": "RedisLock(fencing=True).fence_token: INCR <channel>-fence per exclusive grant" if self.fencing else None,
                "capabilities": ["release"]
                + (["check"] if hasattr(portalocker.RedisLock, "ensure_held") else [])
                + (["events"] if "on_lost" in PARAMS else [])}

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
            return {"id": rid, "type": "fail", "error": "already holding a lock; release first"}
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
                stack = contextlib.ExitStack()
                stack.enter_context(lock)
                self.stack = stack
            else:
                lock.acquire()
        except plexc.AlreadyLocked as e:  # timed out; acquire released everything before raising
            return {"id": rid, "type": "fail", "error": "RedisLock.acquire: %s: not acquired within timeout" % type(e).__name__}
        except Exception as e:
            return error_reply(rid, e)
        self.lock = lock
        reply = {"id": rid, "type": "ok", "lease": "%s:%s" % (lock.channel, lock.holder_id)}
        if self.fencing:
            reply["token"] = lock.fence_token
        return reply

    def release(self, rid):
        lock, stack, interrupted = self.lock, self.stack, self.interrupted
        self.lock = self.stack = self.interrupted = None
        if lock is None:
            if interrupted:
                return {"id": rid, "type": "fail", "reason": "not-owner", "error": interrupted}
            return {"id": rid, "type": "fail", "error": "no acquisition to release"}
        try:
            if stack is not None:
                stack.close()  # RedisLock.__exit__: release(), then LockLostError if it was lost
            else:
                lock.release()
        except LOST as e:  # the with block's exit: revoked while held
            return {"id": rid, "type": "fail", "reason": "not-owner", "error": describe(e)}
        except Exception as e:
            return error_reply(rid, e)
        if stack is None and getattr(lock, "lost", False):  # the documented check after a bare release()
            return {"id": rid, "type": "fail", "reason": "not-owner",
                    "error": "RedisLock.lost is True after release(): the lock was revoked while held"}
        return {"id": rid, "type": "ok"}

    def check(self, rid):
        if self.lock is None:
            return {"id": rid, "type": "ok", "held": False}
        try:
            self.lock.ensure_held()
        except LOST as e:
            return {"id": rid, "type": "ok", "held": False, "error": describe(e)}
        except Exception as e:
            return error_reply(rid, e)
        return {"id": rid, "type": "ok", "held": True}

    def interrupted_idle(self, e):
        """A KeyboardInterrupt outside any operation: what a user program's with block would do."""
        if self.stack is not None:
            stack, self.stack, self.lock = self.stack, None, None
            self.interrupted = ("the with block was left by %s (interrupt_on_lost) and its exit released the lock"
                                % type(e).__name__)
            try:
                stack.__exit__(type(e), e, e.__traceback__)  # release; a body exception is not masked
            except Exception:
                traceback.print_exc()


def main():
    threading.Thread(target=reader, name="stdin-reader", daemon=True).start()
    threading.Thread(target=writer, name="stdout-writer", daemon=True).start()
    adapter = Adapter()
    ops = {"init": None, "acquire": adapter.acquire, "release": adapter.release, "check": adapter.check}
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
            rid, op = req.get("id"), req.get("op")
            if not replied(rid):
                current = rid
                if op == "init":
                    reply = adapter.init(rid, req)
                elif op in ops:
                    reply = ops[op](rid)
                else:
                    reply = {"id": rid, "type": "fail", "error": "unsupported op %r" % op}
                emit(reply)
            inbox.popleft()
            current = None
        except KeyboardInterrupt as e:
            # portalocker's interrupt_on_lost: the lock's keep-alive thread saw the lock lost.
            req = inbox[0] if inbox else None
            if req is not None and current == req.get("id") and not replied(current):
                print("KeyboardInterrupt during %s (id %s)" % (req.get("op"), current), file=sys.stderr, flush=True)
                emit({"id": current, "type": "info",
                      "error": "KeyboardInterrupt (portalocker interrupt_on_lost) during %s" % req.get("op")})
                inbox.popleft()  # (an interrupted acquire rolls itself back on BaseException)
            else:
                print("KeyboardInterrupt between requests (portalocker interrupt_on_lost)", file=sys.stderr, flush=True)
                adapter.interrupted_idle(e)
            current = None
    while outbox:
        time.sleep(0.01)


if __name__ == "__main__":
    main()
