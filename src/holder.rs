//! Who holds a PR's lease: the run (its id), the process (pid, and when the process started,
//! against pid reuse), the host and when the run began. A lease names its holder so that a
//! later run on the same host can take over the leases of a run whose process is gone (a
//! kill -9, an OOM kill) at once instead of waiting for the lease to expire, and so that
//! `status` and `run` can say who holds what.
//!
//! Whether a process is gone is read from `/proc` (Linux). Where `/proc` cannot tell, and for
//! a holder on another host, nothing is taken over: the lease waits for its expiry.

use serde::{Deserialize, Serialize};

use crate::model::Instant;

/// The run holding a lease, as stored in the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// A short id for the run, unique enough to tell runs apart in a listing.
    pub run: String,
    pub pid: u32,
    pub host: String,
    /// When the run began, by the wall clock.
    pub since: Instant,
    /// When the process started, in clock ticks since boot (`/proc/<pid>/stat`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
}

/// What `/proc` says about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// Running (or sleeping, stopped …), started at this tick count when it could be read.
    Running { started: Option<u64> },
    /// Dead, waiting for its parent to collect it.
    Zombie,
    /// No such process.
    Absent,
    /// `/proc` cannot tell (not Linux, not mounted).
    Unknown,
}

impl Holder {
    /// This process, starting run `run` now (wall clock).
    pub fn this_process(run: String) -> Holder {
        let pid = std::process::id();
        Holder {
            run,
            pid,
            host: host_name(),
            since: crate::clock::wall_now(),
            started: match probe(pid) {
                Process::Running { started } => started,
                _ => None,
            },
        }
    }

    /// A fresh run of this process, with a short random-looking id.
    pub fn new_run() -> Holder {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_i64(
            crate::clock::wall_now()
                .timestamp_nanos_opt()
                .unwrap_or_default(),
        );
        Holder::this_process(format!("{:08x}", h.finish() & 0xffff_ffff))
    }

    /// The text stored as the lease's owner.
    pub fn key(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.run.clone())
    }

    /// The holder a stored lease owner names; `None` for an owner written before leases named
    /// their holders (such a lease waits for its expiry).
    pub fn parse(key: &str) -> Option<Holder> {
        serde_json::from_str(key).ok()
    }

    /// Whether this holder's process is known to be gone, seen from `host` where `/proc` says
    /// `process` about its pid. A holder on another host, or one `/proc` cannot tell about, is
    /// never gone: its lease waits for expiry.
    pub fn gone(&self, host: &str, process: Process) -> bool {
        if self.host != host {
            return false;
        }
        match process {
            Process::Absent | Process::Zombie => true,
            Process::Running { started } => {
                // The pid was reused by a process that started at another time.
                matches!((self.started, started), (Some(a), Some(b)) if a != b)
            }
            Process::Unknown => false,
        }
    }

    /// [`Holder::gone`], asking this host's `/proc`.
    pub fn gone_here(&self) -> bool {
        self.gone(&host_name(), probe(self.pid))
    }
}

/// This host's name (the kernel's node name), or `unknown` when it cannot be read.
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// What `/proc/<pid>/stat` says about `pid`.
pub(crate) fn probe(pid: u32) -> Process {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return Process::Unknown;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => parse_stat(&stat),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Process::Absent,
        Err(_) => Process::Unknown,
    }
}

/// Reads a `/proc/<pid>/stat` line: the state (field 3) and the start time (field 22), which
/// follow the command name in parentheses (a name that may itself hold spaces and parentheses).
fn parse_stat(stat: &str) -> Process {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return Process::Unknown;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    match fields.first() {
        Some(&("Z" | "X" | "x")) => Process::Zombie,
        Some(_) => Process::Running {
            started: fields.get(19).and_then(|s| s.parse().ok()),
        },
        None => Process::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder() -> Holder {
        Holder {
            run: "7f3a0c21".into(),
            pid: 4121,
            host: "host-a".into(),
            since: crate::model::parse_instant("2026-11-30T20:14:02Z").unwrap(),
            started: Some(900),
        }
    }

    #[test]
    fn a_holder_is_gone_only_on_its_own_host_when_proc_says_so() {
        let h = holder();
        for (host, process, gone) in [
            ("host-a", Process::Absent, true),
            ("host-a", Process::Zombie, true),
            ("host-a", Process::Running { started: Some(900) }, false),
            ("host-a", Process::Running { started: Some(901) }, true),
            ("host-a", Process::Running { started: None }, false),
            ("host-a", Process::Unknown, false),
            ("host-b", Process::Absent, false),
            ("host-b", Process::Zombie, false),
        ] {
            assert_eq!(h.gone(host, process), gone, "{host} {process:?}");
        }
        let unknown_start = Holder {
            started: None,
            ..holder()
        };
        assert!(!unknown_start.gone("host-a", Process::Running { started: Some(5) }));
    }

    #[test]
    fn a_holder_reads_back_from_its_key() {
        let h = holder();
        assert_eq!(Holder::parse(&h.key()), Some(h.clone()));
        assert_eq!(
            Holder::parse("1234-5678"),
            None,
            "an owner from before holders"
        );
    }

    #[test]
    fn stat_lines_give_state_and_start_time() {
        let line =
            "4121 (pr mon) itor) S 1 4121 4121 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 900 1000 10";
        assert_eq!(parse_stat(line), Process::Running { started: Some(900) });
        assert_eq!(parse_stat("4121 (x) Z 1 2 3"), Process::Zombie);
        assert_eq!(parse_stat("garbage"), Process::Unknown);
    }

    #[test]
    fn this_process_is_running_and_not_gone() {
        let me = Holder::new_run();
        assert_eq!(me.pid, std::process::id());
        assert!(!me.gone_here());
        assert!(matches!(
            probe(me.pid),
            Process::Running { started: Some(_) }
        ));
    }
}
