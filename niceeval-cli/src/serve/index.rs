//! The server's query layer over results files: one compact row per eval (where its latest
//! record is — file, byte offset, length — and the few fields the list filters and sorts by),
//! extended as the files grow (only the new bytes are read), rebuilt for a file that shrank
//! (compacted). Rows pages with offset and limit, filters by outcome, text, tag and dataset,
//! sorts by id, outcome, score, cost and duration, counts; an eval's full record is read by
//! its byte offset. Callers name evals by id, never paths: only the files given at start (and
//! a directory's `*.jsonl` files) are ever read.

use std::collections::HashMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;

use serde::Deserialize;

/// What indexing reads of a record; serde skips the rest.
#[derive(Deserialize)]
struct Head {
    id: String,
    outcome: niceeval::Outcome,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    duration_ms: f64,
    #[serde(default)]
    cost_usd: Option<f64>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    dataset: Option<String>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// How many records one refresh reads at most.
const BATCH: usize = 50_000;

/// An eval's status as the list shows it.
pub(super) const STATUSES: [&str; 4] = ["passed", "failed", "error", "skipped"];

/// One eval: its latest record's place and the fields filters and sorts read.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub id: Box<str>,
    /// Index into [`STATUSES`].
    pub status: u8,
    pub score: f32,
    pub duration_ms: f32,
    pub cost: f32,
    /// Index into [`Index::names`], `u32::MAX` for none.
    pub dataset: u32,
    /// Indexes into [`Index::names`].
    pub tags: Box<[u32]>,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}

/// A results file and how much of it is indexed.
struct File {
    path: PathBuf,
    /// Bytes read so far (up to the last complete line).
    read: u64,
    /// Last seen modification time and size, to know when to read.
    seen: Option<(std::time::SystemTime, u64)>,
    /// The file's identity (device and inode on Unix) when it was read: a file renamed over
    /// it (a compacted results file) is read again from its start.
    identity: Option<(u64, u64)>,
}

/// Every eval of the results files, by id.
pub(super) struct Index {
    roots: Vec<PathBuf>,
    files: Vec<File>,
    rows: Vec<Row>,
    by_id: HashMap<Box<str>, u32>,
    /// Dataset and tag names, each once.
    names: Vec<Box<str>>,
    name_ids: HashMap<Box<str>, u32>,
    /// Bumped whenever a row is added or changed.
    pub version: u64,
}

/// What a rows query asks for.
#[derive(Debug, Default)]
pub(super) struct Query {
    pub offset: usize,
    pub limit: usize,
    /// `passed`, `failed` (with errors), `error`, `skipped`, or empty.
    pub outcome: String,
    pub text: String,
    pub tag: String,
    pub dataset: String,
    /// `id`, `outcome`, `score`, `cost`, `duration`; `-` before it sorts down; empty: the
    /// order the records were read in (the order evals finished).
    pub sort: String,
}

/// A page of rows.
pub(super) struct Page<'a> {
    pub total: usize,
    /// Matching rows per status.
    pub counts: [usize; 4],
    pub rows: Vec<&'a Row>,
}

impl Index {
    /// An index of `roots` (results files, and directories of `*.jsonl` files), read at once.
    pub(super) fn new(roots: Vec<PathBuf>) -> Index {
        let mut index = Index {
            roots,
            files: Vec::new(),
            rows: Vec::new(),
            by_id: HashMap::new(),
            names: Vec::new(),
            name_ids: HashMap::new(),
            version: 0,
        };
        // The first batch at once (all of a run of fewer evals); the follower reads the rest.
        index.refresh();
        index
    }

    /// Reads what was added to the files since the last refresh (and new files of the
    /// directories); a file that shrank or was replaced is read again from its start. Reads
    /// at most [`BATCH`] records, so that requests are answered between batches while a large
    /// file is indexed; whether there is more to read.
    pub(super) fn refresh(&mut self) -> bool {
        for path in self.list() {
            if !self.files.iter().any(|f| f.path == path) {
                self.files.push(File {
                    path,
                    read: 0,
                    seen: None,
                    identity: None,
                });
            }
        }
        for file in 0..self.files.len() {
            let Ok(meta) = std::fs::metadata(&self.files[file].path) else {
                continue;
            };
            let stamp = (meta.modified().unwrap_or(std::time::UNIX_EPOCH), meta.len());
            let f = &mut self.files[file];
            if f.seen == Some(stamp) {
                continue;
            }
            let identity = identity(&meta);
            let replaced = f.identity.is_some() && f.identity != identity;
            f.identity = identity;
            if meta.len() < f.read || replaced {
                // Compacted or rewritten: its rows go, and it is read again.
                f.read = 0;
                let file = u32::try_from(file).unwrap_or(u32::MAX);
                self.rows.retain(|r| r.file != file);
                self.by_id = self
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (r.id.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
                    .collect();
                self.version += 1;
            }
            let more = self.read_from(file);
            // A file read in part is looked at again, whatever its stamp.
            self.files[file].seen = (!more).then_some(stamp);
            if more {
                return true;
            }
        }
        false
    }

    /// The results files the roots name now.
    fn list(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in &self.roots {
            if root.is_dir() {
                let mut found: Vec<PathBuf> = std::fs::read_dir(root)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
                    .collect();
                found.sort();
                out.extend(found);
            } else if root.is_file() {
                out.push(root.clone());
            }
        }
        out
    }

    /// Reads file `file`'s complete lines past what was read, up to [`BATCH`] records;
    /// whether it stopped there.
    fn read_from(&mut self, file: usize) -> bool {
        let start = self.files[file].read;
        let Ok(mut handle) = std::fs::File::open(&self.files[file].path) else {
            return false;
        };
        if handle.seek(SeekFrom::Start(start)).is_err() {
            return false;
        }
        let mut records = 0;
        let mut more = false;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, handle);
        let mut line = Vec::new();
        let mut offset = start;
        loop {
            if records == BATCH {
                more = true;
                break;
            }
            line.clear();
            let n = match std::io::BufRead::read_until(&mut reader, b'\n', &mut line) {
                Ok(n) => n,
                Err(_) => break,
            };
            if n == 0 || line.last() != Some(&b'\n') {
                break; // the end, or a line still being written
            }
            let body = line.trim_ascii();
            if !body.is_empty()
                && let Ok(head) = serde_json::from_slice::<Head>(body)
            {
                let skip = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
                self.add(head, file, offset + skip as u64, body.len());
                records += 1;
            }
            offset += n as u64;
        }
        self.files[file].read = offset;
        more
    }

    fn name(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.name_ids.get(name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.into());
        self.name_ids.insert(name.into(), i);
        i
    }

    fn add(&mut self, head: Head, file: usize, offset: u64, len: usize) {
        let status = match head.outcome {
            niceeval::Outcome::Passed => 0,
            niceeval::Outcome::Failed if head.error.is_some() => 2,
            niceeval::Outcome::Failed => 1,
            niceeval::Outcome::Skipped => 3,
        };
        let dataset = head.dataset.as_deref().map_or(u32::MAX, |d| self.name(d));
        let tags = head.tags.iter().map(|t| self.name(t)).collect();
        let row = Row {
            id: head.id.into(),
            status,
            score: head.score.map_or(f32::NAN, |s| s as f32),
            duration_ms: head.duration_ms as f32,
            cost: head.cost_usd.map_or(f32::NAN, |c| c as f32),
            dataset,
            tags,
            file: u32::try_from(file).unwrap_or(u32::MAX),
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
        };
        // The latest record of an eval (the last one read) is the one shown.
        match self.by_id.get(&row.id) {
            Some(&i) => self.rows[i as usize] = row,
            None => {
                let i = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
                self.by_id.insert(row.id.clone(), i);
                self.rows.push(row);
            }
        }
        self.version += 1;
    }

    /// How many evals there are.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// A name (dataset, tag) by its index.
    pub(super) fn name_of(&self, i: u32) -> Option<&str> {
        self.names.get(i as usize).map(|n| &**n)
    }

    /// The rows `query` asks for.
    pub(super) fn query(&self, query: &Query) -> Page<'_> {
        let text = query.text.to_lowercase();
        let tag = (!query.tag.is_empty()).then(|| self.name_ids.get(query.tag.as_str()));
        let dataset =
            (!query.dataset.is_empty()).then(|| self.name_ids.get(query.dataset.as_str()));
        let wanted = |s: u8| match query.outcome.as_str() {
            "" => true,
            "failed" => s == 1 || s == 2,
            o => STATUSES[s as usize] == o,
        };
        let mut counts = [0usize; 4];
        let mut kept: Vec<u32> = Vec::new();
        for (i, r) in self.rows.iter().enumerate() {
            if let Some(t) = tag {
                match t {
                    Some(t) if r.tags.contains(t) => {}
                    _ => continue,
                }
            }
            if let Some(d) = dataset {
                match d {
                    Some(d) if r.dataset == *d => {}
                    _ => continue,
                }
            }
            if !text.is_empty() && !contains_lower(&r.id, &text) {
                continue;
            }
            counts[r.status as usize] += 1;
            if wanted(r.status) {
                kept.push(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        let (down, key) = match query.sort.strip_prefix('-') {
            Some(key) => (true, key),
            None => (false, query.sort.as_str()),
        };
        let rows = &self.rows;
        // A number sorts as a key and a position packed in a u64 (unknown numbers last,
        // whichever the direction; ties in the order read): one unstable sort of integers.
        let by_number = |kept: &mut Vec<u32>, f: fn(&Row) -> f32| {
            let mut packed: Vec<u64> = kept
                .iter()
                .map(|&i| {
                    let x = f(&rows[i as usize]);
                    let key = if x.is_nan() {
                        u32::MAX
                    } else {
                        let bits = x.to_bits();
                        let up = if bits >> 31 == 1 {
                            !bits
                        } else {
                            bits | 0x8000_0000
                        };
                        if down { !up } else { up }
                    };
                    (u64::from(key) << 32) | u64::from(i)
                })
                .collect();
            packed.sort_unstable();
            for (k, p) in kept.iter_mut().zip(packed) {
                *k = (p & 0xffff_ffff) as u32;
            }
        };
        match key {
            "score" => by_number(&mut kept, |r| r.score),
            "cost" => by_number(&mut kept, |r| r.cost),
            "duration" => by_number(&mut kept, |r| r.duration_ms),
            "outcome" => kept.sort_by_key(|i| rows[*i as usize].status),
            "id" => kept.sort_by(|a, b| rows[*a as usize].id.cmp(&rows[*b as usize].id)),
            _ => {}
        }
        if down && matches!(key, "outcome" | "id") {
            kept.reverse();
        }
        let total = kept.len();
        let rows = kept
            .iter()
            .skip(query.offset)
            .take(query.limit)
            .map(|i| &self.rows[*i as usize])
            .collect();
        Page {
            total,
            counts,
            rows,
        }
    }

    /// Eval `id`'s latest record, as the file holds it (JSON).
    pub(super) fn record(&self, id: &str) -> Option<Vec<u8>> {
        let row = &self.rows[*self.by_id.get(id)? as usize];
        let path = &self.files.get(row.file as usize)?.path;
        let mut file = std::fs::File::open(path).ok()?;
        file.seek(SeekFrom::Start(row.offset)).ok()?;
        let mut buf = vec![0; row.len as usize];
        file.read_exact(&mut buf).ok()?;
        Some(buf)
    }

    /// How many evals the runs' manifests beside the files expect (`None` without one).
    pub(super) fn expected(&self) -> Option<usize> {
        let mut total = None;
        for f in &self.files {
            let manifest = f.path.with_extension("manifest.json");
            let Ok(text) = std::fs::read(&manifest) else {
                continue;
            };
            #[derive(Deserialize)]
            struct Evals {
                evals: Vec<serde::de::IgnoredAny>,
            }
            if let Ok(m) = serde_json::from_slice::<Evals>(&text) {
                *total.get_or_insert(0) += m.evals.len();
            }
        }
        total
    }
}

/// A file's device and inode (`None` where the platform does not say).
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Whether `hay` contains `needle` (already lowercase), ignoring ASCII case.
fn contains_lower(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.len() <= h.len()
        && h.windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}
