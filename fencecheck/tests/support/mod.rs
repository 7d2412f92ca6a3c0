//! What the container and CLI tests share: run ids and the check that nothing was left behind
//! ([`infra`]), nemesis fixtures ([`nemesis`]), recipe beds ([`recipes`]) and resource servers
//! ([`resource`]). Each test binary uses some of it.
#![allow(dead_code)]

pub mod infra;
pub mod nemesis;
pub mod recipes;
pub mod resource;
