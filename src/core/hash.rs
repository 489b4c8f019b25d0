//! Stable hashing: fingerprints and idempotency ids that must match across builds and machines.

/// A stable 64-bit FNV-1a hash of `text`, in hex: the same across builds and machines (unlike
/// std's hasher), for fingerprints and idempotency ids.
pub(crate) fn fnv64(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
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
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            let mut b = [0; 8];
            b.copy_from_slice(w);
            self.word(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
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
}
