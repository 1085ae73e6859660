//! Records kept deflated until they are read again: a promptfoo file's test items, its tests
//! and its cases, between reading the file and running each case.
//!
//! A case must be whole when it runs, and every case of a file is read (and checked) before the
//! first one runs. Consecutive records of a file differ in a few words, so they are deflated
//! together, in blocks of [`BLOCK`] bytes (flate2, level 1, already a dependency of niceeval's
//! HTML report): measured with heaptrack on 100,000 inline tests of 7 items, their cases take
//! 5.5 MB and their tests 7.8 MB (as compact JSON text, about 600 bytes each: 60 MB apiece).
//! Reading a record back inflates only its block (the one read last is kept inflated, as the
//! runner reads records in order).

use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

/// How many bytes of records are deflated together.
const BLOCK: usize = 64 * 1024;

/// Records appended one by one, read back by their index.
#[derive(Default)]
pub(crate) struct Deflated {
    /// The blocks filled, deflated.
    blocks: Vec<Box<[u8]>>,
    /// The block being filled, as it is.
    open: Vec<u8>,
    /// Each record's block, and its start and end in the block inflated.
    records: Vec<(u32, u32, u32)>,
    /// The block read last, inflated.
    last: Mutex<Option<(u32, Arc<[u8]>)>>,
}

impl std::fmt::Debug for Deflated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deflated")
            .field("records", &self.records.len())
            .field("blocks", &self.blocks.len())
            .finish()
    }
}

impl Deflated {
    /// Appends `record`.
    pub(crate) fn push(&mut self, record: &[u8]) {
        if !self.open.is_empty() && self.open.len() + record.len() > BLOCK {
            self.seal();
        }
        let block = u32::try_from(self.blocks.len()).unwrap_or(u32::MAX);
        let start = u32::try_from(self.open.len()).unwrap_or(u32::MAX);
        self.open.extend_from_slice(record);
        let end = u32::try_from(self.open.len()).unwrap_or(u32::MAX);
        self.records.push((block, start, end));
    }

    /// Deflates the block being filled: the next record starts a block of its own. Reading
    /// works either way; sealing after the last record frees the unused part of the open
    /// block.
    pub(crate) fn seal(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
        // Writing to a `Vec` does not fail.
        let deflated = encoder
            .write_all(&self.open)
            .and_then(|()| encoder.finish())
            .unwrap_or_default();
        self.blocks.push(deflated.into_boxed_slice());
        self.open.clear();
        if self.open.capacity() > BLOCK {
            self.open.shrink_to(BLOCK);
        }
    }

    /// How many records.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Record `index`, as it was pushed; `None` past the last one.
    pub(crate) fn get(&self, index: usize) -> Option<Vec<u8>> {
        let (block, start, end) = *self.records.get(index)?;
        let range = start as usize..end as usize;
        if block as usize == self.blocks.len() {
            return self.open.get(range).map(<[u8]>::to_vec);
        }
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let inflated = match &*last {
            Some((kept, inflated)) if *kept == block => inflated.clone(),
            _ => {
                let mut inflated = Vec::with_capacity(BLOCK);
                DeflateDecoder::new(&self.blocks[block as usize][..])
                    .read_to_end(&mut inflated)
                    .ok()?;
                let inflated: Arc<[u8]> = inflated.into();
                *last = Some((block, inflated.clone()));
                inflated
            }
        };
        drop(last);
        inflated.get(range).map(<[u8]>::to_vec)
    }

    /// Every record in order, each inflated once per block.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        (0..self.len()).map_while(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_as_they_went_in_open_sealed_and_large() {
        let mut store = Deflated::default();
        let records: Vec<Vec<u8>> = (0..5_000)
            .map(|i| format!("{{\"vars\":{{\"topic\":\"topic {i}\"}},\"n\":{i}}}").into_bytes())
            .chain([vec![7u8; 3 * BLOCK], Vec::new(), b"last".to_vec()])
            .collect();
        for record in &records {
            store.push(record);
        }
        assert_eq!(store.len(), records.len());
        // Read back in order, out of order, before and after sealing the open block.
        assert_eq!(store.iter().collect::<Vec<_>>(), records);
        for i in [4_999, 3, 5_002, 0, 5_000, 2_500] {
            assert_eq!(store.get(i).as_ref(), Some(&records[i]), "{i}");
        }
        store.seal();
        assert_eq!(store.iter().collect::<Vec<_>>(), records);
        assert_eq!(store.get(records.len()), None);
        // Similar records deflate to a fraction of their size.
        let raw: usize = records[..5_000].iter().map(Vec::len).sum();
        let deflated: usize = store.blocks.iter().map(|b| b.len()).sum();
        assert!(deflated < raw / 4 + 3 * BLOCK / 100, "{deflated} of {raw}");
    }
}
