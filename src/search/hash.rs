//! A small, fast, non-cryptographic hasher for the index's internal maps.
//!
//! The keys are term strings and small integer ids produced by the index itself, so the
//! denial-of-service resistance of the standard SipHash buys nothing here, while it cost about
//! a tenth of index build time. This is a word-at-a-time multiply/rotate hash.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

/// An odd 64-bit constant with well-mixed bits (from the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A final avalanche so the low bits (which pick the bucket) depend on every input bit.
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(K) ^ (x >> 32)
    }
}

pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;
pub(crate) type FastMap<K, V> = HashMap<K, V, FastBuild>;
pub(crate) type FastSet<K> = HashSet<K, FastBuild>;
