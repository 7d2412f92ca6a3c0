//! The nemesis against real clusters: pauses, partitions, kills, failover, and the heal after each. One test binary per area: they link once.

#[path = "../support/mod.rs"]
mod support;

mod clock;
mod etcd;
mod heal;
mod links;
mod one_way;
mod partitions;
mod sentinel;
mod starve;
mod zookeeper;
