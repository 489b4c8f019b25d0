//! PURE: the failed checks as an agent message carries them, in its JSON and in its brief:
//! shared by the PR messages ([`crate::core::report`]) and the branch messages
//! ([`crate::core::branch`]).

use crate::core::text::{block, inline, one_line, strip_controls};
use crate::model::FailedCheck;
use crate::model::message::AgentCheck;

/// The failed checks as an agent message carries them: at most five, each with its log tail.
pub(crate) fn agent_checks(checks: &[FailedCheck]) -> Vec<AgentCheck> {
    checks
        .iter()
        .take(5)
        .map(|c| AgentCheck {
            name: one_line(&c.name),
            url: c.url.as_deref().map(one_line),
            log_tail: strip_controls(&c.log_tail),
            flake: c.classification.is_infra(),
        })
        .collect()
}

/// The failed checks' part of a brief (at most five): each named, linked, and the end of its
/// log fenced as data.
pub(crate) fn failed_checks_brief(checks: &[FailedCheck]) -> String {
    let mut b = String::new();
    for c in checks.iter().take(5) {
        b.push_str(&format!("## Failed check: {}", inline(&c.name)));
        b.push_str(if c.classification.is_infra() {
            " (infrastructure flake: its log reads as a runner or network failure, not the code's)\n"
        } else {
            "\n"
        });
        if let Some(url) = &c.url {
            b.push_str(&format!("Details: {}\n", inline(url)));
        }
        if c.log_tail.is_empty() {
            b.push_str("\n(no log available)\n\n");
        } else {
            b.push_str("\nThe end of its log:\n\n");
            b.push_str(&block(&c.log_tail));
            b.push_str("\n\n");
        }
    }
    b
}
