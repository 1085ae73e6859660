//! The server's query layer over results files: one compact row per eval (where its latest
//! record is — file, byte offset, length — and the few fields the list filters and sorts by),
//! extended as the files grow (only the new bytes are read), rebuilt for a file that shrank
//! (compacted). Each file's rows are also kept in an index file beside it ([`super::store`]),
//! read instead of the records at the next start while it still describes the file. Rows
//! pages with offset and limit, filters by outcome, text, tag and dataset, sorts by name
//! (numbers in names as numbers), id, outcome, score, tokens, cost and duration, counts; an
//! eval's full record is read by its byte offset. Callers name evals by id, never paths: only
//! the files given at start (and a directory's `*.jsonl` files) are ever read, and only the
//! index folder beside them written.

use std::collections::HashMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;

use serde::Deserialize;

use super::store::{self, Item, Record, Replay, Store};

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
    #[serde(default)]
    below_threshold: bool,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    total_usage: Option<Usage>,
    #[serde(default)]
    runs: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    reliability: Option<Reliability>,
}

/// What the list shows of a record's usage.
#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cost_usd: Option<f64>,
}

/// A record's pass rate over its runs.
#[derive(Deserialize)]
struct Reliability {
    #[serde(default)]
    pass_rate: Option<f64>,
}

/// How many records one refresh reads at most (from an index file: four times as many), so
/// that the index's lock is held a fraction of a second at a time while a large file is read.
const BATCH: usize = 25_000;

/// An eval's status as the list shows it.
pub(super) const STATUSES: [&str; 5] = ["passed", "failed", "error", "skipped", "below"];

/// One eval: its latest record's place and the fields filters and sorts read.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub id: Box<str>,
    /// Index into [`STATUSES`].
    pub status: u8,
    pub score: f32,
    pub duration_ms: f32,
    pub cost: f32,
    pub tokens: f32,
    pub pass_rate: f32,
    pub runs: u16,
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
    /// The CRC-32 of the bytes read.
    crc: crc32fast::Hasher,
    /// Its index file (none where it cannot be written), and what it has said so far.
    store: Option<Store>,
    /// The index file's entries still to be read back, at start.
    replay: Option<Replay>,
    /// The index file's names, by their number in it, as the index's names.
    names: Vec<u32>,
    /// The index's names, as their number in the index file.
    numbers: HashMap<u32, u32>,
}

impl File {
    fn new(path: PathBuf) -> File {
        File {
            path,
            read: 0,
            seen: None,
            identity: None,
            crc: crc32fast::Hasher::new(),
            store: None,
            replay: None,
            names: Vec::new(),
            numbers: HashMap::new(),
        }
    }
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
    /// Which names are datasets' and which tags' (numbers into `names`).
    datasets: std::collections::BTreeSet<u32>,
    tags: std::collections::BTreeSet<u32>,
    /// The rows in name order (numbers in names as numbers), the first `named` rows.
    by_name: Vec<u32>,
    named: usize,
    /// Bumped whenever a row is added or changed.
    pub version: u64,
    /// Each manifest read: its stamp (modification time, length) and how many evals it lists.
    manifests: HashMap<PathBuf, ((std::time::SystemTime, u64), Option<usize>)>,
    /// Records read back from index files, and read (parsed) from results files.
    pub from_index: u64,
    pub from_records: u64,
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
    /// `name` or `id` (ids with numbers as numbers), `outcome`, `score`, `tokens`, `cost`,
    /// `duration`; `-` before it sorts down; empty: the order the records were read in (the
    /// order evals finished).
    pub sort: String,
}

/// A page of rows.
pub(super) struct Page<'a> {
    pub total: usize,
    /// Matching rows per status.
    pub counts: [usize; STATUSES.len()],
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
            datasets: Default::default(),
            tags: Default::default(),
            by_name: Vec::new(),
            named: 0,
            version: 0,
            manifests: HashMap::new(),
            from_index: 0,
            from_records: 0,
        };
        // The first batch at once (all of a run of fewer evals); the follower reads the rest.
        index.refresh();
        index
    }

    /// Reads what was added to the files since the last refresh (and new files of the
    /// directories); a file that shrank or was replaced is read again from its start. A file
    /// seen for the first time is read from its index file where that still describes it, and
    /// what was added since from the file. Reads at most [`BATCH`] records (ten times as many
    /// entries of an index file), so that requests are answered between batches while a
    /// large file is indexed; whether there is more to read.
    pub(super) fn refresh(&mut self) -> bool {
        let more = self.refresh_files();
        self.order_by_name();
        more
    }

    fn refresh_files(&mut self) -> bool {
        for path in self.list() {
            if !self.files.iter().any(|f| f.path == path) {
                self.files.push(File::new(path));
            }
        }
        for file in 0..self.files.len() {
            let Ok(meta) = std::fs::metadata(&self.files[file].path) else {
                continue;
            };
            if self.files[file].replay.is_some() && self.replay(file) {
                return true;
            }
            let stamp = (meta.modified().unwrap_or(std::time::UNIX_EPOCH), meta.len());
            let f = &mut self.files[file];
            if f.seen == Some(stamp) {
                continue;
            }
            let now = store::identity(&meta);
            let identity = Some(now);
            if f.identity.is_none() {
                // First seen: its index file, if it still describes it.
                f.identity = identity;
                let opened = Store::open(&f.path, &meta);
                f.store = opened.store;
                f.read = opened.read;
                f.crc = crc32fast::Hasher::new_with_initial(opened.crc);
                if let Some(replay) = opened.replay {
                    f.replay = Some(replay);
                    if self.replay(file) {
                        return true;
                    }
                }
            }
            let f = &mut self.files[file];
            let replaced = f.identity != identity;
            f.identity = identity;
            if meta.len() < f.read || replaced {
                // Compacted or rewritten: its rows go, and it is read again.
                self.forget(file, now);
            }
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            let more = self.read_from(file);
            let f = &mut self.files[file];
            if let Some(store) = &mut f.store
                && store
                    .save(f.read, f.crc.clone().finalize(), modified)
                    .is_err()
            {
                f.store = None;
            }
            // A file read in part is looked at again, whatever its stamp.
            f.seen = (!more).then_some(stamp);
            if more {
                return true;
            }
        }
        false
    }

    /// Drops file `file`'s rows and what was read of it: it is read again from its start.
    fn forget(&mut self, file: usize, identity: (u64, u64)) {
        let f = &mut self.files[file];
        f.read = 0;
        f.crc = crc32fast::Hasher::new();
        f.replay = None;
        f.names.clear();
        f.numbers.clear();
        if let Some(store) = &mut f.store
            && store.reset(identity).is_err()
        {
            f.store = None;
        }
        let file = u32::try_from(file).unwrap_or(u32::MAX);
        self.rows.retain(|r| r.file != file);
        self.by_id = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        self.by_name.clear();
        self.named = 0;
        self.version += 1;
    }

    /// Reads file `file`'s index file back, up to four batches of entries; whether it stopped
    /// there. An index file that cannot be read to its end is dropped, and the file read
    /// again from its start.
    fn replay(&mut self, file: usize) -> bool {
        let Some(mut replay) = self.files[file].replay.take() else {
            return false;
        };
        let mut records = 0;
        loop {
            if records == BATCH * 4 {
                self.files[file].replay = Some(replay);
                return true;
            }
            match replay.next() {
                Ok(Some(Item::Name(name))) => {
                    let n = self.name(&name);
                    let f = &mut self.files[file];
                    let number = u32::try_from(f.names.len()).unwrap_or(u32::MAX);
                    f.names.push(n);
                    f.numbers.insert(n, number);
                }
                Ok(Some(Item::Record(r))) => {
                    let names = &self.files[file].names;
                    let global = |k: u32| names.get(k as usize).copied();
                    let dataset = if r.dataset == u32::MAX {
                        Some(u32::MAX)
                    } else {
                        global(r.dataset)
                    };
                    let tags: Option<Box<[u32]>> = r.tags.iter().map(|t| global(*t)).collect();
                    let (Some(dataset), Some(tags)) = (dataset, tags) else {
                        self.replay_failed(file);
                        return true;
                    };
                    if dataset != u32::MAX {
                        self.datasets.insert(dataset);
                    }
                    self.tags.extend(tags.iter().copied());
                    self.put(Row {
                        id: r.id,
                        status: r.status.min(STATUSES.len() as u8 - 1),
                        score: r.score,
                        duration_ms: r.duration_ms,
                        cost: r.cost,
                        tokens: r.tokens,
                        pass_rate: r.pass_rate,
                        runs: r.runs,
                        dataset,
                        tags,
                        file: u32::try_from(file).unwrap_or(u32::MAX),
                        offset: r.offset,
                        len: r.len,
                    });
                    self.from_index += 1;
                    records += 1;
                }
                Ok(None) => return false,
                Err(_) => {
                    self.replay_failed(file);
                    return true;
                }
            }
        }
    }

    /// An index file that could not be read back: the file is read again from its start.
    fn replay_failed(&mut self, file: usize) {
        let identity = self.files[file].identity.unwrap_or((0, 0));
        self.forget(file, identity);
        self.files[file].seen = None;
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
                self.from_records += 1;
                records += 1;
            }
            self.files[file].crc.update(&line);
            offset += n as u64;
        }
        self.files[file].read = offset;
        more
    }

    /// Puts the rows added since the last call in name order (sorted, then merged with the
    /// rows in order already).
    fn order_by_name(&mut self) {
        if self.named == self.rows.len() {
            return;
        }
        let rows = &self.rows;
        let by =
            |a: &u32, b: &u32| natural(&rows[*a as usize].id, &rows[*b as usize].id).then(a.cmp(b));
        let mut new: Vec<u32> = (self.named..rows.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        new.sort_by(by);
        let old = std::mem::take(&mut self.by_name);
        let mut merged = Vec::with_capacity(old.len() + new.len());
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < new.len() {
            if by(&old[i], &new[j]).is_le() {
                merged.push(old[i]);
                i += 1;
            } else {
                merged.push(new[j]);
                j += 1;
            }
        }
        merged.extend_from_slice(&old[i..]);
        merged.extend_from_slice(&new[j..]);
        self.by_name = merged;
        self.named = self.rows.len();
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
            niceeval::Outcome::Passed if head.below_threshold => 4,
            niceeval::Outcome::Passed => 0,
            niceeval::Outcome::Failed if head.error.is_some() => 2,
            niceeval::Outcome::Failed => 1,
            niceeval::Outcome::Skipped => 3,
        };
        let dataset = head.dataset.as_deref().map_or(u32::MAX, |d| self.name(d));
        if dataset != u32::MAX {
            self.datasets.insert(dataset);
        }
        let tags: Box<[u32]> = head.tags.iter().map(|t| self.name(t)).collect();
        self.tags.extend(tags.iter().copied());
        // As the one-file page counts them: all runs' usage when there is one, and the cost
        // the usage reports, else the report's.
        let usage = match (&head.total_usage, &head.usage) {
            (Some(t), _) if t.input_tokens + t.output_tokens > 0 || t.cost_usd.is_some() => Some(t),
            (_, u) => u.as_ref(),
        };
        let tokens = usage.map_or(0, |u| u.input_tokens + u.output_tokens);
        let cost = usage.and_then(|u| u.cost_usd).or(head.cost_usd);
        let row = Row {
            id: head.id.into(),
            status,
            score: head.score.map_or(f32::NAN, |s| s as f32),
            duration_ms: head.duration_ms as f32,
            cost: cost.map_or(f32::NAN, |c| c as f32),
            tokens: tokens as f32,
            pass_rate: head
                .reliability
                .and_then(|r| r.pass_rate)
                .map_or(f32::NAN, |p| p as f32),
            runs: u16::try_from(head.runs.len()).unwrap_or(u16::MAX),
            dataset,
            tags,
            file: u32::try_from(file).unwrap_or(u32::MAX),
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
        };
        self.keep(file, &row);
        self.put(row);
    }

    /// Writes `row` (of file `file`) to the file's index file, its names first.
    fn keep(&mut self, file: usize, row: &Row) {
        let Index { files, names, .. } = self;
        let f = &mut files[file];
        let Some(store) = &mut f.store else {
            return;
        };
        let mut number = |n: u32, store: &mut Store| -> std::io::Result<u32> {
            if let Some(&k) = f.numbers.get(&n) {
                return Ok(k);
            }
            let k = u32::try_from(f.names.len()).unwrap_or(u32::MAX);
            store.append(&Item::Name(names[n as usize].clone()))?;
            f.names.push(n);
            f.numbers.insert(n, k);
            Ok(k)
        };
        let written = (|| -> std::io::Result<()> {
            let dataset = if row.dataset == u32::MAX {
                u32::MAX
            } else {
                number(row.dataset, store)?
            };
            let tags = row
                .tags
                .iter()
                .map(|t| number(*t, store))
                .collect::<std::io::Result<Vec<u32>>>()?;
            store.append(&Item::Record(Record {
                id: row.id.clone(),
                status: row.status,
                runs: row.runs,
                score: row.score,
                duration_ms: row.duration_ms,
                cost: row.cost,
                tokens: row.tokens,
                pass_rate: row.pass_rate,
                dataset,
                tags,
                offset: row.offset,
                len: row.len,
            }))
        })();
        if written.is_err() {
            f.store = None;
        }
    }

    /// Adds a row, or replaces the row of its eval: the latest record of an eval (the last one
    /// read) is the one shown.
    fn put(&mut self, row: Row) {
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

    /// How many rows have each status (the unfiltered query's counts, without listing the
    /// rows).
    pub(super) fn counts(&self) -> [usize; STATUSES.len()] {
        let mut counts = [0usize; STATUSES.len()];
        for r in &self.rows {
            counts[r.status as usize] += 1;
        }
        counts
    }

    /// How many evals there are.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// A name (dataset, tag) by its index.
    pub(super) fn name_of(&self, i: u32) -> Option<&str> {
        self.names.get(i as usize).map(|n| &**n)
    }

    /// The datasets' names, sorted.
    pub(super) fn datasets(&self) -> Vec<&str> {
        self.sorted_names(&self.datasets)
    }

    /// The tags, sorted.
    pub(super) fn tags(&self) -> Vec<&str> {
        self.sorted_names(&self.tags)
    }

    fn sorted_names(&self, set: &std::collections::BTreeSet<u32>) -> Vec<&str> {
        let mut out: Vec<&str> = set.iter().filter_map(|&n| self.name_of(n)).collect();
        out.sort_unstable();
        out
    }

    /// The results files read (each directory's as found).
    pub(super) fn paths(&self) -> impl Iterator<Item = &std::path::Path> {
        self.files.iter().map(|f| f.path.as_path())
    }

    /// The rows `query` asks for.
    pub(super) fn query(&self, query: &Query) -> Page<'_> {
        let text = query.text.to_lowercase();
        let pattern = id_pattern(&query.text);
        let tag = (!query.tag.is_empty()).then(|| self.name_ids.get(query.tag.as_str()));
        let dataset =
            (!query.dataset.is_empty()).then(|| self.name_ids.get(query.dataset.as_str()));
        let wanted = |s: u8| match query.outcome.as_str() {
            "" => true,
            "failed" => s == 1 || s == 2,
            "passed" => s == 0 || s == 4,
            o => STATUSES[s as usize] == o,
        };
        let (down, key) = match query.sort.strip_prefix('-') {
            Some(key) => (true, key),
            None => (false, query.sort.as_str()),
        };
        let mut counts = [0usize; STATUSES.len()];
        let mut kept: Vec<u32> = Vec::new();
        // In name order, the rows are walked in it (the rows added since the last refresh
        // last); else in the order read.
        let order: Box<dyn Iterator<Item = u32>> = if matches!(key, "name" | "id") {
            let named = u32::try_from(self.named).unwrap_or(u32::MAX);
            let len = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
            Box::new(self.by_name.iter().copied().chain(named..len))
        } else {
            Box::new(0..u32::try_from(self.rows.len()).unwrap_or(u32::MAX))
        };
        for i in order {
            let r = &self.rows[i as usize];
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
            match &pattern {
                Some(re) if !re.is_match(&r.id) => continue,
                None if !text.is_empty() && !contains_lower(&r.id, &text) => continue,
                _ => {}
            }
            counts[r.status as usize] += 1;
            if wanted(r.status) {
                kept.push(i);
            }
        }
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
            "tokens" => by_number(&mut kept, |r| r.tokens),
            "outcome" => kept.sort_by_key(|i| rows[*i as usize].status),
            _ => {}
        }
        if down && matches!(key, "outcome" | "id" | "name") {
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

    /// How many evals the runs' manifests beside the files expect (`None` without one). A
    /// manifest is read again only when it changed (a million evals' is 30 MB).
    pub(super) fn expected(&mut self) -> Option<usize> {
        let mut total = None;
        for f in &self.files {
            let manifest = f.path.with_extension("manifest.json");
            let Ok(meta) = std::fs::metadata(&manifest) else {
                continue;
            };
            let stamp = (meta.modified().unwrap_or(std::time::UNIX_EPOCH), meta.len());
            let count = match self.manifests.get(&manifest) {
                Some((seen, count)) if *seen == stamp => *count,
                _ => {
                    #[derive(Deserialize)]
                    struct Evals {
                        evals: Vec<serde::de::IgnoredAny>,
                    }
                    let count = std::fs::read(&manifest)
                        .ok()
                        .and_then(|text| serde_json::from_slice::<Evals>(&text).ok())
                        .map(|m| m.evals.len());
                    self.manifests.insert(manifest, (stamp, count));
                    count
                }
            };
            if let Some(count) = count {
                *total.get_or_insert(0) += count;
            }
        }
        total
    }
}

/// `a` and `b` compared with runs of digits as numbers (`case_2` before `case_10`; leading
/// zeros aside), as the one-file page orders its rows.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // The bytes both share compare equal, up to the digit run the first difference is in:
    // skipped eight at a time (ids share long prefixes: `module::dataset::case_`).
    let n = a.len().min(b.len());
    let mut k = 0;
    while k + 8 <= n && a[k..k + 8] == b[k..k + 8] {
        k += 8;
    }
    while k < n && a[k] == b[k] {
        k += 1;
    }
    while k > 0 && a[k - 1].is_ascii_digit() {
        k -= 1;
    }
    let (mut i, mut j) = (k, k);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            fn trim(d: &[u8]) -> &[u8] {
                let zeros = d.iter().take_while(|c| **c == b'0').count();
                &d[zeros..]
            }
            let (x, y) = (trim(&a[si..i]), trim(&b[sj..j]));
            let by = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
            if by != Ordering::Equal {
                return by;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// Whether `hay` contains `needle` (already lowercase), ignoring ASCII case.
/// `/re/` (flags after the last slash, case-insensitive always) as a regular expression over
/// ids, as the one-file page reads its search box; `None` for plain text, and for a pattern that
/// does not compile (then searched as text, as the page does).
fn id_pattern(text: &str) -> Option<regex::Regex> {
    let body = text.strip_prefix('/')?;
    let (pattern, flags) = body.rsplit_once('/')?;
    if pattern.is_empty() || !flags.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .ok()
}

fn contains_lower(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.len() <= h.len()
        && h.windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

#[cfg(test)]
mod tests {
    use super::{id_pattern, natural};

    #[test]
    fn a_search_between_slashes_is_a_case_insensitive_pattern_over_ids() {
        let re = id_pattern("/case_0+1$/").expect("a pattern");
        assert!(re.is_match("dataset::CASE_0001"));
        assert!(!re.is_match("dataset::case_0011"));
        assert!(id_pattern("/refund/i").is_some());
        // Plain text, and a pattern that does not compile, are searched as text.
        assert!(id_pattern("refund").is_none());
        assert!(id_pattern("/(unclosed/").is_none());
        assert!(id_pattern("//").is_none());
    }
    use std::cmp::Ordering;

    #[test]
    fn names_compare_with_numbers_as_numbers() {
        let mut names = vec![
            "dataset::cases::q100",
            "dataset::cases::q19",
            "dataset::cases::q2000",
            "dataset::cases::q1999",
            "dataset::cases::q2",
            "evals::case_10",
            "evals::case_2",
            "evals::case_1b",
            "evals::a",
            "dataset::cases",
            "dataset::cases::r1",
        ];
        names.sort_by(|a, b| natural(a, b));
        assert_eq!(
            names,
            [
                "dataset::cases",
                "dataset::cases::q2",
                "dataset::cases::q19",
                "dataset::cases::q100",
                "dataset::cases::q1999",
                "dataset::cases::q2000",
                "dataset::cases::r1",
                "evals::a",
                "evals::case_1b",
                "evals::case_2",
                "evals::case_10",
            ]
        );
        assert_eq!(
            natural("case_007", "case_7"),
            Ordering::Equal,
            "as the one-file page: padded"
        );
        assert_eq!(natural("case_7", "case_7"), Ordering::Equal);
        assert_eq!(natural("x12345678y2", "x12345678y10"), Ordering::Less);
    }
}
