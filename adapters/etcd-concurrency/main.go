// Token: the create revision of concurrency.Mutex's key (read with Get of m.Key() once the Mutex granted the lock): waiters are served in create-revision order, so each new holder's key was created at a later etcd revision than any earlier holder's.
//
// fencecheck client adapter (protocol 2) for etcd's clientv3/concurrency Session and Mutex
// (Debian golang-etcd-server-dev). JSON lines on stdin/stdout, free text on stderr;
// see docs/adapters.md.
//
// clientv3.New with DialTimeout = the operation timeout, and each call that has no deadline of
// its own in the protocol (the token read, Unlock) under a context with that timeout; client
// option timeout: library keeps clientv3's defaults (no dial timeout, no call deadline).
// concurrency.NewSession(WithTTL(ttl)) (expiry: library keeps its default TTL), kept alive by
// the library; one Mutex per acquisition: Lock(ctx with the acquire timeout), Unlock.
// After the Mutex grants the lock the adapter reads its key's create revision; a key that read
// finds gone (or a read that fails) is still the grant the Mutex answered: ok without a token,
// with read_back saying what the read found.
// No check: the Mutex keeps no belief of its own (IsOwner is a server transaction).
// Events: lost when the Session is done; renewed for each keep-alive answer of the session's
// lease (observed by wrapping the client's Lease, which forwards every answer unchanged).
// An error leaves the client and the session as they are: the next request uses them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	"go.etcd.io/etcd/version"
)

// fallbackOpTimeout is the operation timeout when init names none (an older worker).
const fallbackOpTimeout = 5 * time.Second

type msg map[string]interface{}

var outMu sync.Mutex

func send(m msg) {
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(msg{"type": "info", "error": err.Error(), "exception": true})
	}
	outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	outMu.Unlock()
}

type request struct {
	ID               json.RawMessage `json:"id"`
	Op               string          `json:"op"`
	Lock             string          `json:"lock"`
	Endpoints        []string        `json:"endpoints"`
	TTLMs            int64           `json:"ttl_ms"`
	AcquireTimeoutMs int64           `json:"acquire_timeout_ms"`
	OpTimeoutMs      int64           `json:"op_timeout_ms"`
	Options          map[string]any  `json:"options"`
}

// option is a client option's value as text ("" when absent).
func (r *request) option(name string) string {
	if v, ok := r.Options[name]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

type adapter struct {
	cli        *clientv3.Client
	ttl        int // whole seconds, at least 1; 0: the library's default
	acqTimeout time.Duration
	opTimeout  time.Duration // 0: no deadline (the library's default)
	prefix     string
	sess       *concurrency.Session
	mutex      *concurrency.Mutex // the current acquisition, nil when none
	closing    chan struct{}
}

func reply(id json.RawMessage, typ string) msg { return msg{"id": id, "type": typ} }

func info(id json.RawMessage, what string, err error) msg {
	r := reply(id, "info")
	r["error"] = what + ": " + err.Error()
	return r
}

// callContext bounds one call by the operation timeout (none under timeout: library).
func (a *adapter) callContext() (context.Context, context.CancelFunc) {
	if a.opTimeout == 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), a.opTimeout)
}

// initAnswered turns the renewed events on: no event line may come before the init reply.
var initAnswered atomic.Bool

// observedLease is the client's Lease; KeepAlive forwards every answer unchanged and reports it.
type observedLease struct {
	clientv3.Lease
}

func (l observedLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	in, err := l.Lease.KeepAlive(ctx, id)
	if err != nil {
		return in, err
	}
	out := make(chan *clientv3.LeaseKeepAliveResponse)
	go func() {
		defer close(out)
		for resp := range in {
			if initAnswered.Load() {
				send(msg{"event": "renewed", "detail": fmt.Sprintf("session lease %x kept alive, TTL %d s", resp.ID, resp.TTL)})
			}
			out <- resp
		}
	}()
	return out, nil
}

func (a *adapter) init(req *request) msg {
	if req.option("expiry") != "library" {
		a.ttl = int((req.TTLMs + 999) / 1000)
		if a.ttl < 1 {
			a.ttl = 1
		}
	}
	a.opTimeout = fallbackOpTimeout
	if req.OpTimeoutMs > 0 {
		a.opTimeout = time.Duration(req.OpTimeoutMs) * time.Millisecond
	}
	if req.option("timeout") == "library" {
		a.opTimeout = 0
	}
	a.acqTimeout = time.Duration(req.AcquireTimeoutMs) * time.Millisecond
	a.prefix = "/" + req.Lock
	a.closing = make(chan struct{})
	cli, err := clientv3.New(clientv3.Config{Endpoints: req.Endpoints, DialTimeout: a.opTimeout})
	if err == nil {
		cli.Lease = observedLease{cli.Lease}
		// clientv3.New does not wait for a connection: one read proves the endpoints.
		ctx, cancel := a.callContext()
		_, err = cli.Get(ctx, a.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err == nil {
			a.cli = cli
			_, err = a.session()
		}
		if err != nil {
			cli.Close()
		}
	}
	if err != nil {
		r := reply(req.ID, "fail")
		r["error"] = fmt.Sprintf("connect to %s: %v", strings.Join(req.Endpoints, ","), err)
		return r
	}
	r := reply(req.ID, "ok")
	r["library"] = "etcd clientv3/concurrency"
	r["version"] = version.Version
	r["token"] = "the create revision of the mutex's key"
	r["capabilities"] = []string{"release", "events"}
	return r
}

// session returns the live session, or a new one once the last one is done (its lease is gone).
func (a *adapter) session() (*concurrency.Session, error) {
	if a.sess != nil {
		select {
		case <-a.sess.Done():
			a.sess = nil
		default:
			return a.sess, nil
		}
	}
	var opts []concurrency.SessionOption
	if a.ttl > 0 {
		opts = append(opts, concurrency.WithTTL(a.ttl))
	}
	s, err := concurrency.NewSession(a.cli, opts...)
	if err != nil {
		return nil, err
	}
	a.sess = s
	go func() {
		select {
		case <-s.Done():
			select {
			case <-a.closing:
			default:
				send(msg{"event": "lost", "detail": fmt.Sprintf("concurrency.Session done: lease %x orphaned or expired", s.Lease())})
			}
		case <-a.closing:
		}
	}()
	return s, nil
}

func (a *adapter) acquire(id json.RawMessage) msg {
	s, err := a.session()
	if err != nil {
		return info(id, "concurrency.NewSession", err)
	}
	m := concurrency.NewMutex(s, a.prefix)
	ctx, cancel := context.WithTimeout(context.Background(), a.acqTimeout)
	err = m.Lock(ctx)
	cancel()
	if err != nil {
		// After a failed wait Lock deletes its key itself and, when that worked, Key() is "\x00".
		if errors.Is(err, context.DeadlineExceeded) && m.Key() == "\x00" {
			r := reply(id, "fail")
			r["error"] = fmt.Sprintf("Mutex.Lock: %v (not acquired within %v)", err, a.acqTimeout)
			return r
		}
		return info(id, "Mutex.Lock", err)
	}
	a.mutex = m
	// Granted: whatever the read-back finds, the answer is ok.
	r := reply(id, "ok")
	ctx, cancel = a.callContext()
	resp, err := a.cli.Get(ctx, m.Key())
	cancel()
	switch {
	case err != nil:
		r["read_back"] = fmt.Sprintf("get %s: %v", m.Key(), err)
	case len(resp.Kvs) == 0:
		r["read_back"] = "key " + m.Key() + " gone"
	default:
		rev := resp.Kvs[0].CreateRevision
		r["lease"] = fmt.Sprintf("%s@%d", m.Key(), rev)
		r["token"] = rev
		return r
	}
	// No create revision: the Mutex's own header names the grant (its revision is unique per
	// acquisition), and the session's lease is the one to ask about.
	r["lease"] = fmt.Sprintf("%s granted at revision %d lease %x", m.Key(), m.Header().Revision, s.Lease())
	return r
}

func (a *adapter) release(id json.RawMessage) msg {
	if a.mutex == nil {
		r := reply(id, "fail")
		r["error"] = "no acquisition to release"
		return r
	}
	ctx, cancel := a.callContext()
	err := a.mutex.Unlock(ctx)
	cancel()
	if err != nil {
		return info(id, "Mutex.Unlock", err)
	}
	a.mutex = nil
	return reply(id, "ok")
}

// handle answers one request; a panic inside the library becomes an info reply with exception.
func (a *adapter) handle(req *request) (r msg) {
	defer func() {
		if p := recover(); p != nil {
			r = reply(req.ID, "info")
			r["error"] = fmt.Sprintf("panic: %v", p)
			r["exception"] = true
		}
	}()
	switch req.Op {
	case "init":
		return a.init(req)
	case "acquire":
		return a.acquire(req.ID)
	case "release":
		return a.release(req.ID)
	}
	r = reply(req.ID, "fail")
	r["error"] = "unsupported op " + req.Op
	return r
}

func main() {
	a := &adapter{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var req request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			fmt.Fprintf(os.Stderr, "etcd-concurrency adapter: bad request %q: %v\n", line, err)
			continue
		}
		send(a.handle(&req))
		if req.Op == "init" {
			initAnswered.Store(true)
		}
	}
	if a.cli != nil {
		close(a.closing)
		if a.sess != nil {
			a.sess.Close()
		}
		a.cli.Close()
	}
}
