//! PURE: the functional core. Stored state + a snapshot + policy + the clock in, a plan and its
//! words out. Nothing here reads the clock, the environment, a file, the network or the
//! process's held secrets: time is an argument, the plan says when to look again, and the
//! secrets to mask come in as a masker (`logs::Masker`).

pub(crate) mod answers;
pub(crate) mod branch;
pub(crate) mod budget;
pub(crate) mod checks;
pub(crate) mod conflict;
pub(crate) mod decide;
pub(crate) mod done;
pub(crate) mod failed_brief;
pub(crate) mod feedback;
pub(crate) mod flake;
pub(crate) mod focus;
pub(crate) mod hash;
pub(crate) mod hint;
pub(crate) mod identity;
pub(crate) mod logs;
pub(crate) mod memory;
pub(crate) mod mention;
pub(crate) mod outcome;
pub(crate) mod report;
pub(crate) mod text;
pub(crate) mod trust;
