//! `run`'s progress on a terminal: one line on standard error, redrawn in place
//! (`reading 12 due PRs…`, `[3/12] octo/app#5`), erased when the run ends. Nothing is drawn
//! when standard error is not a terminal. The words are a pure function of the step.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;

use crate::tick::{Progress, Step};

/// The words for a step; `None` erases the line.
pub fn words(step: Step<'_>) -> Option<String> {
    match step {
        Step::Reading { due } => Some(format!(
            "reading {due} due PR{}…",
            if due == 1 { "" } else { "s" }
        )),
        Step::Ticked { done, total, pr } => Some(format!("[{done}/{total}] {pr}")),
        Step::Delivering => Some("sending messages…".to_owned()),
        Step::Done => None,
    }
}

/// A progress display on standard error when it is a terminal, else none.
pub fn on_terminal() -> Option<Progress> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    Some(Progress(Arc::new(|step| {
        let mut err = std::io::stderr().lock();
        let _ = match words(step) {
            Some(w) => write!(err, "\r\u{1b}[2K{w}"),
            None => write!(err, "\r\u{1b}[2K"),
        };
        let _ = err.flush();
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PrRef;

    #[test]
    fn each_step_has_its_words() {
        let pr = PrRef::github("octo/app", 5);
        assert_eq!(
            words(Step::Reading { due: 12 }).as_deref(),
            Some("reading 12 due PRs…")
        );
        assert_eq!(
            words(Step::Reading { due: 1 }).as_deref(),
            Some("reading 1 due PR…")
        );
        assert_eq!(
            words(Step::Ticked {
                done: 3,
                total: 12,
                pr: &pr
            })
            .as_deref(),
            Some("[3/12] octo/app#5")
        );
        assert_eq!(
            words(Step::Delivering).as_deref(),
            Some("sending messages…")
        );
        assert_eq!(words(Step::Done), None);
    }
}
