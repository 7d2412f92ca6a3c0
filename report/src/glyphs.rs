//! The timeline's visual vocabulary: the colour of each kind of fault, the shape of each write
//! outcome and each lane mark, the evidence ring, and the legend that names them — kept in one
//! place so the page's legend, the standalone SVG and the lanes cannot drift apart.

use super::timeline::{MarkKind, WriteOutcome};
use results::fault::Family;

/// The colours of a fault by its name: (strong, light), one pair per family of the fault table,
/// so a fault whose point is its moment or its drawn length reads apart from its plainer kin.
pub fn fault_color(name: &str) -> (&'static str, &'static str) {
    family_color(Family::of(name))
}

/// The colours of one family of faults: (strong, light).
pub fn family_color(family: Family) -> (&'static str, &'static str) {
    match family {
        Family::InFlight => ("#be185d", "#fce7f3"),
        Family::Stall => ("#92400e", "#fde68a"),
        Family::Reply => ("#0e7490", "#cffafe"),
        Family::ClientClock => ("#4338ca", "#e0e7ff"),
        Family::Pause => ("#d97706", "#fef3c7"),
        Family::Partition => ("#7c3aed", "#ede9fe"),
        Family::Kill => ("#dc2626", "#fee2e2"),
        Family::ServerClock => ("#2563eb", "#dbeafe"),
        Family::Link => ("#0f766e", "#ccfbf1"),
        Family::Hang => ("#4d7c0f", "#ecfccb"),
        Family::Starve => ("#a16207", "#fef9c3"),
        Family::Other => ("#57534e", "#e7e5e4"),
    }
}

/// The hatch a worker's lane shows under a fault on it: the pause, partition and kill families
/// have their own, every other fault the `other` hatch.
pub const HATCHES: [(&str, Family); 4] = [
    ("pause", Family::Pause),
    ("partition", Family::Partition),
    ("kill", Family::Kill),
    ("other", Family::Link),
];

/// The hatch of a fault by its name (one of [`HATCHES`]).
pub fn hatch_of(name: &str) -> &'static str {
    let family = Family::of(name);
    HATCHES
        .iter()
        .find(|(_, f)| *f == family)
        .map_or("other", |(class, _)| class)
}

/// Marker shapes centred on (0,0); the legend uses the same ones.
pub fn write_shape(o: WriteOutcome) -> &'static str {
    match o {
        WriteOutcome::Accepted => {
            r##"<circle r="4.5" fill="#16a34a" stroke="#fff" stroke-width="1.2"/>"##
        }
        WriteOutcome::RejectedStale => {
            r##"<circle r="5.5" fill="#fff" opacity=".9"/><path d="M-3.6-3.6L3.6 3.6M-3.6 3.6L3.6-3.6" stroke="#dc2626" stroke-width="2.4" stroke-linecap="round"/>"##
        }
        WriteOutcome::RejectedDuplicate => {
            r##"<rect x="-4" y="-4" width="8" height="8" fill="#fff" stroke="#ea580c" stroke-width="2"/>"##
        }
        WriteOutcome::Unknown => {
            r##"<path d="M0-5.5L5.5 0L0 5.5L-5.5 0Z" fill="#fff" stroke="#475569" stroke-width="1.6"/>"##
        }
        WriteOutcome::Failed => {
            r##"<circle r="4" fill="#fff" stroke="#64748b" stroke-width="1.6"/>"##
        }
    }
}

pub fn mark_shape(k: MarkKind) -> &'static str {
    match k {
        MarkKind::LeaseLost => {
            r##"<path d="M-5.5-17L5.5-17L0-9Z" fill="#ea580c"/><path d="M0-9V10" stroke="#ea580c" stroke-width="1.5" stroke-dasharray="2 2"/>"##
        }
        MarkKind::Exit => {
            r##"<path d="M0-18V18" stroke="#111827" stroke-width="2"/><circle r="6" fill="#111827"/><path d="M-2.8-2.8L2.8 2.8M-2.8 2.8L2.8-2.8" stroke="#fff" stroke-width="1.6"/>"##
        }
        MarkKind::Released => r##"<path d="M0-11V11" stroke="#1e3a8a" stroke-width="2.4"/>"##,
        MarkKind::ReleaseRejected => {
            r##"<path d="M0-11V11" stroke="#9333ea" stroke-width="2.4" stroke-dasharray="3 2"/>"##
        }
        MarkKind::ReleaseUnknown => r##"<path d="M0-11V11" stroke="#94a3b8" stroke-width="2.4"/>"##,
    }
}

pub fn ring(anomalies: &[usize]) -> String {
    if anomalies.is_empty() {
        return String::new();
    }
    let nums = anomalies
        .iter()
        .map(|n| format!("#{}", n + 1))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        r##"<circle r="9" fill="none" stroke="#dc2626" stroke-width="2.2" class="tl-evidence"><title>evidence of anomaly {nums}</title></circle>"##
    )
}

/// Legend entries: (shape centred on 0,0, label).
pub fn legend() -> Vec<(String, &'static str)> {
    vec![
        (r##"<rect x="-8" y="-6" width="16" height="12" rx="2" fill="#2563eb"/>"##.to_string(), "lock held (token)"),
        (r##"<rect x="-8" y="-1" width="16" height="2" fill="#cbd5e1"/>"##.to_string(), "trying to acquire"),
        (r##"<rect x="-8" y="-7" width="16" height="14" fill="url(#hatch-pause)" stroke="#d97706" stroke-width=".5"/>"##.to_string(), "paused / faulted worker"),
        (write_shape(WriteOutcome::Accepted).to_string(), "write accepted"),
        (write_shape(WriteOutcome::RejectedStale).to_string(), "write rejected (stale fence)"),
        (write_shape(WriteOutcome::RejectedDuplicate).to_string(), "rejected duplicate"),
        (write_shape(WriteOutcome::Unknown).to_string(), "write unknown"),
        (r##"<path d="M-5.5-6L5.5-6L0 2Z" fill="#ea580c"/>"##.to_string(), "lease lost"),
        (r##"<circle r="6" fill="#111827"/><path d="M-2.8-2.8L2.8 2.8M-2.8 2.8L2.8-2.8" stroke="#fff" stroke-width="1.6"/>"##.to_string(), "process exit"),
        (r##"<path d="M0-7V7" stroke="#1e3a8a" stroke-width="2.4"/>"##.to_string(), "released"),
        (r##"<path d="M0-7V7" stroke="#9333ea" stroke-width="2.4" stroke-dasharray="3 2"/>"##.to_string(), "release rejected"),
        (r##"<rect x="-8" y="-5" width="16" height="10" rx="2" fill="#059669"/>"##.to_string(), "service: key of a grant"),
        (r##"<rect x="-8" y="-5" width="16" height="10" rx="2" fill="#f59e0b"/>"##.to_string(), "service: key no grant names"),
        (r##"<path d="M0-7V7" stroke="#7c3aed" stroke-width="2"/>"##.to_string(), "service: sentinel's new master"),
        (r##"<circle r="7" fill="none" stroke="#dc2626" stroke-width="2.2"/>"##.to_string(), "anomaly evidence"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The faults of the protocol's weak moments each read apart from their plainer kin on the
    /// timeline.
    #[test]
    fn the_weak_moment_faults_have_colours_of_their_own() {
        let pause = fault_color("pause-holder");
        for (fault, kin) in [
            ("pause-acquiring", "pause-holder"),
            ("kill-acquiring", "kill-holder"),
            ("pause-releasing", "pause-holder"),
            ("isolate-releasing", "isolate-holder"),
            ("pause-waiter", "pause-worker"),
            ("stall-service", "pause-node"),
            ("stall-leader", "pause-leader"),
            ("slow-reply", "slow-network"),
            ("client-clock-jump", "clock-jump"),
            ("client-clock-skew", "clock-skew"),
        ] {
            assert_ne!(fault_color(fault), fault_color(kin), "{fault} vs {kin}");
        }
        assert_eq!(
            fault_color("pause-node"),
            pause,
            "the plain pauses keep theirs"
        );
    }
}
