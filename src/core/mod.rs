//! PURE: the functional core. Stored state + a snapshot + policy + the clock in, a plan and its
//! words out. Nothing here reads the clock, the environment, a file, the network or the
//! process's held secrets: time is an argument, the plan says when to look again, and the
//! secrets to mask come in as a masker (`logs::Masker`).

pub mod answers;
pub mod branch;
pub mod budget;
pub mod checks;
pub mod conflict;
pub mod decide;
pub mod done;
pub mod failed_brief;
pub mod feedback;
pub mod flake;
pub mod focus;
pub mod hash;
pub mod hint;
pub mod identity;
pub mod logs;
pub mod memory;
pub mod mention;
pub mod outcome;
pub mod report;
pub mod text;
pub mod trust;
