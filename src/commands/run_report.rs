//! What `run` prints, written as the run hands on each PR's outcome rather than after it, so
//! a run of ten thousand PRs holds none of them: `--json` streams its array one object at a
//! time (with `--log-format json`, one object a line, and a last line that counts the run); the human output lists every PR of a small run and only the changed ones of a larger
//! one, counts what the last line says as the outcomes pass, and clears the terminal's
//! progress line before it prints.

use serde_json::json;

use super::output::{changed, outcome_line, status_json};
use crate::model::watch::{Ci, WatchStatus};
use crate::model::{Instant, PrState};
use crate::terminal::Term;
use crate::tick::{PrOutcome, Progress, Report, RunSummary, Step};

/// Runs with more PRs than this list only the ones that changed.
pub const LIST_ALL_UP_TO: usize = 10;

/// `run --json`'s object for one PR ticked: its status after the tick, with the tick's
/// history and error.
pub fn run_json(o: &PrOutcome, now: Instant) -> serde_json::Value {
    let mut w = o.watch.clone();
    if let Some(plan) = &o.plan {
        w.status = plan.status.clone();
        w.next_tick_at = plan.next_tick_at;
    }
    w.last_error.clone_from(&o.error);
    w.last_tick_at = Some(now);
    let mut v = status_json(&w);
    v["history"] = json!(
        o.plan
            .as_ref()
            .map(|p| p.history.iter().map(|h| &h.what).collect::<Vec<_>>())
    );
    v
}

/// The outcome lines of a run as its outcomes come: every PR in a small run, else only those
/// that changed. The first [`LIST_ALL_UP_TO`] are held until the run shows which it is.
#[derive(Debug, Default)]
pub struct OutcomeLines {
    /// Lines held, each with whether its PR changed; none once the run is known to be large.
    held: Vec<(String, bool)>,
    large: bool,
}

impl OutcomeLines {
    /// One more PR's line (written only if it may be printed) and whether it changed: the
    /// lines to print now.
    pub fn add(&mut self, line: impl FnOnce() -> String, changed: bool) -> Vec<String> {
        if self.large {
            return if changed { vec![line()] } else { Vec::new() };
        }
        self.held.push((line(), changed));
        if self.held.len() <= LIST_ALL_UP_TO {
            return Vec::new();
        }
        self.large = true;
        std::mem::take(&mut self.held)
            .into_iter()
            .filter_map(|(line, changed)| changed.then_some(line))
            .collect()
    }

    /// The run has `due` PRs due: with more than [`LIST_ALL_UP_TO`] it is large from its
    /// start, so only changed PRs' lines are printed, as they come.
    pub fn due(&mut self, due: usize) {
        self.large |= due > LIST_ALL_UP_TO;
    }

    /// Whether the run is known to be large: only changed PRs' lines are printed.
    pub fn large(&self) -> bool {
        self.large
    }

    /// The run is over: the lines still held (a small run's every line).
    pub fn finish(&mut self) -> Vec<String> {
        std::mem::take(&mut self.held)
            .into_iter()
            .map(|(line, _)| line)
            .collect()
    }
}

/// What the run's last line counts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunCounts {
    pub ticked: usize,
    pub changed: usize,
    pub merged: usize,
    pub closed: usize,
    pub ci: usize,
    pub cnf: usize,
    pub fixing: usize,
    pub errors: usize,
}

impl RunCounts {
    /// Counts one PR's outcome.
    pub fn add(&mut self, o: &PrOutcome) {
        self.ticked += 1;
        self.changed += usize::from(changed(o));
        self.errors += usize::from(o.error.is_some());
        let Some(after) = o.plan.as_ref().map(|p| &p.status) else {
            return;
        };
        let before = &o.watch.status;
        let became = |f: &dyn Fn(&WatchStatus) -> bool| usize::from(f(after) && !f(before));
        self.merged += became(&|s| s.state == PrState::Merged);
        self.closed += became(&|s| s.state == PrState::Closed);
        self.ci += became(&|s| s.pills.ci == Ci::Lit);
        self.cnf += became(&|s| s.pills.cnf);
        self.fixing += became(&|s| s.pills.ci == Ci::Fixing);
    }
}

/// The run's last line: `ticked 7 PRs: 2 changed, 5 unchanged · 1 merged · ci lit on 1 · 1
/// error · 6 deferred for budget (see status) · 3 messages sent`.
pub fn run_summary(c: &RunCounts, summary: &RunSummary) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut out = format!(
        "ticked {} PR{}: {} changed, {} unchanged",
        c.ticked,
        plural(c.ticked),
        c.changed,
        c.ticked - c.changed
    );
    for (what, k) in [
        ("merged", c.merged),
        ("closed", c.closed),
        ("ci lit on", c.ci),
        ("cnf lit on", c.cnf),
        ("sent to the agent:", c.fixing),
    ] {
        if k > 0 {
            out.push_str(&format!(" · {what} {k}"));
        }
    }
    if c.errors > 0 {
        out.push_str(&format!(" · {} error{}", c.errors, plural(c.errors)));
    }
    if summary.deferred > 0 {
        out.push_str(&format!(
            " · {} deferred for budget (see status)",
            summary.deferred
        ));
    }
    if summary.delivered > 0 {
        out.push_str(&format!(
            " · {} message{} sent",
            summary.delivered,
            plural(summary.delivered)
        ));
    }
    if !summary.delivery_failures.is_empty() {
        out.push_str(&format!(
            " · {} not delivered (kept for the next run)",
            summary.delivery_failures.len()
        ));
    }
    out
}

/// How `run` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutput {
    /// A line per PR and a summary line, for a person.
    Human,
    /// `--json`: one array, streamed an object at a time.
    Array,
    /// `--json` with `--log-format json`: a JSON object a line, each PR's with the run id,
    /// then the run's counts, so stdout reads like the log beside it.
    Lines,
}

impl RunOutput {
    pub fn new(json: bool, json_logs: bool) -> Self {
        match (json, json_logs) {
            (false, _) => RunOutput::Human,
            (true, false) => RunOutput::Array,
            (true, true) => RunOutput::Lines,
        }
    }
}

/// The last line of `run --json` in JSON lines: what the run counted, with the run id.
pub fn summary_json(c: &RunCounts, summary: &RunSummary, run_id: &str) -> serde_json::Value {
    json!({
        "run_id": run_id,
        "summary": {
            "ticked": c.ticked,
            "changed": c.changed,
            "merged": c.merged,
            "closed": c.closed,
            "ci": c.ci,
            "cnf": c.cnf,
            "sent_to_agent": c.fixing,
            "errors": c.errors,
            "deferred": summary.deferred,
            "delivered": summary.delivered,
            "undelivered": summary.delivery_failures.len(),
            "held_elsewhere": summary.busy.len(),
            "taken_over": summary.taken_over.len(),
            "watched": summary.watched,
            "exit_code": summary.exit_code(),
        }
    })
}

/// Prints a run as it goes. The first write that fails (standard output closed) ends the
/// printing and is returned by [`RunPrinter::finish`]; the run goes on.
#[derive(Debug)]
pub struct RunPrinter {
    output: RunOutput,
    now: Instant,
    term: Term,
    progress: Option<Progress>,
    lines: OutcomeLines,
    counts: RunCounts,
    failed: Option<anyhow::Error>,
}

impl RunPrinter {
    pub fn new(output: RunOutput, now: Instant, progress: Option<Progress>) -> Self {
        RunPrinter {
            output,
            now,
            term: Term::detect(),
            progress,
            lines: OutcomeLines::default(),
            counts: RunCounts::default(),
            failed: None,
        }
    }

    /// Writes `text` unless an earlier write failed; a line first clears the progress line.
    fn write(&mut self, text: std::fmt::Arguments<'_>) {
        if self.failed.is_some() {
            return;
        }
        if let Some(p) = &self.progress {
            (p.0)(Step::Done);
        }
        if let Err(e) = crate::stdout::write(text) {
            self.failed = Some(e);
        }
    }

    /// The rest of the run's output, once it is over: the held lines, the last line, the
    /// leases taken over and held; or the first write's error.
    pub fn finish(mut self, summary: &RunSummary) -> anyhow::Result<()> {
        match self.output {
            RunOutput::Array => {
                let close = if self.counts.ticked == 0 { "[]" } else { "]" };
                self.write(format_args!("{close}\n"));
                return self.failed.map_or(Ok(()), Err);
            }
            RunOutput::Lines => {
                let last = summary_json(&self.counts, summary, crate::logging::run_id());
                self.write(format_args!("{last}\n"));
                return self.failed.map_or(Ok(()), Err);
            }
            RunOutput::Human => {}
        }
        if self.counts.ticked == 0 && summary.busy.is_empty() {
            if summary.watched == 0 {
                self.write(format_args!(
                    "nothing is watched; add a PR with `pr-monitor watch add OWNER/REPO#N`, then run again\n"
                ));
            } else {
                self.write(format_args!(
                    "nothing is due ({} watched); `pr-monitor run --force` ticks them anyway\n",
                    summary.watched
                ));
            }
        }
        for line in self.lines.finish() {
            self.write(format_args!("{line}\n"));
        }
        if self.counts.ticked > 0 {
            let last = run_summary(&self.counts, summary);
            self.write(format_args!("{last}\n"));
        } else if summary.delivered > 0 {
            self.write(format_args!(
                "{} message{} sent\n",
                summary.delivered,
                if summary.delivered == 1 { "" } else { "s" }
            ));
        }
        for line in super::output::taken_over_lines(&summary.taken_over) {
            self.write(format_args!("{line}\n"));
        }
        for line in super::output::held_lines(&summary.busy) {
            self.write(format_args!("{line}; skipped\n"));
        }
        self.failed.map_or(Ok(()), Err)
    }
}

impl Report for RunPrinter {
    fn jobs(&mut self, lines: &[String]) {
        if self.output != RunOutput::Human {
            return;
        }
        for line in lines {
            self.write(format_args!("{line}\n"));
        }
    }

    fn outcome(&mut self, o: PrOutcome) {
        match self.output {
            RunOutput::Array => {
                let open = if self.counts.ticked == 0 { "[" } else { "," };
                let object = run_json(&o, self.now);
                self.counts.add(&o);
                self.write(format_args!("{open}{object}"));
                return;
            }
            RunOutput::Lines => {
                let mut object = run_json(&o, self.now);
                object["run_id"] = crate::logging::run_id().into();
                self.counts.add(&o);
                self.write(format_args!("{object}\n"));
                return;
            }
            RunOutput::Human => {}
        }
        self.counts.add(&o);
        let line = || outcome_line(&o, self.now, self.term);
        for line in self.lines.add(line, changed(&o)) {
            self.write(format_args!("{line}\n"));
        }
    }

    /// Only a large run's human output passes over unchanged PRs: every other output
    /// shows each PR's state.
    fn due(&mut self, prs: usize) {
        self.lines.due(prs);
    }

    fn wants_settled(&self) -> bool {
        self.output != RunOutput::Human || !self.lines.large()
    }

    fn settled(&mut self, _pr: &crate::model::PrRef) {
        // Unchanged, and not printed: only counted.
        self.counts.ticked += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run prints every line at its end; once an eleventh PR shows the run is large,
    /// the changed lines held go out and only changed lines follow.
    #[test]
    fn a_small_run_lists_every_pr_and_a_large_one_the_changed_ones() {
        let mut small = OutcomeLines::default();
        for i in 0..LIST_ALL_UP_TO {
            assert!(small.add(|| format!("pr {i}"), i == 3).is_empty());
        }
        assert_eq!(small.finish().len(), LIST_ALL_UP_TO);

        let mut large = OutcomeLines::default();
        let mut printed = Vec::new();
        for i in 0..25 {
            printed.extend(large.add(|| format!("pr {i}"), i % 4 == 0));
        }
        printed.extend(large.finish());
        assert_eq!(
            printed,
            ["pr 0", "pr 4", "pr 8", "pr 12", "pr 16", "pr 20", "pr 24"]
        );

        // Told that more than ten are due, a run is large from its first PR.
        let mut due = OutcomeLines::default();
        due.due(LIST_ALL_UP_TO);
        assert!(!due.large());
        due.due(LIST_ALL_UP_TO + 1);
        assert!(due.large());
        assert_eq!(due.add(|| "pr 0".into(), true), ["pr 0"]);
        assert!(due.add(|| "pr 1".into(), false).is_empty());
    }

    /// The last line counts what each PR became, not what it already was.
    #[test]
    fn counts_say_what_the_tick_changed() {
        use crate::core::decide::tests::watch;
        let mut lit_before = watch();
        lit_before.status.pills.ci = Ci::Lit;
        let plan_with = |status: WatchStatus| crate::core::decide::Plan {
            status,
            actions: Vec::new(),
            history: Vec::new(),
            seen: Vec::new(),
            next_tick_at: None,
            resolved_intents: Vec::new(),
            needs_evidence: false,
        };
        let mut lit = WatchStatus::default();
        lit.pills.ci = Ci::Lit;
        let merged = WatchStatus {
            state: PrState::Merged,
            ..WatchStatus::default()
        };
        let outcomes = [
            PrOutcome {
                watch: watch(),
                plan: Some(plan_with(lit.clone())),
                error: None,
                cut_off: false,
            },
            PrOutcome {
                watch: lit_before,
                plan: Some(plan_with(lit)),
                error: None,
                cut_off: false,
            },
            PrOutcome {
                watch: watch(),
                plan: Some(plan_with(merged)),
                error: None,
                cut_off: false,
            },
            PrOutcome {
                watch: watch(),
                plan: None,
                error: Some("boom".into()),
                cut_off: false,
            },
        ];
        let mut c = RunCounts::default();
        for o in &outcomes {
            c.add(o);
        }
        assert_eq!(
            c,
            RunCounts {
                ticked: 4,
                changed: 1,
                merged: 1,
                ci: 1,
                errors: 1,
                ..RunCounts::default()
            }
        );
    }
}
