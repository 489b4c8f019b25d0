//! `--help` and `man`, through the binary, for every command the command line defines: each
//! help has its examples and the global flags under their own heading; `man` renders
//! pr-monitor(1) with its sections and every command, and `man --dir` a page per command, each
//! read by `man -l` where it is installed. Neither needs a config or a database.

use std::path::Path;
use std::process::Command;

use clap::CommandFactory as _;

/// Every command's words (`[]` for pr-monitor itself, `["watch", "add"]`, …), clap's own
/// `help` left out.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(command: &clap::Command, path: &[String], out: &mut Vec<Vec<String>>) {
        out.push(path.to_vec());
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.to_vec();
            p.push(sub.get_name().to_owned());
            walk(sub, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(&pr_monitor::cli::Cli::command(), &[], &mut out);
    out
}

/// pr-monitor in an empty folder, with no config anywhere it would look.
fn bare(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
        .args(args)
        .current_dir(dir)
        .env_remove("PR_MONITOR_CONFIG")
        .env_remove("PR_MONITOR_DB")
        .env("COLUMNS", "100")
        .output()
        .unwrap()
}

fn man_available() -> bool {
    crate::support::tools::present(&["man"], "man is not installed (.ci/run installs man-db)")
}

/// `man -l PAGE` as plain text.
fn rendered(page: &Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env_remove("MAN_KEEP_FORMATTING")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_commands_help_has_examples_and_the_global_flags_under_their_own_heading() {
    let dir = tempfile::tempdir().unwrap();
    let paths = command_paths();
    assert!(paths.len() > 25, "{paths:?}");
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = bare(dir.path(), &args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let examples = text
            .split("\nExamples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{args:?} has no examples:\n{text}"));
        assert!(
            examples
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| l.starts_with("  ") && l.contains("pr-monitor ")),
            "{args:?}:\n{examples}"
        );
        let global = text
            .split("\nGlobal options:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{args:?} has no global options heading:\n{text}"));
        let options = text.split("\nGlobal options:\n").next().unwrap_or_default();
        for flag in [
            "--config <PATH>",
            "--db <PATH>",
            "--now <RFC3339>",
            "--log-format",
        ] {
            assert!(global.contains(flag), "{args:?}: {flag}\n{text}");
            assert!(
                !options.contains(flag),
                "{args:?}: {flag} among its own options"
            );
        }
    }
}

#[test]
fn man_renders_the_manual_with_every_command_and_needs_no_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = bare(dir.path(), &["man"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let roff = String::from_utf8(out.stdout).unwrap();
    assert!(roff.starts_with(".ie") || roff.starts_with(".TH"), "{roff}");
    let top: Vec<String> = command_paths()
        .into_iter()
        .filter(|p| p.len() == 1)
        .map(|p| p[0].clone())
        .collect();
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "SUBCOMMANDS",
        "EXAMPLES",
    ] {
        assert!(roff.contains(&format!(".SH {section}")), "{section}");
    }
    for name in &top {
        assert!(
            roff.contains(&format!("pr\\-monitor\\-{}(1)", name.replace('-', "\\-"))),
            "{name}"
        );
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no config, no database, nothing written"
    );
    let pages = dir.path().join("man1");
    let out = bare(dir.path(), &["man", "--dir", "man1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths = command_paths();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("wrote {} manual pages in man1", paths.len())
    );
    let man = man_available();
    let page = dir.path().join("pr-monitor.1");
    std::fs::write(&page, &roff).unwrap();
    if man {
        let text = rendered(&page);
        for heading in [
            "NAME",
            "SYNOPSIS",
            "GLOBAL OPTIONS",
            "SUBCOMMANDS",
            "EXAMPLES",
        ] {
            assert!(
                text.contains(&format!("\n{heading}\n")),
                "{heading}:\n{text}"
            );
        }
        for name in &top {
            assert!(
                text.contains(&format!("pr-monitor-{name}(1)")),
                "{name}:\n{text}"
            );
        }
    }
    for path in paths {
        let name = std::iter::once("pr-monitor".to_owned())
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let file = pages.join(format!("{name}.1"));
        let roff = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(roff.contains(".SH EXAMPLES"), "{name}");
        if man {
            let text = rendered(&file);
            let words = std::iter::once("pr-monitor")
                .chain(path.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            let examples = text.split("\nEXAMPLES\n").nth(1).unwrap_or_default();
            assert!(examples.contains(&words), "{name}:\n{text}");
        }
    }
}

/// `merge`'s three ways read alike in its help and its manual page: `--now` after `merge PR` is
/// the merge flag, so both show `merge <PR> <--when-ready|--cancel|--now>` rather than the
/// flags clap lists, where `--now` is only the global clock.
#[test]
fn merges_help_and_manual_page_show_its_three_ways_alike() {
    const USAGE: &str = "pr-monitor merge <PR> <--when-ready|--cancel|--now>";
    let dir = tempfile::tempdir().unwrap();
    let help = bare(dir.path(), &["merge", "--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains(&format!("Usage: {USAGE}\n")), "{help}");
    let out = bare(dir.path(), &["man", "--dir", "man1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("man1/pr-monitor-merge.1");
    let roff = std::fs::read_to_string(&page).unwrap();
    let synopsis = roff
        .split(".SH SYNOPSIS\n")
        .nth(1)
        .and_then(|s| s.split("\n.SH ").next())
        .unwrap_or_default()
        .replace("\\-", "-");
    assert!(synopsis.contains(USAGE), "{synopsis}");
    assert!(!synopsis.contains("[--cancel]"), "{synopsis}");
    if man_available() {
        let text = rendered(&page);
        let synopsis = text
            .split("\nSYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.split("\nDESCRIPTION\n").next())
            .unwrap_or_default();
        assert_eq!(
            synopsis.split_whitespace().collect::<Vec<_>>().join(" "),
            USAGE,
            "{text}"
        );
    }
}
