//! What to tell a human about each anomaly: the observation, the likely boundary that failed,
//! what to check, and the next action. These follow the boundary table of the training material
//! on fencing (a stale token rejected means fencing works; both writes accepted means the
//! resource does not compare tokens; a stale release removing a new lease means release is not
//! bound to the handle; a repeated token is a delivery or consensus problem, not a stale owner).
//! None of them says "synchronise the clocks": fencing must not depend on a worker's timestamp.

use results::Diagnosis;

fn d(observation: String, boundary: &str, check: &str, action: &str) -> Diagnosis {
    Diagnosis {
        observation,
        likely_boundary: boundary.into(),
        what_to_check: check.into(),
        next_action: action.into(),
    }
}

pub fn stale_accepted_write(observation: String) -> Diagnosis {
    d(
        observation,
        "the resource does not store or compare the fence token in the same operation as the write",
        "that the token condition and the write are one atomic operation on the same resource key, \
         and that every conflicting effect goes to that one key",
        "add resource-side fencing (keep the highest token beside the data, reject lower ones) or \
         narrow the protected action; do not retry the old write: token t will never become newer",
    )
}

pub fn stale_accepted_write_tokenless(observation: String) -> Diagnosis {
    d(
        observation,
        "the lock hands out no fence token, so the resource has nothing to compare: a holder \
         whose lease ran out (a pause, a partition, a clock jump on the lock's servers) cannot \
         be told apart from the current one",
        "whether the older holder was paused or cut off between its acquire and its write, and \
         whether the lock (recipe or client library) can issue a monotonic token",
        "take a recipe or library that issues a fence token (etcd revision, ZooKeeper czxid, a \
         counter incremented with the grant) and have the resource reject lower tokens; a longer \
         lease only moves the window",
    )
}

pub fn duplicate_token_history(observation: String) -> Diagnosis {
    d(
        observation,
        "the token is not issued by consensus: two acquisitions were handed the same generation \
         (a failover lost the counter, or the token is derived from something non-unique)",
        "where the recipe takes its token (a linearizable revision/zxid, or a replicated counter \
         that can roll back on failover)",
        "take tokens from a linearizable counter or revision (etcd revision, ZooKeeper zxid), \
         never from an asynchronously replicated store",
    )
}

pub fn duplicate_token_resource(observation: String) -> Diagnosis {
    d(
        observation,
        "two owners wrote under one generation: the resource cannot tell them apart with a \
         non-strict comparison, and the lock issued the token twice",
        "the acquisitions that carried this token, and whether the resource compares with >= \
         instead of > for a different lease",
        "take tokens from a linearizable counter; have the resource bind a token to the lease \
         that first used it",
    )
}

pub fn token_regression(observation: String) -> Diagnosis {
    d(
        observation,
        "tokens are not monotonic across acquisitions: the provider lost state (failover, \
         restart without persistence) or the recipe reads the token from a stale replica",
        "the provider's failover/restart around these indices and how the recipe derives the \
         token (revision of the lock key vs a global counter)",
        "derive tokens from a monotonic, linearizable source; a resource fenced on them will \
         otherwise reject the newer holder's writes",
    )
}

pub fn double_release_stale(observation: String) -> Diagnosis {
    d(
        observation,
        "release is not bound to the exact lease handle: a stale owner deleted by lock name",
        "the release condition: does it compare the current lease id / owner / token before \
         deleting?",
        "compare-and-delete on the exact lease handle; a stale owner must get \
         release-rejected-not-owner",
    )
}

pub fn release_of_lost_lock(observation: String) -> Diagnosis {
    d(
        observation,
        "the client reported a release for a lock it no longer held (its lease or session had \
         expired and another acquisition followed); the history shows no other holder's lock \
         freed by it",
        "what the release call did on the provider (a no-op on a node or key the expired \
         session no longer owns, or a delete by name) and whether the client knew it had lost \
         the lock",
        "treat a release after a lost lease as not-owner in the client; if the provider \
         deleted by name, bind release to the exact lease (compare-and-delete)",
    )
}

pub fn double_release_twice(observation: String) -> Diagnosis {
    d(
        observation,
        "release is not idempotent-safe: the second release of one acquisition still reported \
         success and may have removed someone else's lock",
        "whether the client retried the release and what the provider deleted the second time",
        "bind release to the lease handle so a repeated release is a no-op reported as \
         not-owner",
    )
}

pub fn concurrent_holders(observation: String) -> Diagnosis {
    d(
        observation,
        "a lease is not a mutex: the older holder's lease expired (pause, partition, clock jump) while its \
         process still believed it held the lock",
        "whether the older holder's later writes were rejected by the resource (see \
         stale-accepted-write) and how long it was paused",
        "expected under pauses and not preventable by the lock alone: rely on resource-side \
         fencing; a longer TTL only moves the window",
    )
}

pub fn held_after_loss(observation: String) -> Diagnosis {
    d(
        observation,
        "the client library's idea of holding the lock is not tied to its lease or session: it \
         still answers held after the lease ran out and another client was granted the lock",
        "how the library decides it holds the lock (a flag set at acquire, or a question to the \
         service), and whether it reported its session or lease lost before this answer",
        "never take the library's held answer as licence to act: fence every write with a token \
         the resource compares, and treat a lost session as a lost lock",
    )
}

pub fn granted_gone(observation: String) -> Diagnosis {
    d(
        observation,
        "the lock client decided it held the lock without asking whether its own key still \
         existed: its session or lease expired while it waited in the queue, the service deleted \
         its key, and the client took the deletion of the keys ahead of it as its turn",
        "whether the library reads its own key back after its wait, and how it learns that its \
         session or lease expired while it was blocked",
        "treat a grant as valid only with a fence token the resource compares; report the \
         library's version and settings upstream",
    )
}

pub fn phantom_holder(observation: String) -> Diagnosis {
    d(
        observation,
        "the acquire's request reached the service and took the lock, but its answer was lost, \
         timed out or said failure: the client, and the application with it, went on believing \
         it did not hold a lock the service kept for it until its lease, session or time to live \
         ran out",
        "whether the library removes what its request may have created when an acquire fails or \
         times out (a retried SET NX, a lost reply to a create), and how long its lease or \
         session outlives the client that gave up",
        "after an acquire with an unknown outcome, release by the identity the request carried \
         (its value, node or lease), or keep the lease short; prefer a library that cleans up \
         its own request on error",
    )
}

pub fn deleted_anothers_key(observation: String) -> Diagnosis {
    d(
        observation,
        "the release removed the lock's key without checking that it was still the releasing \
         client's own: once that client's lease had lapsed and another was granted, its release \
         deleted the new holder's key",
        "how the library releases (a plain delete of the lock's key, or a compare of the value \
         or lease with the delete in one step), and whether the releasing client had lost its \
         lease before it released",
        "release with a compare-and-delete bound to the exact lease or value the grant gave (a \
         script, a transaction on the lease, the node's own path); fence every write",
    )
}

pub fn held_against_service(observation: String) -> Diagnosis {
    d(
        observation,
        "the lock client answered from its own memory, not from the service: its key was gone \
         (its lease or session expired, or another client removed it) and the library still \
         said held",
        "how the library decides it holds the lock (a flag set at acquire, or a read of its own \
         key or session), and whether it had reported its session or lease lost",
        "never take the library's held answer as licence to act: fence every write with a token \
         the resource compares, and treat a lost session as a lost lock",
    )
}

pub fn token_out_of_order(observation: String) -> Diagnosis {
    d(
        observation,
        "the fence token is not drawn in the order the service grants the lock: it comes from a \
         counter apart from the grant (one that a restart or a failover set back), or it was \
         drawn before the grant and another client's draw came between",
        "where the client's token comes from (the key's own creation in the service's order, or \
         a separate counter), and whether the counter's server restarted or failed over",
        "take the token from the grant itself (etcd's create revision, ZooKeeper's czxid), or \
         draw it atomically with the grant from storage that survives restarts",
    )
}

pub fn concurrent_holders_renewal_failed(observation: String) -> Diagnosis {
    d(
        observation,
        "the lease lapsed while nothing that outlasts a lease stopped the holder or the \
         service: its renewal failed (a keep-alive that stopped, ran too late, gave up under a \
         fault shorter than the lease, or renewed a lease the service no longer had), or the \
         service let it expire early",
        "the holder's keep-alive around this time (its log in nodes/, its renew interval against \
         the ttl) and whether the client reported the lease lost before the other grant",
        "fix the renewal (renew well within the ttl, and treat a failed renewal as a lost lock); \
         resource-side fencing still limits the harm",
    )
}

pub fn locked_out_client(observation: String) -> Diagnosis {
    d(
        observation,
        "this client can no longer take the lock: its library's client is stuck in a state it \
         does not recover from (wedged after an exception, a session or connection it never \
         re-establishes, a lock object left marked as held or acquiring); or, when its failures \
         came only while others held the lock, the lock is not fair and starves it under \
         contention",
        "the errors of its attempts (one error repeated from the first failure on points at the \
         client, not the service), its adapter's log in nodes/, and `failed_while_free`: a \
         failure answered while nobody held the lock is no contention",
        "have the worker (or the library) drop and recreate its client or session after an \
         error it does not recover from, and report the library's wedge; if it is starvation, \
         expect it under contention or take a queueing recipe (etcd's lock, ZooKeeper's) \
         rather than one that polls",
    )
}

pub fn lost_update_low(observation: String) -> Diagnosis {
    d(
        observation,
        "a read-modify-write under a lock that two holders held at once, or the store lost \
         acknowledged writes (failover, asynchronous replication)",
        "concurrent-holders around these indices, and whether the counter store checks a fence \
         token or replicates synchronously",
        "fence the counter write at the store (compare the token) or use an atomic increment",
    )
}

pub fn lost_update_high(observation: String) -> Diagnosis {
    d(
        observation,
        "an increment was applied more often than it was attempted (a retried or duplicated \
         write), or the counter was written from outside the test",
        "retries of increments and other writers of the key",
        "give increments an operation id the store deduplicates",
    )
}

pub fn duplicate_effect(observation: String) -> Diagnosis {
    d(
        observation,
        "delivery/idempotency, not necessarily a stale owner: the same operation reached the \
         resource twice and both were applied",
        "the operation id and the resource's effect ledger (does it remember applied op_ids?)",
        "make the resource reject a repeated op_id (rejected-duplicate); treat duplicates as a \
         contract separate from fencing",
    )
}

/// A stuck lock whose holder's work was hung while its process ran: the lease outlived the work.
pub fn zombie_holder(observation: String) -> Diagnosis {
    d(
        format!(
            "{observation}; the holder's work was hung while its process ran, and nobody could \
             take its lock for ttl + slack: the holder's lease is being renewed while its work \
             makes no progress (a zombie holder)"
        ),
        "renewal decoupled from progress: a keep-alive thread or a library's background renewal \
         keeps the lease of a job that is blocked",
        "where the lease is renewed (a thread, the library's auto-renewal) and whether the job's \
         calls have timeouts",
        "renew from the loop that does the work, or add a watchdog that releases the lock (or \
         ends the process) when the work stops making progress",
    )
}

pub fn stuck_lock(observation: String) -> Diagnosis {
    d(
        observation,
        "the lock's lifetime is not bound to its holder's liveness: no TTL, a TTL not set \
         atomically with the lock, a keep-alive that outlives the holder, or a lock leaked by a \
         timed-out acquire",
        "that the lock key is created atomically with its lease/TTL, the session/lease timeout \
         against the configured ttl, and the provider's recovery after the heal (quorum, leader)",
        "create the lock atomically with its lease; revoke the lease on a timed-out acquire; \
         never clear a lock by name without the owner check",
    )
}
