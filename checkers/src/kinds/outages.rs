//! The faults that suspend stuck-lock's clock, counted per fault name (two faults of one name
//! may overlap in an explicit schedule: the clock restarts only when both ended). Two kinds:
//! faults of the lock service itself (their final heal obliges every lock to come back), and
//! faults that cut a *trying* client off (a worker that holds nothing paused, killed or
//! isolated: nobody can blame the lock for what that client does not get).

use crate::hashing::FastMap;

/// What a fault's stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Other suspending faults are still active (or this one suspended nothing).
    Nothing,
    /// The last suspending fault ended, a cut-off client: clocks restart.
    Suspension,
    /// The last suspending fault ended, and the lock service's last fault with it: clocks
    /// restart and every lock must come back.
    ServiceHealed,
}

/// The active suspending faults.
#[derive(Debug, Default)]
pub(crate) struct Outages {
    service: FastMap<String, u32>,
    cut_off: FastMap<String, u32>,
}

impl Outages {
    /// Whether any clock is suspended now.
    pub fn suspended(&self) -> bool {
        !self.service.is_empty() || !self.cut_off.is_empty()
    }

    /// A fault of the lock service (`service`) or one that cuts a trying client off began.
    pub fn start(&mut self, fault: &str, service: bool) {
        let map = if service {
            &mut self.service
        } else {
            &mut self.cut_off
        };
        *map.entry(fault.to_string()).or_default() += 1;
    }

    /// A fault stopped: what that ended.
    pub fn stop(&mut self, fault: &str) -> Ended {
        let was_service = take_one(&mut self.service, fault);
        let was_cut_off = !was_service && take_one(&mut self.cut_off, fault);
        match (was_service || was_cut_off, self.suspended()) {
            (false, _) | (true, true) => Ended::Nothing,
            (true, false) if was_service => Ended::ServiceHealed,
            (true, false) => Ended::Suspension,
        }
    }
}

fn take_one(map: &mut FastMap<String, u32>, fault: &str) -> bool {
    let Some(n) = map.get_mut(fault) else {
        return false;
    };
    *n -= 1;
    if *n == 0 {
        map.remove(fault);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_overlapping_faults_of_one_name_end_only_with_the_second_stop() {
        let mut o = Outages::default();
        o.start("kill-node", true);
        o.start("kill-node", true);
        assert_eq!(o.stop("kill-node"), Ended::Nothing);
        assert!(o.suspended());
        assert_eq!(o.stop("kill-node"), Ended::ServiceHealed);
        o.start("pause-worker", false);
        assert_eq!(o.stop("pause-worker"), Ended::Suspension);
        assert_eq!(o.stop("pause-holder"), Ended::Nothing, "never started");
    }
}
