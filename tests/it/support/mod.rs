//! Test support: fakes of the forges and helpers shared by the integration tests.

pub mod chromium;
pub mod daemon;
pub mod env;
pub mod fake_github;
pub mod fake_gitlab;
pub mod fake_server;
pub mod forge;
pub mod http_sink;
pub mod smtp;
pub mod tools;
