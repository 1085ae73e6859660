//! The index kept beside a results file, so that `niceeval view` started again on a large file
//! reads its rows instead of parsing every record: `<dir>/.niceeval-index/<file name>.idx`, a
//! header and a log of entries, appended to as the server indexes the file.
//!
//! The header (64 bytes) names the results file it indexes — its identity (device and inode on
//! Unix), how many of its bytes are indexed, the CRC-32 of those bytes, its modification time
//! when the header was written — and how many bytes of entries after it are valid. An entry is
//! a name (a dataset or a tag, numbered in the order they come) or a record's row (its id, the
//! fields the list filters and sorts by, its byte offset and length). The index is used only
//! when it still describes the file: the same identity, at least as many bytes, and either the
//! same length and modification time (written well before the index was: not racy) or the same
//! CRC over the indexed bytes (a file that grew by appends keeps them). Anything else — another
//! file renamed over it, a file rewritten in place, even to the same length, a shorter one, an
//! index cut short or of another version — and it is built again from the records. A
//! directory that cannot be written only means no index is kept.

use std::io::{BufReader, BufWriter, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first bytes of an index file: its format and version.
const MAGIC: &[u8; 8] = b"NEVIDX\x00\x01";
/// The header's size.
const HEADER: u64 = 64;
/// A file modified less than this before its index was written may have changed within the
/// same timestamp: its bytes are checked.
const RACY: Duration = Duration::from_secs(2);

/// The folder beside results files that holds their indexes.
pub(super) const DIR: &str = ".niceeval-index";

/// One row as the index file keeps it; names by their number in this file.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Record {
    pub id: Box<str>,
    pub status: u8,
    pub runs: u16,
    pub score: f32,
    pub duration_ms: f32,
    pub cost: f32,
    pub tokens: f32,
    pub pass_rate: f32,
    /// A name's number in this file, `u32::MAX` for none.
    pub dataset: u32,
    pub tags: Vec<u32>,
    pub offset: u64,
    pub len: u32,
}

/// An entry of the log.
#[derive(Debug, PartialEq)]
pub(super) enum Item {
    /// The next name (numbered from 0 in the order they come).
    Name(Box<str>),
    Record(Record),
}

/// The index file of one results file, open for appending.
pub(super) struct Store {
    out: BufWriter<std::fs::File>,
    /// Bytes of entries written after the header.
    written: u64,
    identity: (u64, u64),
}

/// The entries of a valid index file, read back in order.
pub(super) struct Replay {
    input: BufReader<std::fs::File>,
    left: u64,
}

/// What opening a results file's index gives.
pub(super) struct Opened {
    /// Where to append (none where the index cannot be written).
    pub store: Option<Store>,
    /// The entries already indexed, when the index still describes the file.
    pub replay: Option<Replay>,
    /// Bytes of the file the entries cover (0 for a new index).
    pub read: u64,
    /// The CRC-32 of those bytes.
    pub crc: u32,
}

/// The header's fields.
#[derive(Clone, Copy)]
struct Header {
    identity: (u64, u64),
    read: u64,
    crc: u32,
    modified_ns: u64,
    saved_ns: u64,
    written: u64,
}

impl Header {
    fn bytes(&self) -> [u8; HEADER as usize] {
        let mut out = [0u8; HEADER as usize];
        out[..8].copy_from_slice(MAGIC);
        out[8..16].copy_from_slice(&self.identity.0.to_le_bytes());
        out[16..24].copy_from_slice(&self.identity.1.to_le_bytes());
        out[24..32].copy_from_slice(&self.read.to_le_bytes());
        out[32..36].copy_from_slice(&self.crc.to_le_bytes());
        out[40..48].copy_from_slice(&self.modified_ns.to_le_bytes());
        out[48..56].copy_from_slice(&self.saved_ns.to_le_bytes());
        out[56..64].copy_from_slice(&self.written.to_le_bytes());
        out
    }

    fn parse(bytes: &[u8; HEADER as usize]) -> Option<Header> {
        if &bytes[..8] != MAGIC {
            return None;
        }
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let mut crc = [0u8; 4];
        crc.copy_from_slice(&bytes[32..36]);
        Some(Header {
            identity: (u64_at(8), u64_at(16)),
            read: u64_at(24),
            crc: u32::from_le_bytes(crc),
            modified_ns: u64_at(40),
            saved_ns: u64_at(48),
            written: u64_at(56),
        })
    }
}

/// Where the index of the results file `source` is kept.
pub(super) fn path_of(source: &Path) -> Option<PathBuf> {
    let name = source.file_name()?;
    let mut file = name.to_os_string();
    file.push(".idx");
    Some(
        source
            .parent()
            .unwrap_or(Path::new("."))
            .join(DIR)
            .join(file),
    )
}

/// A file's device and inode (`(0, 0)` where the platform does not say).
pub(super) fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The CRC-32 of the first `len` bytes of `path` (`None` when it cannot be read whole).
fn crc_of(path: &Path, len: u64) -> Option<u32> {
    let mut file = std::fs::File::open(path).ok()?.take(len);
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut seen = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        seen += n as u64;
    }
    (seen == len).then(|| hasher.finalize())
}

impl Store {
    /// Opens the index of `source` (whose metadata is `meta`): its entries when it still
    /// describes the file, else a new, empty index in its place. The index file is locked
    /// while it is open: a second server on the same file reads the records and keeps no
    /// index (two writers would interleave their entries).
    pub(super) fn open(source: &Path, meta: &std::fs::Metadata) -> Opened {
        let none = || Opened {
            store: None,
            replay: None,
            read: 0,
            crc: 0,
        };
        let Some(path) = path_of(source) else {
            return none();
        };
        let Some(dir) = path.parent() else {
            return none();
        };
        if std::fs::create_dir_all(dir).is_err() {
            return none();
        }
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        else {
            return none();
        };
        if file.try_lock().is_err() {
            return none();
        }
        if let Some((header, replay)) = valid(&path, source, meta) {
            // Entries past the valid ones (a server stopped between writing and saying so)
            // are dropped.
            let end = HEADER + header.written;
            if file.set_len(end).is_ok() {
                let mut out = BufWriter::with_capacity(1 << 16, file);
                if out.seek(SeekFrom::Start(end)).is_ok() {
                    return Opened {
                        store: Some(Store {
                            out,
                            written: header.written,
                            identity: header.identity,
                        }),
                        replay: Some(replay),
                        read: header.read,
                        crc: header.crc,
                    };
                }
                return none();
            }
        }
        if file.set_len(0).is_err() {
            return none();
        }
        let mut store = Store {
            out: BufWriter::with_capacity(1 << 16, file),
            written: 0,
            identity: identity(meta),
        };
        if store.header(0, 0, UNIX_EPOCH).is_err() {
            return none();
        }
        Opened {
            store: Some(store),
            replay: None,
            read: 0,
            crc: 0,
        }
    }

    /// Empties the index (its file was rewritten: it is indexed again from its start).
    pub(super) fn reset(&mut self, identity: (u64, u64)) -> std::io::Result<()> {
        self.out.flush()?;
        self.out.get_mut().set_len(HEADER)?;
        self.written = 0;
        self.identity = identity;
        self.header(0, 0, UNIX_EPOCH)
    }

    /// Appends an entry (buffered: [`Store::save`] makes it count).
    pub(super) fn append(&mut self, item: &Item) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(96);
        match item {
            Item::Name(name) => {
                buf.push(1);
                let len = u32::try_from(name.len()).map_err(std::io::Error::other)?;
                buf.extend_from_slice(&len.to_le_bytes());
                buf.extend_from_slice(name.as_bytes());
            }
            Item::Record(r) => {
                buf.push(2);
                let len = u32::try_from(r.id.len()).map_err(std::io::Error::other)?;
                buf.extend_from_slice(&len.to_le_bytes());
                buf.extend_from_slice(r.id.as_bytes());
                buf.push(r.status);
                buf.extend_from_slice(&r.runs.to_le_bytes());
                for x in [r.score, r.duration_ms, r.cost, r.tokens, r.pass_rate] {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
                buf.extend_from_slice(&r.dataset.to_le_bytes());
                let tags = u16::try_from(r.tags.len()).map_err(std::io::Error::other)?;
                buf.extend_from_slice(&tags.to_le_bytes());
                for t in &r.tags {
                    buf.extend_from_slice(&t.to_le_bytes());
                }
                buf.extend_from_slice(&r.offset.to_le_bytes());
                buf.extend_from_slice(&r.len.to_le_bytes());
            }
        }
        self.out.write_all(&buf)?;
        self.written += buf.len() as u64;
        Ok(())
    }

    /// Makes the entries appended so far count: they cover the first `read` bytes of the
    /// file, whose CRC-32 is `crc` and whose modification time was `modified` before they
    /// were read.
    pub(super) fn save(
        &mut self,
        read: u64,
        crc: u32,
        modified: SystemTime,
    ) -> std::io::Result<()> {
        self.out.flush()?;
        self.header(read, crc, modified)
    }

    fn header(&mut self, read: u64, crc: u32, modified: SystemTime) -> std::io::Result<()> {
        let header = Header {
            identity: self.identity,
            read,
            crc,
            modified_ns: nanos(modified),
            saved_ns: nanos(SystemTime::now()),
            written: self.written,
        };
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header.bytes())?;
        file.seek(SeekFrom::Start(HEADER + self.written))?;
        Ok(())
    }
}

/// The header and entries of the index at `path` when it describes `source` now.
fn valid(path: &Path, source: &Path, meta: &std::fs::Metadata) -> Option<(Header, Replay)> {
    let mut input = BufReader::with_capacity(1 << 20, std::fs::File::open(path).ok()?);
    let mut bytes = [0u8; HEADER as usize];
    input.read_exact(&mut bytes).ok()?;
    let header = Header::parse(&bytes)?;
    let length = input.get_ref().metadata().ok()?.len();
    if length < HEADER + header.written
        || header.identity != identity(meta)
        || meta.len() < header.read
    {
        return None;
    }
    let modified = meta.modified().map(nanos).unwrap_or(0);
    let unchanged = meta.len() == header.read
        && modified == header.modified_ns
        && header.saved_ns >= header.modified_ns.saturating_add(RACY.as_nanos() as u64);
    if !unchanged && crc_of(source, header.read)? != header.crc {
        return None;
    }
    Some((
        header,
        Replay {
            input,
            left: header.written,
        },
    ))
}

impl Replay {
    /// The next entry; `Ok(None)` at the end, an error for an entry that cannot be read (the
    /// index is built again).
    pub(super) fn next(&mut self) -> std::io::Result<Option<Item>> {
        if self.left == 0 {
            return Ok(None);
        }
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "a damaged index");
        let input = &mut self.input;
        let mut head = [0u8; 5];
        input.read_exact(&mut head)?;
        let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if len as u64 > self.left {
            return Err(bad());
        }
        let mut text = vec![0u8; len];
        input.read_exact(&mut text)?;
        let text: Box<str> = String::from_utf8(text).map_err(|_| bad())?.into();
        let mut used = 5 + len as u64;
        let item = match head[0] {
            1 => Item::Name(text),
            2 => {
                let mut fixed = [0u8; 29];
                input.read_exact(&mut fixed)?;
                let u32_at = |b: &[u8], at: usize| {
                    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
                };
                let f32_at = |at: usize| f32::from_bits(u32_at(&fixed, at));
                let tags_len = usize::from(u16::from_le_bytes([fixed[27], fixed[28]]));
                let mut tags = vec![0u8; tags_len * 4];
                input.read_exact(&mut tags)?;
                let mut tail = [0u8; 12];
                input.read_exact(&mut tail)?;
                let mut offset = [0u8; 8];
                offset.copy_from_slice(&tail[..8]);
                used += 29 + tags.len() as u64 + 12;
                Item::Record(Record {
                    id: text,
                    status: fixed[0],
                    runs: u16::from_le_bytes([fixed[1], fixed[2]]),
                    score: f32_at(3),
                    duration_ms: f32_at(7),
                    cost: f32_at(11),
                    tokens: f32_at(15),
                    pass_rate: f32_at(19),
                    dataset: u32_at(&fixed, 23),
                    tags: tags.chunks_exact(4).map(|b| u32_at(b, 0)).collect(),
                    offset: u64::from_le_bytes(offset),
                    len: u32_at(&tail, 8),
                })
            }
            _ => return Err(bad()),
        };
        self.left = self.left.checked_sub(used).ok_or_else(bad)?;
        Ok(Some(item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, offset: u64) -> Record {
        Record {
            id: id.into(),
            status: 1,
            runs: 3,
            score: 0.5,
            duration_ms: 12.5,
            cost: 0.25,
            tokens: 160.0,
            pass_rate: 0.66,
            dataset: 0,
            tags: vec![0, 1],
            offset,
            len: 10,
        }
    }

    fn replayed(replay: &mut Replay) -> Vec<Item> {
        let mut out = Vec::new();
        while let Some(item) = replay.next().expect("entries") {
            out.push(item);
        }
        out
    }

    #[test]
    fn an_index_is_read_back_while_it_describes_its_file_and_not_after() {
        let dir = tempfile::tempdir().expect("a directory");
        let source = dir.path().join("evals.jsonl");
        std::fs::write(&source, "0123456789\n").expect("a file");
        let meta = std::fs::metadata(&source).expect("metadata");
        let opened = Store::open(&source, &meta);
        assert!(opened.replay.is_none() && opened.read == 0);
        let mut store = opened.store.expect("writable");
        assert_eq!(
            path_of(&source),
            Some(dir.path().join(".niceeval-index/evals.jsonl.idx"))
        );
        assert!(dir.path().join(".niceeval-index/evals.jsonl.idx").is_file());
        // A second server on the same file keeps no index while the first has it open.
        let second = Store::open(&source, &meta);
        assert!(second.store.is_none() && second.replay.is_none() && second.read == 0);
        store
            .append(&Item::Name("evals::ds".into()))
            .expect("append");
        store.append(&Item::Name("refund".into())).expect("append");
        store
            .append(&Item::Record(record("evals::a", 0)))
            .expect("append");
        // Appended but not saved: not read back.
        store
            .append(&Item::Record(record("evals::b", 5)))
            .expect("append");
        let crc = crc32fast::hash(b"0123456789\n");
        let modified = meta.modified().expect("mtime");
        store.save(11, crc, modified).expect("save");
        store
            .append(&Item::Record(record("evals::c", 99)))
            .expect("append");
        drop(store);
        let opened = Store::open(&source, &meta);
        assert_eq!((opened.read, opened.crc), (11, crc));
        let items = replayed(&mut opened.replay.expect("valid"));
        drop(opened.store);
        assert_eq!(items.len(), 4, "the unsaved entry is dropped: {items:?}");
        assert_eq!(items[3], Item::Record(record("evals::b", 5)));

        // Grown by an append: still valid (the indexed bytes are the same).
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&source)
            .expect("append");
        f.write_all(b"more\n").expect("append");
        drop(f);
        let meta = std::fs::metadata(&source).expect("metadata");
        assert!(Store::open(&source, &meta).replay.is_some());

        // Rewritten in place to the same length: not valid.
        std::fs::write(&source, "01234X6789\nmore\n").expect("rewritten");
        let meta = std::fs::metadata(&source).expect("metadata");
        let opened = Store::open(&source, &meta);
        assert!(opened.replay.is_none() && opened.read == 0);
    }
}
