//! `man`: the manual pages, rendered by clap_mangen from the same definitions as `--help` and
//! `completions` (each command's examples become its EXAMPLES section, its usage as `--help`
//! says it its SYNOPSIS): pr-monitor(1) on standard output, or one page per command written
//! into a folder. It needs no config or database.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::Cli;

/// `after_help`'s first line, which the page says as its section heading instead.
const EXAMPLES: &str = "Examples:";

/// `text` as roff that prints it as it is: backslashes escaped, no line read as a request,
/// hyphens that stay hyphens when copied.
fn roff_verbatim(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.replace('\\', "\\e").replace('-', "\\-");
        if line.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One command's page: clap_mangen's sections, with the examples under EXAMPLES.
fn page(command: &clap::Command) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(command.clone())
        .source(format!("pr-monitor {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    match command.get_overridden_usage() {
        // The usage `--help` shows (`merge <PR> <--when-ready|--cancel|--now>`, whose `--now`
        // clap knows only as the global clock), not one made of the flags clap lists.
        Some(usage) => {
            out.extend_from_slice(b".SH SYNOPSIS\n");
            out.extend_from_slice(roff_verbatim(&usage.to_string()).as_bytes());
        }
        None => man.render_synopsis_section(&mut out)?,
    }
    man.render_description_section(&mut out)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if command.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(help) = command.get_after_help() {
        let help = help.to_string();
        let examples = help.strip_prefix(EXAMPLES).unwrap_or(&help);
        out.extend_from_slice(b".SH EXAMPLES\n.nf\n");
        out.extend_from_slice(roff_verbatim(examples.trim_matches('\n')).as_bytes());
        out.extend_from_slice(b".fi\n");
    }
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// The command tree as the pages show it: built (so each names its parents), no `help`.
fn tree() -> clap::Command {
    let mut command = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    command.build();
    command
}

/// Writes `command`'s page and its subcommands' into `dir`; returns how many.
fn write_pages(command: &clap::Command, dir: &Path) -> Result<usize> {
    let name = command
        .get_display_name()
        .unwrap_or_else(|| command.get_name());
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, page(command)?)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    let mut written = 1;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        written += write_pages(sub, dir)?;
    }
    Ok(written)
}

/// `man [--dir DIR]`.
pub fn man(dir: Option<&Path>, json: bool) -> Result<u8> {
    let command = tree();
    match dir {
        None => {
            // Written whole, so a closed pipe is an error said, never a half page.
            std::io::stdout().lock().write_all(&page(&command)?)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create `{}`", dir.display()))?;
            let written = write_pages(&command, dir)?;
            if json {
                crate::outln!(
                    "{}",
                    serde_json::json!({"dir": dir.display().to_string(), "pages": written})
                )?;
            } else {
                crate::outln!("wrote {written} manual pages in {}", dir.display())?;
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_verbatim_roff() {
        assert_eq!(
            roff_verbatim("  pr-monitor run\n.hidden \\x"),
            "  pr\\-monitor run\n\\&.hidden \\ex\n"
        );
    }

    #[test]
    fn every_page_has_its_examples() {
        let command = tree();
        let text = String::from_utf8(page(&command).unwrap()).unwrap();
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH OPTIONS",
            ".SH SUBCOMMANDS",
            ".SH EXAMPLES",
        ] {
            assert!(text.contains(section), "{section}:\n{text}");
        }
        let watch = command.find_subcommand("watch").unwrap();
        let add = watch.find_subcommand("add").unwrap();
        let text = String::from_utf8(page(add).unwrap()).unwrap();
        assert!(text.contains("pr\\-monitor watch add"), "{text}");
        assert!(text.contains(".TH pr-monitor-watch-add 1"), "{text}");
    }
}
