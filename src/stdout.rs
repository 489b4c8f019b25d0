//! Everything a command prints to standard output goes through here ([`outln!`], [`out!`]). A
//! reader that stops early (`status | head -1`) closes the pipe: the write then fails with
//! [`Closed`], which the command returns like any error and `main` ends on quietly, keeping the
//! exit code the command had already decided ([`keep_code`]). No panic, no message, no 101.

use std::io::Write;

/// Standard output was closed by its reader (EPIPE).
#[derive(Debug, thiserror::Error)]
#[error("standard output is closed")]
pub(crate) struct Closed;

/// Writes `args` to standard output and flushes it, so a closed pipe is found at this write.
pub(crate) fn write(args: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let text = crate::secrets::mask(&args.to_string());
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Closed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to standard output")),
    }
}

/// Whether `e` is (caused by) a closed standard output.
pub(crate) fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(<dyn std::error::Error>::is::<Closed>)
}

/// The exit code `code` a command decided before printing, unless printing failed for another
/// reason than a closed standard output.
pub(crate) fn keep_code(code: u8, printed: anyhow::Result<()>) -> anyhow::Result<u8> {
    match printed {
        Err(e) if !is_closed(&e) => Err(e),
        _ => Ok(code),
    }
}

/// `println!` that returns the write's error (see the module doc).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that returns the write's error (see the module doc).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_output_keeps_the_decided_code_and_other_errors_pass() {
        assert_eq!(keep_code(1, Err(Closed.into())).unwrap(), 1);
        assert_eq!(keep_code(0, Ok(())).unwrap(), 0);
        let other = anyhow::anyhow!("disk on fire");
        assert!(keep_code(1, Err(other)).is_err());
        assert!(is_closed(
            &anyhow::Error::from(Closed).context("printing the status")
        ));
    }
}
