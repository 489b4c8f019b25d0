//! The GitHub client.

pub mod queries;
