//! The parts of GitHub's schema an older GitHub Enterprise Server lacks (`Ref.compare`, merge
//! queues and `Repository.mergeQueue` before 3.8, the `fullDatabaseId` of comments and reviews): which ones this client still asks for, and turning one off when a server
//! refuses a document for naming it, so each costs at most one refused document per run.

/// Which optional parts of the schema the client asks for.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent parts of the schema, each turned off on its own refusal"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// `Ref.compare`: without it, behind is read from `mergeStateStatus` alone.
    pub compare: bool,
    /// `PullRequest.isMergeQueueEnabled` and `mergeQueueEntry`: without them, no PR is queued.
    pub queue: bool,
    /// `Repository.mergeQueue`: without it, what is ahead of a queued PR is not shown.
    pub ahead: bool,
    /// `fullDatabaseId` of comments and reviews (`databaseId` is an `Int`, deprecated since
    /// ids outgrew 32 bits): without it, their `databaseId`.
    pub full_ids: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            compare: true,
            queue: true,
            ahead: true,
            full_ids: true,
        }
    }
}

impl Features {
    /// These features less the one `message` (a GraphQL refusal) says the server lacks, if it
    /// names one still asked for.
    pub fn without_refused(self, message: &str) -> Option<Features> {
        let names = |fields: &[&str]| fields.iter().any(|f| message.contains(&format!("'{f}'")));
        if self.compare && names(&["compare"]) {
            return Some(Features {
                compare: false,
                ..self
            });
        }
        if self.queue && names(&["isMergeQueueEnabled", "mergeQueueEntry", "MergeQueueEntry"]) {
            return Some(Features {
                queue: false,
                ..self
            });
        }
        if self.ahead && names(&["mergeQueue", "MergeQueue"]) {
            return Some(Features {
                ahead: false,
                ..self
            });
        }
        if self.full_ids && names(&["fullDatabaseId"]) {
            return Some(Features {
                full_ids: false,
                ..self
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_turns_off_only_the_feature_it_names() {
        let all = Features::default();
        let no_compare = all
            .without_refused("Field 'compare' doesn't exist on type 'Ref'")
            .unwrap();
        assert!(!no_compare.compare && no_compare.queue);
        let no_queue = all
            .without_refused("Field 'mergeQueueEntry' doesn't exist on type 'PullRequest'")
            .unwrap();
        assert!(no_queue.compare && !no_queue.queue);
        assert_eq!(
            no_queue
                .without_refused("Field 'isMergeQueueEnabled' doesn't exist on type 'PullRequest'"),
            None
        );
        let no_ahead = all
            .without_refused("Field 'mergeQueue' doesn't exist on type 'Repository'")
            .unwrap();
        assert!(no_ahead.queue && !no_ahead.ahead);
        let old_ids = all
            .without_refused("Field 'fullDatabaseId' doesn't exist on type 'IssueComment'")
            .unwrap();
        assert!(old_ids.queue && !old_ids.full_ids);
        assert_eq!(all.without_refused("Something went wrong"), None);
    }
}
