//! The fake GitLab's world: projects, merge requests, commits, pipelines with jobs, commit
//! statuses, discussions, approvals and auto-merge ([`model`]), with builders that create on
//! first use ([`builders`]), the rules GitLab follows ([`semantics`]: `detailed_merge_status`,
//! "merge when pipeline succeeds") and its JSON shapes ([`json`]).

mod builders;
mod json;
mod model;
mod resource_events;
mod semantics;

pub use builders::*;
pub use model::*;
pub use resource_events::{ResourceChange, ResourceEvent};
