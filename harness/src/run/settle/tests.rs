use super::*;

fn ev(time: u64, p: u32, kind: OpType, f: F) -> Event {
    Event::new(time, Process::Worker(p), kind, f)
}

/// Process `p`'s whole cycle from `t`: acquire invoked and granted, release invoked and done.
fn cycle(s: &mut Settling, t: u64, p: u32) {
    s.observe(&ev(t, p, OpType::Invoke, F::Acquire));
    s.observe(&ev(t + 1, p, OpType::Ok, F::Acquire));
    s.observe(&ev(t + 2, p, OpType::Invoke, F::Release));
    s.observe(&ev(t + 3, p, OpType::Ok, F::Release));
}

#[test]
fn the_tail_settles_when_every_worker_took_the_lock_after_the_heal_and_let_it_go() {
    let mut s = Settling::new(2);
    s.healed_at(100);
    cycle(&mut s, 110, 0);
    assert!(
        !s.settled(),
        "worker 1 has not taken the lock since the heal"
    );
    cycle(&mut s, 120, 1);
    assert!(s.settled());
}

#[test]
fn cycles_before_the_heal_or_before_it_is_known_do_not_count() {
    let mut s = Settling::new(1);
    cycle(&mut s, 10, 0);
    s.healed_at(100);
    assert!(!s.settled());
    // Invoked before the heal, granted after: the grant may be the fault's last effect.
    s.observe(&ev(90, 0, OpType::Invoke, F::Acquire));
    s.observe(&ev(105, 0, OpType::Ok, F::Acquire));
    s.observe(&ev(106, 0, OpType::Invoke, F::Release));
    s.observe(&ev(107, 0, OpType::Ok, F::Release));
    assert!(!s.settled());
    cycle(&mut s, 110, 0);
    assert!(s.settled());
}

#[test]
fn a_worker_whose_acquires_fail_after_the_heal_keeps_the_tail_open() {
    let mut s = Settling::new(2);
    s.healed_at(0);
    cycle(&mut s, 10, 0);
    for t in [20, 30, 40] {
        s.observe(&ev(t, 1, OpType::Invoke, F::Acquire));
        s.observe(&ev(t + 1, 1, OpType::Fail, F::Acquire));
    }
    assert!(!s.settled(), "a locked-out worker must get the whole tail");
}

#[test]
fn a_hold_retired_by_an_info_ends_the_cycle_and_a_death_restarts_it() {
    let mut s = Settling::new(2);
    s.healed_at(0);
    s.observe(&ev(1, 0, OpType::Invoke, F::Acquire));
    s.observe(&ev(2, 0, OpType::Ok, F::Acquire));
    s.observe(&ev(3, 0, OpType::Invoke, F::Write));
    s.observe(&ev(4, 0, OpType::Info, F::Write));
    s.observe(&ev(5, 1, OpType::Invoke, F::Acquire));
    s.observe(&ev(6, 1, OpType::Ok, F::Acquire));
    s.observe(&ev(7, 1, OpType::Info, F::Exit));
    assert!(
        !s.settled(),
        "worker 1 died holding: its next process must cycle"
    );
    cycle(&mut s, 10, 3);
    assert!(s.settled());
}
