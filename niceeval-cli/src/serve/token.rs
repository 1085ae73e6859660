//! The token every request to the viewer's server must carry: 32 random bytes from the
//! operating system, as 64 hex digits, new at every start.

use std::hash::{BuildHasher as _, Hasher as _};

/// A new token: 32 bytes of the OS's randomness (`/dev/urandom`; elsewhere the keys std's
/// hash maps draw from the OS), hex.
pub(super) fn new() -> String {
    let mut bytes = [0u8; 32];
    if !urandom(&mut bytes) {
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn urandom(bytes: &mut [u8]) -> bool {
    use std::io::Read as _;
    std::fs::File::open("/dev/urandom").is_ok_and(|mut f| f.read_exact(bytes).is_ok())
}

/// Whether `given` is `token`, in time that does not depend on where they differ.
pub(super) fn matches(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
