//! Levenshtein edit distance over Unicode scalar values, computed bit-parallel: the engine behind
//! [`super::similarity`], `levenshtein_distance` and `normalized_similarity`.
//!
//! The algorithm is Myers' bit-vector algorithm (Myers 1999) in Hyyrö's formulation for the
//! Levenshtein distance (Hyyrö 2003), split into 64-row blocks for patterns longer than 64
//! characters. Each column of the dynamic-programming table costs one pass over the active
//! blocks, so two texts of `n` and `m` characters take `O(n · m / 64)` word operations instead of
//! `O(n · m)` cell updates. Three refinements on top:
//!
//! - the common prefix and suffix are cut off first (they never change the distance);
//! - the pattern (the shorter text) is stored sparsely — for each distinct character, the
//!   blocks where it occurs and a bit mask per block — so memory stays `O(m)` whatever the
//!   alphabet (CJK text, emoji), and a text character costs one table look-up per column
//!   (a direct array for ASCII, a hash map otherwise);
//! - the table is first computed only inside a diagonal band that holds every alignment of cost
//!   at most `k` (Ukkonen's cut-off), with `k` grown until the result fits under it (a banded
//!   result is an upper bound, which sizes the next band); once a band would cover half the
//!   pattern the whole table is computed instead. So similar texts cost `O(n · d / 64)` for a
//!   distance `d`, and dissimilar ones little more than the plain block algorithm.
//!
//! Why not a crate: `strsim` and most others fill the full `O(n · m)` table (seconds for two
//! 20,000-character texts). `rapidfuzz` (0.5) implements the same family of algorithms but, over
//! `char` iterators, measured 90–140 ms for two 20,000-character texts in this project's
//! benchmark setting, far over the 20 ms budget, and it keeps a per-block hash map for
//! non-ASCII characters. The code below is small, self-contained and checked against the
//! textbook table by a pseudo-random test over block boundaries and multi-byte text.

use std::cell::RefCell;
use std::collections::HashMap;

/// Bits per block.
const WORD: usize = 64;

/// Buffers every distance computed on a thread reuses: the two texts as characters, the
/// pattern's character ids and dense table, and the column state. Once a thread has compared
/// texts of some length, comparing texts up to that length allocates nothing but a hash map for
/// non-ASCII characters.
#[derive(Default)]
struct Scratch {
    a: Vec<char>,
    b: Vec<char>,
    work: Work,
}

/// The buffers of one computation on character slices.
#[derive(Default)]
pub(crate) struct Work {
    ids: Vec<usize>,
    table: Vec<u64>,
    state: Vec<(u64, u64)>,
}

/// Largest buffer (in elements) kept for the next call: one huge comparison does not keep its
/// memory for the thread's lifetime.
const KEEP: usize = 1 << 16;

impl Scratch {
    fn trim(&mut self) {
        fn trim<T>(v: &mut Vec<T>) {
            if v.capacity() > KEEP {
                *v = Vec::new();
            }
        }
        trim(&mut self.a);
        trim(&mut self.b);
        trim(&mut self.work.ids);
        trim(&mut self.work.table);
        trim(&mut self.work.state);
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with the thread's buffers (fresh ones when they are in use or gone).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut f = Some(f);
    let reused = SCRATCH.try_with(|cell| {
        cell.try_borrow_mut().ok().map(|mut scratch| {
            let out = (f.take().expect("called once"))(&mut scratch);
            scratch.trim();
            out
        })
    });
    match (reused, f) {
        (Ok(Some(out)), _) => out,
        (_, Some(f)) => f(&mut Scratch::default()),
        (_, None) => unreachable!("the closure ran but returned nothing"),
    }
}

/// Levenshtein distance between two strings, counted in Unicode scalar values.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    if a == b {
        return 0;
    }
    let (distance, a_len, b_len) = distance_str_within(a, b, u64::MAX);
    // An unlimited budget is never exceeded; the fallback is the trivial upper bound.
    distance.unwrap_or(a_len.max(b_len))
}

/// Levenshtein distance between two strings and their lengths in Unicode scalar values; the
/// distance is `None` when computing it would take more than `budget` block updates (one block
/// update: 64 cells of one column). Reuses the thread's buffers.
pub(crate) fn distance_str_within(a: &str, b: &str, budget: u64) -> (Option<usize>, usize, usize) {
    with_scratch(|scratch| {
        scratch.a.clear();
        scratch.a.extend(a.chars());
        scratch.b.clear();
        scratch.b.extend(b.chars());
        let d = distance_in(&scratch.a, &scratch.b, budget, &mut scratch.work);
        (d, scratch.a.len(), scratch.b.len())
    })
}

/// Levenshtein distance between two character sequences.
#[cfg(test)]
fn distance_chars(a: &[char], b: &[char]) -> usize {
    // An unlimited budget is never exceeded; the fallback is the trivial upper bound.
    distance_within(a, b, u64::MAX).unwrap_or(a.len().max(b.len()))
}

/// Levenshtein distance between two character sequences, or `None` when computing it would
/// take more than `budget` block updates (one block update: 64 cells of one column, a few
/// nanoseconds). Only long and very different texts come near a budget of a billion:
/// two 20,000-character texts take at most 6.3 million.
#[cfg(test)]
fn distance_within(a: &[char], b: &[char], budget: u64) -> Option<usize> {
    with_scratch(|scratch| distance_in(a, b, budget, &mut scratch.work))
}

/// [`distance_within`] with the given buffers.
fn distance_in(a: &[char], b: &[char], budget: u64, work: &mut Work) -> Option<usize> {
    let (a, b) = trim_common_affixes(a, b);
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return Some(text.len());
    }
    let bits = PatternBits::build(pattern, DENSE_LIMIT, work);
    let found = banded(&bits, text, budget, &mut work.state);
    bits.recycle(work);
    found
}

/// The distance between the pattern of `bits` and `text`, banded (see the module's notes).
fn banded(
    bits: &PatternBits,
    text: &[char],
    budget: u64,
    state: &mut Vec<(u64, u64)>,
) -> Option<usize> {
    let m = bits.len;
    let diff = text.len() - m;
    let columns = text.len() as u64;
    let mut spent = 0u64;
    let mut spend = |blocks: usize| {
        spent = spent.saturating_add(columns.saturating_mul(blocks as u64));
        spent <= budget
    };
    // Ukkonen's cut-off: a band of half-width `slack` around the diagonals holds every
    // alignment of cost at most `diff + 2 * slack`. A banded result above that is still an upper
    // bound of the distance, so the next band is at least wide enough to hold it (and at least
    // twice as wide). Once a band would cover half of the pattern's rows, the whole table is as
    // cheap.
    let mut slack = WORD;
    loop {
        if diff + 2 * slack + 1 >= m / 2 {
            return spend(bits.words).then(|| bits.run_in(text, None, state));
        }
        if !spend((diff + 2 * slack + 1) / WORD + 2) {
            return None;
        }
        let found = bits.run_in(text, Some(slack), state);
        if found <= diff + 2 * slack {
            return Some(found);
        }
        slack = (2 * slack).max((found - diff).div_ceil(2));
    }
}

/// Cuts the common prefix and suffix off two sequences.
fn trim_common_affixes<'a>(a: &'a [char], b: &'a [char]) -> (&'a [char], &'a [char]) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (&a[..a.len() - suffix], &b[..b.len() - suffix])
}

/// Largest dense pattern table, in 64-bit words (8 MiB); larger tables are stored sparsely.
const DENSE_LIMIT: usize = 1 << 20;

/// Where each character of the pattern occurs: for every distinct character, one bit per row
/// in every block (the pattern-match vectors of Myers' algorithm).
struct PatternBits {
    /// Pattern length in characters (rows of the table).
    len: usize,
    /// Number of 64-row blocks.
    words: usize,
    /// Character ids of ASCII characters; id 0 means "not in the pattern".
    ascii: [u32; 128],
    /// Character ids of other characters.
    other: HashMap<char, u32>,
    masks: Masks,
}

/// The match masks of each character id, by block.
enum Masks {
    /// `table[id * words + block]`; row 0 (characters not in the pattern) is all zeros.
    Dense(Vec<u64>),
    /// `entries[starts[id]..starts[id + 1]]` are the (block, mask) pairs of `id`, ordered by
    /// block: memory proportional to the pattern whatever its alphabet.
    Sparse {
        starts: Vec<usize>,
        entries: Vec<(usize, u64)>,
    },
}

impl PatternBits {
    #[cfg(test)]
    fn new(pattern: &[char]) -> Self {
        Self::with_dense_limit(pattern, DENSE_LIMIT)
    }

    #[cfg(test)]
    fn with_dense_limit(pattern: &[char], dense_limit: usize) -> Self {
        Self::build(pattern, dense_limit, &mut Work::default())
    }

    /// The pattern's masks, built in `work`'s buffers (give them back with
    /// [`PatternBits::recycle`]).
    fn build(pattern: &[char], dense_limit: usize, work: &mut Work) -> Self {
        let mut ascii = [0u32; 128];
        let mut other = HashMap::new();
        let mut distinct = 0u32;
        let ids = &mut work.ids;
        ids.clear();
        for &c in pattern {
            let slot = if c.is_ascii() {
                &mut ascii[c as usize]
            } else {
                other.entry(c).or_insert(0)
            };
            if *slot == 0 {
                distinct += 1;
                *slot = distinct;
            }
            ids.push(*slot as usize);
        }
        let ids_count = distinct as usize + 1;
        let words = pattern.len().div_ceil(WORD);

        let masks = if ids_count.saturating_mul(words) <= dense_limit {
            let mut table = std::mem::take(&mut work.table);
            table.clear();
            table.resize(ids_count * words, 0);
            for (pos, &id) in ids.iter().enumerate() {
                table[id * words + pos / WORD] |= 1u64 << (pos % WORD);
            }
            Masks::Dense(table)
        } else {
            // Counting sort of the positions by id: each id's positions contiguous, ascending.
            let mut first = vec![0usize; ids_count + 1];
            for &id in ids.iter() {
                first[id + 1] += 1;
            }
            for i in 0..ids_count {
                first[i + 1] += first[i];
            }
            let mut fill = first.clone();
            let mut positions = vec![0usize; ids.len()];
            for (pos, &id) in ids.iter().enumerate() {
                positions[fill[id]] = pos;
                fill[id] += 1;
            }
            let mut starts = Vec::with_capacity(ids_count + 1);
            let mut entries: Vec<(usize, u64)> = Vec::new();
            for id in 0..ids_count {
                let begin = entries.len();
                starts.push(begin);
                for &pos in &positions[first[id]..first[id + 1]] {
                    let (block, bit) = (pos / WORD, 1u64 << (pos % WORD));
                    match entries[begin..].last_mut() {
                        Some(last) if last.0 == block => last.1 |= bit,
                        _ => entries.push((block, bit)),
                    }
                }
            }
            starts.push(entries.len());
            Masks::Sparse { starts, entries }
        };

        PatternBits {
            len: pattern.len(),
            words,
            ascii,
            other,
            masks,
        }
    }

    /// Gives the dense table's buffer back to `work`.
    fn recycle(self, work: &mut Work) {
        if let Masks::Dense(table) = self.masks {
            work.table = table;
        }
    }

    /// The id of `c`, 0 when it is not in the pattern.
    fn id(&self, c: char) -> usize {
        if c.is_ascii() {
            self.ascii[c as usize] as usize
        } else {
            self.other.get(&c).map_or(0, |&id| id as usize)
        }
    }

    /// The distance between the pattern and `text` (`text.len() >= self.len`).
    ///
    /// With `band = Some(h)`, column `j` computes only the blocks holding rows
    /// `j - diff - h ..= j + h` (`diff = text.len() - self.len`), the cells any alignment of
    /// cost at most `diff + 2h` passes through. Cells outside the band are over-estimated, never
    /// under-estimated, so the result is an upper bound of the distance, exact when it is at
    /// most `diff + 2h`.
    #[cfg(test)]
    fn run(&self, text: &[char], band: Option<usize>) -> usize {
        self.run_in(text, band, &mut Vec::new())
    }

    /// [`PatternBits::run`] with the column state in `state`'s buffer.
    fn run_in(&self, text: &[char], band: Option<usize>, state: &mut Vec<(u64, u64)>) -> usize {
        match &self.masks {
            Masks::Dense(table) => self.run_with(
                text,
                band,
                state,
                DenseSource {
                    table,
                    words: self.words,
                    rows: [0; 2],
                },
            ),
            Masks::Sparse { starts, entries } => self.run_with(
                text,
                band,
                state,
                SparseSource {
                    starts,
                    entries,
                    cursors: starts.clone(),
                    scratch: [vec![0; self.words], vec![0; self.words]],
                    used: [(0, 0); 2],
                },
            ),
        }
    }

    fn run_with<S: MaskSource>(
        &self,
        text: &[char],
        band: Option<usize>,
        state: &mut Vec<(u64, u64)>,
        mut source: S,
    ) -> usize {
        let m = self.len;
        let words = self.words;
        let diff = text.len() - m;
        let last_bit = ((m - 1) % WORD) as u32;
        let rows = |block: usize| WORD.min(m - block * WORD);
        // The blocks computed in column `j`.
        let span = |j: usize| match band {
            None => (0, words - 1),
            Some(h) => {
                let low = j.saturating_sub(diff + h).max(1);
                let high = (j + h).min(m);
                ((low - 1) / WORD, (high - 1) / WORD)
            }
        };

        // Vertical deltas (+1, -1) of each block, all +1 in column 0 (D[r][0] = r). A block
        // enters the band once and is untouched before, so these initial values are also what
        // a block appended later starts from: rows counting up from the block above it, an
        // over-estimate that cannot lower any value inside the band.
        state.clear();
        state.resize(words, (!0u64, 0u64));
        // Value of the bottom row of block `last` in the current column.
        let mut last = 0usize;
        let mut score = rows(0);
        let mut extend = |score: &mut usize, to: usize| {
            while last < to {
                last += 1;
                *score += rows(last);
            }
        };

        // Two columns at a time: block `b` of column `j` and block `b - 1` of column `j + 1`
        // are independent, which halves the length of the chain of dependent operations.
        let mut pairs = text.chunks_exact(2);
        let mut j = 0;
        for pair in &mut pairs {
            let (one, two) = (span(j + 1), span(j + 2));
            let id = |c: char| self.id(c);
            source.load(0, id(pair[0]), one);
            source.load(1, id(pair[1]), two);
            let (out_one, out_two) =
                advance_pair(state, source.masks(0), source.masks(1), one, two, last_bit);
            source.unload(0);
            source.unload(1);
            extend(&mut score, one.1);
            score = score + out_one.0 as usize - out_one.1 as usize;
            extend(&mut score, two.1);
            score = score + out_two.0 as usize - out_two.1 as usize;
            j += 2;
        }
        if let [c] = pairs.remainder() {
            let one = span(j + 1);
            source.load(0, self.id(*c), one);
            let out = advance(state, source.masks(0), one, last_bit);
            source.unload(0);
            extend(&mut score, one.1);
            score = score + out.0 as usize - out.1 as usize;
        }
        score
    }
}

/// The match masks of one or two columns, by block.
trait MaskSource {
    /// Prepares slot `slot` (0 or 1) with the masks of character `id` for blocks `span`.
    fn load(&mut self, slot: usize, id: usize, span: (usize, usize));
    /// The masks of slot `slot`, indexed by block (valid inside the loaded span).
    fn masks(&self, slot: usize) -> &[u64];
    /// Done with slot `slot`.
    fn unload(&mut self, slot: usize);
}

/// Masks read straight from the dense table.
struct DenseSource<'a> {
    table: &'a [u64],
    words: usize,
    rows: [usize; 2],
}

impl MaskSource for DenseSource<'_> {
    fn load(&mut self, slot: usize, id: usize, _: (usize, usize)) {
        self.rows[slot] = id * self.words;
    }
    fn masks(&self, slot: usize) -> &[u64] {
        &self.table[self.rows[slot]..self.rows[slot] + self.words]
    }
    fn unload(&mut self, _: usize) {}
}

/// Masks scattered from the sparse lists into a zeroed buffer, and cleared after use.
struct SparseSource<'a> {
    starts: &'a [usize],
    entries: &'a [(usize, u64)],
    /// Each id's first entry not above the band (the band only moves down).
    cursors: Vec<usize>,
    scratch: [Vec<u64>; 2],
    /// The entries scattered into each slot.
    used: [(usize, usize); 2],
}

impl MaskSource for SparseSource<'_> {
    fn load(&mut self, slot: usize, id: usize, (first, last): (usize, usize)) {
        let end = self.starts[id + 1];
        let begin = &mut self.cursors[id];
        while *begin < end && self.entries[*begin].0 < first {
            *begin += 1;
        }
        let begin = *begin;
        let count = self.entries[begin..end].partition_point(|&(block, _)| block <= last);
        for &(block, mask) in &self.entries[begin..begin + count] {
            self.scratch[slot][block] = mask;
        }
        self.used[slot] = (begin, begin + count);
    }
    fn masks(&self, slot: usize) -> &[u64] {
        &self.scratch[slot]
    }
    fn unload(&mut self, slot: usize) {
        let (begin, end) = self.used[slot];
        for &(block, _) in &self.entries[begin..end] {
            self.scratch[slot][block] = 0;
        }
    }
}

/// Advances blocks `first..=last` by one column given each block's match mask `eqs[block]`;
/// returns the horizontal delta (+1, -1) at the bottom row of block `last` (bit `last_bit` of
/// the final block).
#[inline]
fn advance(
    state: &mut [(u64, u64)],
    eqs: &[u64],
    (first, last): (usize, usize),
    last_bit: u32,
) -> (u64, u64) {
    let fin = state.len() - 1;
    // The row above the first computed block grows by one per column: exact for row 0
    // (D[0][j] = j), an over-estimate for a row above the band.
    let mut carry = (1u64, 0u64);
    let end = (last + 1).min(fin);
    for (block, &eq) in state[first..end.max(first)]
        .iter_mut()
        .zip(&eqs[first..end.max(first)])
    {
        carry = step(block, eq, carry, 63);
    }
    if last == fin {
        carry = step(&mut state[fin], eqs[fin], carry, last_bit);
    }
    carry
}

/// [`advance`] for two consecutive columns at once, interleaved: block `b` of the first column,
/// then block `b - 1` of the second, which only needs blocks `b - 1` of the first and `b - 2`
/// of the second. The spans move down (`one.0 <= two.0`, `one.1 <= two.1`).
#[inline]
fn advance_pair(
    state: &mut [(u64, u64)],
    eqs_one: &[u64],
    eqs_two: &[u64],
    one: (usize, usize),
    two: (usize, usize),
    last_bit: u32,
) -> ((u64, u64), (u64, u64)) {
    let fin = state.len() - 1;
    let mut carry_one = (1u64, 0u64);
    let mut carry_two = (1u64, 0u64);
    // Blocks below the final one, where the carry leaves from bit 63.
    let end_one = (one.1 + 1).min(fin);
    // Lets the optimizer drop the bounds checks of the hot loop below.
    assert!(end_one <= state.len() && end_one <= eqs_one.len() && end_one <= eqs_two.len());
    for b in one.0..end_one {
        carry_one = step(&mut state[b], eqs_one[b], carry_one, 63);
        if b > two.0 {
            carry_two = step(&mut state[b - 1], eqs_two[b - 1], carry_two, 63);
        }
    }
    if one.1 == fin {
        carry_one = step(&mut state[fin], eqs_one[fin], carry_one, last_bit);
    }
    // The second column's blocks the interleaved loop did not reach.
    let end_two = (two.1 + 1).min(fin);
    for b in two.0.max(end_one.saturating_sub(1))..end_two {
        carry_two = step(&mut state[b], eqs_two[b], carry_two, 63);
    }
    if two.1 == fin {
        carry_two = step(&mut state[fin], eqs_two[fin], carry_two, last_bit);
    }
    (carry_one, carry_two)
}

/// One block of one column (Hyyrö 2003, block form): updates the vertical deltas `(vp, vn)`
/// from the match mask and the horizontal delta `(hp, hn)` carried in from the block above;
/// returns the horizontal delta of row `bottom`.
#[inline(always)]
fn step(block: &mut (u64, u64), eq: u64, carry: (u64, u64), bottom: u32) -> (u64, u64) {
    let (vp, vn) = *block;
    let x = eq | carry.1;
    let d0 = ((x & vp).wrapping_add(vp) ^ vp) | x | vn;
    let hp = vn | !(d0 | vp);
    let hn = d0 & vp;
    let out = ((hp >> bottom) & 1, (hn >> bottom) & 1);
    let hp = (hp << 1) | carry.0;
    let hn = (hn << 1) | carry.1;
    *block = (hn | !(d0 | hp), hp & d0);
    out
}

#[cfg(test)]
mod tests;
