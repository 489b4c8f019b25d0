//! Where the database goes when no config file is found: the user's state folder,
//! `$XDG_STATE_HOME/pr-monitor`, else `$HOME/.local/state/pr-monitor` (never the current
//! folder, which for cron or a container is wherever the process happened to start).

use std::ffi::OsString;
use std::path::PathBuf;

/// The state folder for the environment `var` reads, or `None` when neither an absolute
/// `XDG_STATE_HOME` nor a `HOME` is set. A relative `XDG_STATE_HOME` is ignored, as the XDG base
/// directory specification asks.
pub(super) fn default_dir(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    set("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| set("HOME").map(|home| home.join(".local/state")))
        .map(|base| base.join("pr-monitor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Environment variables, by name.
    type Vars<'a> = &'a [(&'a str, &'a str)];

    #[test]
    fn the_state_folder_follows_xdg_then_home() {
        let cases: &[(Vars<'_>, Option<&str>)] = &[
            (
                &[("XDG_STATE_HOME", "/x/state"), ("HOME", "/home/a")],
                Some("/x/state/pr-monitor"),
            ),
            (
                &[("HOME", "/home/a")],
                Some("/home/a/.local/state/pr-monitor"),
            ),
            (
                &[("XDG_STATE_HOME", "relative"), ("HOME", "/home/a")],
                Some("/home/a/.local/state/pr-monitor"),
            ),
            (
                &[("XDG_STATE_HOME", ""), ("HOME", "/home/a")],
                Some("/home/a/.local/state/pr-monitor"),
            ),
            (&[("HOME", "")], None),
            (&[], None),
        ];
        for (vars, want) in cases {
            let var = |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            };
            assert_eq!(default_dir(var), want.map(PathBuf::from), "{vars:?}");
        }
    }
}
