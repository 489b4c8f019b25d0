//! The last part of a long plain-text document (a job log): the `Range` a request asks it
//! with, and the last bytes of an answer that ignored the range, read as a stream so that a
//! 100 MiB log never sits in memory whole.

use std::io::Read;

/// The most bytes of a job log pr-monitor reads: its last 256 KiB, far more than the tail an
/// agent is given (`pr.log_tail_bytes`, after cleaning) and the flake patterns read.
pub const LOG_TAIL_BYTES: u64 = 256 * 1024;

/// The `Range` header value asking for a document's last `n` bytes.
pub fn range(n: u64) -> String {
    format!("bytes=-{n}")
}

/// Whether a 206 answer's `Content-Range` (`bytes START-END/TOTAL`) starts past the
/// document's first byte; an unreadable one is taken to.
pub fn starts_past_the_beginning(content_range: Option<&str>) -> bool {
    let start = content_range
        .and_then(|v| v.trim().strip_prefix("bytes "))
        .and_then(|v| v.split_once('-'))
        .and_then(|(start, _)| start.trim().parse::<u64>().ok());
    start != Some(0)
}

/// The last `n` bytes `reader` gives, holding at most about `2n` at any time, and whether
/// bytes before them were dropped.
pub fn last_bytes(mut reader: impl Read, n: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut kept: Vec<u8> = Vec::with_capacity(n.min(1 << 20) * 2);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut dropped = false;
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        kept.extend_from_slice(&chunk[..read]);
        if kept.len() > 2 * n {
            kept.drain(..kept.len() - n);
            dropped = true;
        }
    }
    if kept.len() > n {
        kept.drain(..kept.len() - n);
        dropped = true;
    }
    Ok((kept, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_bytes_of_a_stream_are_kept_and_a_drop_is_told() {
        let long: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let (kept, dropped) = last_bytes(long.as_slice(), 1000).unwrap();
        assert_eq!(kept, long[long.len() - 1000..]);
        assert!(dropped);
        let (kept, dropped) = last_bytes(&b"short"[..], 1000).unwrap();
        assert_eq!((kept.as_slice(), dropped), (&b"short"[..], false));
        let (kept, dropped) = last_bytes(&b"exactly"[..], 7).unwrap();
        assert_eq!((kept.as_slice(), dropped), (&b"exactly"[..], false));
    }

    #[test]
    fn a_content_range_from_the_first_byte_is_the_whole_document() {
        assert!(!starts_past_the_beginning(Some("bytes 0-99/100")));
        assert!(starts_past_the_beginning(Some("bytes 50-99/100")));
        assert!(starts_past_the_beginning(None));
        assert!(starts_past_the_beginning(Some("garbage")));
        assert_eq!(range(262_144), "bytes=-262144");
    }
}
