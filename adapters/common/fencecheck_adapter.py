"""The adapter side of fencecheck's client protocol, shared by every Python adapter.

docs/adapters.md is the specification (protocol version 2). This module holds everything an
adapter would otherwise repeat: the JSON-lines loop on stdin/stdout, replies and events (one
output lock, so a library thread's event never splits a reply), the `exception: true` marking
of errors a library does not document (traceback to stderr), the parsed `init` request, and the
`style: with` block held open from `acquire` to `release`. An adapter file then holds only its
library's calls: a class with one method per operation it supports (`init(rid, init)`,
`acquire(rid)`, `release(rid)`, `renew(rid)`, `check(rid)`; `close()` when stdin ends) and a
tuple `OPERATIONAL` of the exception types its library documents as operational errors.

A handler that raises is answered `info` with the error (and `exception` when its type is not
in `OPERATIONAL`); the adapter lives on and answers the next request with the same library
objects: nothing here resets or exits on an error.

Each adapter imports it by its folder, a sibling of the adapter's own in the repository and in
every image (`/adapters/common/`):

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    import fencecheck_adapter as fc
"""
import asyncio
import contextlib
import json
import math
import sys
import threading
import traceback

PROTOCOL = 2

# The request timeout an adapter sets when init names none (a protocol 1 worker).
FALLBACK_OP_TIMEOUT_S = 5.0

OPS = ("init", "acquire", "release", "renew", "check")

_out = threading.Lock()


def send(obj):
    """One line on stdout, flushed; safe from any thread."""
    line = json.dumps(obj) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def event(name, detail):
    """An event line (`suspended`, `lost`, `reconnected`, `renewed`, `retry`)."""
    send({"event": name, "detail": detail})


def log(text):
    print(text, file=sys.stderr, flush=True)


def ok(rid, **fields):
    return dict({"id": rid, "type": "ok"}, **fields)


def fail(rid, error, **fields):
    return dict({"id": rid, "type": "fail", "error": error}, **fields)


def info(rid, error, **fields):
    return dict({"id": rid, "type": "info", "error": error}, **fields)


def describe(e):
    return "%s: %s" % (type(e).__name__, e)


class CallTimedOut(Exception):
    """`wait_for: true`: a library call outlasted the operation timeout (an operational error)."""


def error_reply(rid, e, operational, text=None):
    """`info` for an error the library documents; with `exception` and the traceback on stderr
    for anything else (a bug)."""
    reply = info(rid, text or describe(e))
    if not isinstance(e, tuple(operational) + (CallTimedOut,)):
        reply["exception"] = True
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
        sys.stderr.flush()
    return reply


class OptionError(ValueError):
    """A client option the adapter cannot take: `init` answers `fail` naming it."""


class Init:
    """The `init` request, parsed: what every adapter reads from it."""

    def __init__(self, req):
        self.req = req
        self.protocol = req.get("protocol", 1)
        self.worker = req.get("worker", "")
        self.lock = req["lock"]
        self.provider = req.get("provider")
        self.endpoints = list(req["endpoints"])
        self.ttl_ms = req["ttl_ms"]
        self.acquire_timeout_s = req["acquire_timeout_ms"] / 1000.0
        self.options = req.get("options") or {}
        op_timeout_ms = req.get("op_timeout_ms")
        self.op_timeout_s = op_timeout_ms / 1000.0 if op_timeout_ms else FALLBACK_OP_TIMEOUT_S

    @property
    def ttl_s(self):
        return self.ttl_ms / 1000.0

    @property
    def ttl_whole_s(self):
        """The ttl in whole seconds, at least 1 (etcd leases, EXPIRE, tooz's options)."""
        return max(1, math.ceil(self.ttl_ms / 1000.0))

    def host_port(self, i=0):
        host, _, port = self.endpoints[i].rpartition(":")
        return host, int(port)

    def option(self, name, default, choices=None):
        value = self.options.get(name, default)
        if choices is not None and value not in choices:
            raise OptionError("client option %s must be one of %s, not %r"
                              % (name, ", ".join(map(str, choices)), value))
        return value

    @property
    def timeout(self):
        """The request timeout in seconds the adapter gives its library: the test's operation
        timeout, or None under `timeout: library` (keep the library's own default)."""
        if self.option("timeout", "op", ("op", "library")) == "library":
            return None
        return self.op_timeout_s

    @property
    def library_expiry(self):
        """`expiry: library`: keep the library's own lease / expiry default instead of the ttl."""
        return self.option("expiry", "ttl", ("ttl", "library")) == "library"

    @property
    def wait_for(self):
        """`wait_for: true` (asyncio adapters): bound each library call by the operation timeout."""
        return bool(self.option("wait_for", False, (True, False)))

    def style(self, default="calls"):
        """`style`: `calls` (the library's explicit calls) or `with` (its context manager)."""
        value = self.options.get("style", default)
        if value == "explicit":  # the name older test files use for calls
            value = "calls"
        if value not in ("calls", "with"):
            raise OptionError("client option style must be calls or with, not %r" % value)
        return value


class WithBlock:
    """`with cm as x:` entered at `acquire` and left at `release`, in the thread that serves
    the requests, as a program's block would be: its exit sees the block's exception, if any."""

    def __init__(self):
        self._stack = None

    @property
    def open(self):
        return self._stack is not None

    def enter(self, cm):
        stack = contextlib.ExitStack()
        value = stack.enter_context(cm)
        self._stack = stack
        return value

    def leave(self, exc=None):
        """Leaves the block (normally, or by `exc`); the exit's own exception propagates."""
        stack, self._stack = self._stack, None
        if exc is None:
            stack.close()
        else:
            stack.__exit__(type(exc), exc, exc.__traceback__)


class AsyncWithBlock:
    """`async with cm as x:` entered at `acquire` and left at `release`."""

    def __init__(self):
        self._stack = None

    @property
    def open(self):
        return self._stack is not None

    async def enter(self, cm):
        stack = contextlib.AsyncExitStack()
        value = await stack.enter_async_context(cm)
        self._stack = stack
        return value

    async def leave(self):
        stack, self._stack = self._stack, None
        await stack.aclose()


def _handler(adapter, op):
    return getattr(adapter, op, None) if op in OPS else None


def _init_error(rid, init, e, operational):
    if isinstance(e, OptionError):
        return fail(rid, str(e))
    where = ",".join(init.endpoints) if init is not None else "?"
    reply = error_reply(rid, e, operational, "init (%s): %s" % (where, describe(e)))
    reply["type"] = "fail"
    return reply


def answer(adapter, req):
    """The reply to one request."""
    rid, op = req.get("id"), req.get("op")
    handler = _handler(adapter, op)
    if handler is None:
        return fail(rid, "unsupported op %r" % op)
    operational = getattr(adapter, "OPERATIONAL", ())
    init = None
    try:
        if op == "init":
            init = Init(req)
            return handler(rid, init)
        return handler(rid)
    except Exception as e:
        if op == "init":
            return _init_error(rid, init, e, operational)
        return error_reply(rid, e, operational)


def serve(adapter):
    """Answers requests from stdin until it closes, then calls the adapter's `close()`."""
    for line in sys.stdin:
        if line.strip():
            send(answer(adapter, json.loads(line)))
    close = getattr(adapter, "close", None)
    if close is not None:
        close()


async def bounded(init, awaitable):
    """Awaits a library call; under `wait_for: true`, `asyncio.wait_for` with the operation
    timeout, as applications do (its timeout is `CallTimedOut`, answered `info`)."""
    if not init.wait_for:
        return await awaitable
    try:
        return await asyncio.wait_for(awaitable, init.op_timeout_s)
    except asyncio.TimeoutError as e:
        raise CallTimedOut("asyncio.wait_for: no answer within %ss" % init.op_timeout_s) from e


async def answer_async(adapter, req):
    rid, op = req.get("id"), req.get("op")
    handler = _handler(adapter, op)
    if handler is None:
        return fail(rid, "unsupported op %r" % op)
    operational = getattr(adapter, "OPERATIONAL", ())
    init = None
    try:
        if op == "init":
            init = Init(req)
            return await handler(rid, init)
        return await handler(rid)
    except Exception as e:
        if op == "init":
            return _init_error(rid, init, e, operational)
        return error_reply(rid, e, operational)


async def _serve_async(adapter):
    loop = asyncio.get_running_loop()
    while True:
        # stdin is read in a thread, so the event loop keeps running the library between requests.
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if line.strip():
            send(await answer_async(adapter, json.loads(line)))
    close = getattr(adapter, "close", None)
    if close is not None:
        await close()


def serve_async(adapter):
    """`serve` for an adapter whose handlers are coroutines, all on one event loop."""
    asyncio.run(_serve_async(adapter))
