# Token: INCR of "<lock>:fence" right after SET NX succeeds (the classic pattern): a Redis counter that grows with every acquisition.
"""An example fencecheck client adapter (protocol 2): your own Redis lock, on the raw redis-py client.

Acquire: SET <lock> <random value> NX PX <ttl>, then INCR <lock>:fence for the fence token.
Release: a Lua compare-and-delete of the exact value. Requests on stdin, replies on stdout.
The socket timeout is the test's operation timeout (init's op_timeout_ms; 5 s from a version 1 worker).
"""
import json
import sys
import time
import uuid

import redis

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
r = lock = ttl_ms = timeout_ms = value = None

for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"], "type": "ok"}
    try:
        if req["op"] == "init":
            host, _, port = req["endpoints"][0].rpartition(":")
            r = redis.Redis(host=host, port=int(port), socket_timeout=req.get("op_timeout_ms", 5000) / 1000.0)
            r.ping()
            lock, ttl_ms, timeout_ms = req["lock"], req["ttl_ms"], req["acquire_timeout_ms"]
            reply.update(library="my_lock (redis-py)", version=redis.__version__,
                         token="INCR <lock>:fence after SET NX", capabilities=["release"])
        elif req["op"] == "acquire":
            deadline = time.monotonic() + timeout_ms / 1000.0
            value = uuid.uuid4().hex
            while not r.set(lock, value, nx=True, px=ttl_ms):
                if time.monotonic() >= deadline:
                    reply.update(type="fail", error="lock held by another client")
                    break
                time.sleep(0.05)
            else:
                reply.update(lease=value, token=r.incr(lock + ":fence"))
        elif req["op"] == "release":
            if r.eval(RELEASE, 1, lock, value) != 1:
                reply.update(type="fail", reason="not-owner", error="the key holds another value or none")
        else:
            reply.update(type="fail", error="unsupported op")
    except redis.RedisError as e:  # connection errors, timeouts: unknown outcome
        reply.update(type="info", error="%s: %s" % (type(e).__name__, e))
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
