//! Which faults a correctly renewing lease is meant to survive: the rule concurrent-holders
//! reads to tell a loss a fault explains from one where the renewal itself failed
//! (docs/design.md, "Anomaly kinds"). One row per fault, a match with no wildcard arm, so that
//! a fault added to `FaultKind` is classified here before it builds.

use results::fault::{FaultKind, NODE_DIED, NODE_FROZEN};

/// What a fault can do to a lease that its holder renews as it should.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Survival {
    /// It can end the lease whatever its length: a kill (a server's state, a client's
    /// session), a wall clock moved, a failover to a replica that may not have the lease.
    Never,
    /// The lease survives it while it is shorter than the lease: the holder frozen, hung, starved or
    /// cut off from the service, the service stalled or partitioned, slow or lossy links. A service
    /// that lets a lease go under such a fault, or a holder that does not renew after it, is
    /// the renewal failing, not the fault.
    WhileShorter,
    /// It does not reach the lease at all (the protected resource cut off).
    Untouched,
}

/// How a lease fares under the fault the history names `name`. An unplanned node death is a
/// kill and an unplanned freeze a stall; a name this build does not know may end a lease.
pub(crate) fn survival(name: &str) -> Survival {
    match name.parse::<FaultKind>() {
        Ok(kind) => of_kind(kind),
        Err(_) if name == NODE_FROZEN => Survival::WhileShorter,
        Err(_) if name == NODE_DIED => Survival::Never,
        Err(_) => Survival::Never,
    }
}

fn of_kind(kind: FaultKind) -> Survival {
    match kind {
        FaultKind::PauseHolder
        | FaultKind::PauseWorker
        | FaultKind::PauseAcquiring
        | FaultKind::PauseReleasing
        | FaultKind::PauseWaiter
        | FaultKind::IsolateWorker
        | FaultKind::IsolateHolder
        | FaultKind::IsolateReleasing
        | FaultKind::DeafenHolder
        | FaultKind::MuteHolder
        | FaultKind::SlowNetwork
        | FaultKind::LossyNetwork
        | FaultKind::SlowReply
        | FaultKind::CutAcquireReply
        | FaultKind::CutReleaseReply
        | FaultKind::CutRenewReply
        | FaultKind::PauseNode
        | FaultKind::PauseLeader
        | FaultKind::StallService
        | FaultKind::StallLeader
        | FaultKind::IsolateLeader
        | FaultKind::Halves
        | FaultKind::MajoritiesRing
        | FaultKind::DeafenFollower
        | FaultKind::HangWork
        | FaultKind::StarveWorker
        | FaultKind::StarveNode => Survival::WhileShorter,
        FaultKind::KillHolder
        | FaultKind::KillWorker
        | FaultKind::KillAcquiring
        | FaultKind::KillNode
        | FaultKind::KillLeader
        | FaultKind::RestartEmptyNode
        | FaultKind::RestartEmptyLeader
        | FaultKind::Failover
        | FaultKind::ClockJump
        | FaultKind::ClockSkew
        | FaultKind::ClientClockJump
        | FaultKind::ClientClockSkew => Survival::Never,
        FaultKind::IsolateResource => Survival::Untouched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::fault::ALL_FAULTS;

    /// Every fault the stalls' design calls survivable is, and every kill and clock fault is
    /// not; the names outside the plan read as the faults they stand for.
    #[test]
    fn stalls_and_pauses_are_survived_while_shorter_and_kills_and_clocks_never() {
        for f in [
            "stall-service",
            "stall-leader",
            "pause-holder",
            "slow-network",
        ] {
            assert_eq!(survival(f), Survival::WhileShorter, "{f}");
        }
        for f in [
            "kill-node",
            "kill-holder",
            "failover",
            "clock-jump",
            "client-clock-skew",
        ] {
            assert_eq!(survival(f), Survival::Never, "{f}");
        }
        assert_eq!(survival("isolate-resource"), Survival::Untouched);
        assert_eq!(survival(NODE_FROZEN), Survival::WhileShorter);
        assert_eq!(survival(NODE_DIED), Survival::Never);
        assert_eq!(survival("a-fault-from-a-newer-build"), Survival::Never);
        assert!(ALL_FAULTS.iter().all(|f| survival(f.name()) == of_kind(*f)));
    }
}
