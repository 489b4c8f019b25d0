//! Stable hashing: fingerprints and idempotency ids that must match across builds and machines.

/// A stable 64-bit FNV-1a hash of `text`, in hex: the same across builds and machines (unlike
/// std's hasher), for fingerprints and idempotency ids.
pub(crate) fn fnv64(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// Hands each whole eight-byte word of `bytes` (little-endian) to `each`, in order: the bytes
/// left over.
fn words(bytes: &[u8], mut each: impl FnMut(u64)) -> &[u8] {
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        let mut b = [0; 8];
        b.copy_from_slice(w);
        each(u64::from_le_bytes(b));
    }
    words.remainder()
}

/// A stable 64-bit digest of a sequence of byte strings, eight bytes at a step (FNV-1a's
/// constants over words, then a final mix): the same across builds and machines, for telling
/// whether something kept in the database is still what it was. Each part is closed by its
/// length, so `("ab", "c")` and `("a", "bc")` differ. Not for an adversary: a change that
/// keeps the digest would only delay a decision (see [`crate::core::decide::settled_until`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(Self::PRIME).rotate_left(29);
    }

    /// Adds one part.
    pub(crate) fn part(&mut self, bytes: &[u8]) -> &mut Self {
        let rest = words(bytes, |w| self.word(w));
        let mut b = [0; 8];
        b[..rest.len()].copy_from_slice(rest);
        self.word(u64::from_le_bytes(b));
        self.word(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        self
    }

    /// The digest, mixed so every bit of the input reaches every bit of the output.
    pub(crate) fn finish(self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// A stable 128-bit digest of one byte stream, fed in pieces of any size (an
/// [`std::io::Write`], so a serializer writes straight into it): the same digest as the whole
/// text fed at once, on every build and machine. Two 64-bit lanes over eight-byte words, each
/// with its own constants, then the length, each lane mixed as [`Digest::finish`] mixes. For
/// telling whether a forge's answer is the one kept ([`crate::forge::Summary::fingerprint`]);
/// not for an adversary.
#[derive(Debug, Clone)]
pub(crate) struct Fingerprint {
    lanes: [u64; 2],
    pending: [u8; 8],
    held: usize,
    len: u64,
}

/// The lanes a [`Fingerprint`] starts from.
const LANES: [u64; 2] = [0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142];

/// Mixes one eight-byte word into two lanes, each with its own constants.
fn mix_lanes(lanes: &mut [u64; 2], w: u64) {
    lanes[0] = (lanes[0] ^ w)
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(29);
    lanes[1] = (lanes[1] ^ w)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .rotate_left(31);
}

/// A stable 128-bit digest of a sequence of byte strings and words, each byte string closed by
/// its length (as [`Digest`] is, with a [`Fingerprint`]'s two lanes): for many short pieces
/// (the tokens of a JSON text) with no buffering between them. Not for an adversary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pieces {
    lanes: [u64; 2],
}

impl Default for Pieces {
    fn default() -> Self {
        Pieces { lanes: LANES }
    }
}

impl Pieces {
    /// Adds one byte string.
    pub(crate) fn part(&mut self, bytes: &[u8]) {
        let rest = words(bytes, |w| mix_lanes(&mut self.lanes, w));
        let mut b = [0; 8];
        b[..rest.len()].copy_from_slice(rest);
        mix_lanes(&mut self.lanes, u64::from_le_bytes(b));
        mix_lanes(
            &mut self.lanes,
            u64::try_from(bytes.len()).unwrap_or(u64::MAX),
        );
    }

    /// Adds one word.
    pub(crate) fn word(&mut self, w: u64) {
        mix_lanes(&mut self.lanes, w);
    }

    /// The 128 bits of everything added, mixed as [`Fingerprint::bits`] mixes them.
    pub(crate) fn bits(self) -> [u64; 2] {
        self.lanes.map(|h| Digest(h).finish())
    }
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            lanes: LANES,
            pending: [0; 8],
            held: 0,
            len: 0,
        }
    }
}

impl Fingerprint {
    /// The written form of a fingerprint: this mark, then 32 hex digits.
    pub(crate) const MARK: char = '#';

    /// The fingerprint of `text`, written.
    pub(crate) fn of(text: &str) -> String {
        let mut f = Fingerprint::default();
        f.feed(text.as_bytes());
        f.finish()
    }

    /// Whether `text` is a written fingerprint (not the text one was made of).
    pub(crate) fn is_written(text: &str) -> bool {
        text.len() == 33
            && text.starts_with(Self::MARK)
            && text[1..].bytes().all(|b| b.is_ascii_hexdigit())
    }

    fn word(&mut self, w: u64) {
        mix_lanes(&mut self.lanes, w);
    }

    /// Feeds the next bytes of the stream.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len() as u64);
        if self.held > 0 {
            let take = bytes.len().min(8 - self.held);
            self.pending[self.held..self.held + take].copy_from_slice(&bytes[..take]);
            self.held += take;
            bytes = &bytes[take..];
            if self.held < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.pending));
            self.held = 0;
        }
        let rest = words(bytes, |w| self.word(w));
        self.pending[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    /// The fingerprint of everything fed, written: [`Fingerprint::MARK`] and 32 hex digits.
    pub(crate) fn finish(self) -> String {
        Self::written(self.bits())
    }

    /// The 128 bits of everything fed, mixed: what [`Fingerprint::finish`] writes.
    fn bits(mut self) -> [u64; 2] {
        let mut last = [0; 8];
        last[..self.held].copy_from_slice(&self.pending[..self.held]);
        self.word(u64::from_le_bytes(last));
        self.word(self.len);
        self.lanes.map(|h| Digest(h).finish())
    }

    /// `bits` written as [`Fingerprint::finish`] writes them.
    pub(crate) fn written([a, b]: [u64; 2]) -> String {
        format!("{}{a:016x}{b:016x}", Self::MARK)
    }
}

impl std::io::Write for Fingerprint {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.feed(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_stable_and_tells_parts_apart() {
        let of = |parts: &[&str]| {
            let mut d = Digest::default();
            for p in parts {
                d.part(p.as_bytes());
            }
            d.finish()
        };
        // Kept in the database: the same on every build.
        assert_eq!(of(&["memory", "{}"]), of(&["memory", "{}"]));
        assert_ne!(of(&["ab", "c"]), of(&["a", "bc"]));
        assert_ne!(of(&["abcdefgh"]), of(&["abcdefgh", ""]));
        assert_ne!(of(&["x"; 3]), of(&["x"; 2]));
        let long = "a long memory of a watch, longer than one word".repeat(10);
        let mut changed = long.clone().into_bytes();
        changed[200] ^= 1;
        assert_ne!(of(&[&long]), of(&[std::str::from_utf8(&changed).unwrap()]));
        // The same on every build and machine: kept digests stay comparable.
        assert_eq!(
            format!("{:016x}", of(&["memory", "{}"])),
            "216247ad25b657bd"
        );
    }

    #[test]
    fn pieces_are_told_apart_by_where_each_ends() {
        let of = |parts: &[&str], word: Option<u64>| {
            let mut p = Pieces::default();
            for part in parts {
                p.part(part.as_bytes());
            }
            if let Some(w) = word {
                p.word(w);
            }
            p.bits()
        };
        assert_eq!(of(&["ab", "c"], None), of(&["ab", "c"], None));
        assert_ne!(of(&["ab", "c"], None), of(&["a", "bc"], None));
        assert_ne!(of(&["abcdefgh"], None), of(&["abcdefgh", ""], None));
        assert_ne!(of(&["x"], Some(1)), of(&["x"], Some(2)));
        assert_ne!(of(&["x"], None), of(&["x"], Some(0)));
        // The same on every build and machine.
        assert_eq!(
            Fingerprint::written(of(&["name", "value"], Some(7))),
            "#c4da8435345daf3df0740ef60025f9ea"
        );
    }

    #[test]
    fn a_fingerprint_is_the_same_however_its_text_is_fed_and_tells_texts_apart() {
        let text = r#"{"pullRequest":{"headRefOid":"abc","updatedAt":"2026-12-01T10:00:00Z"}}"#;
        let whole = Fingerprint::of(text);
        assert!(Fingerprint::is_written(&whole), "{whole}");
        assert!(!Fingerprint::is_written(text));
        for step in 1..=text.len() {
            let mut f = Fingerprint::default();
            for piece in text.as_bytes().chunks(step) {
                f.feed(piece);
            }
            assert_eq!(f.finish(), whole, "fed {step} bytes at a time");
        }
        let mut changed = text.to_owned().into_bytes();
        changed[20] ^= 1;
        assert_ne!(
            Fingerprint::of(std::str::from_utf8(&changed).unwrap()),
            whole
        );
        assert_ne!(Fingerprint::of(&text[..text.len() - 1]), whole);
        assert_ne!(Fingerprint::of(""), Fingerprint::of("\0"));
        // Kept in the database: the same on every build and machine.
        assert_eq!(
            Fingerprint::of("memory"),
            "#0df29c4a7410bb2ac8ccaf58ffc4a196"
        );
        assert_eq!(Fingerprint::of("{}").len(), 33);
    }
}
