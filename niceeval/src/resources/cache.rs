//! The on-disk response cache for model calls: where it lives, how entries are keyed, and how
//! concurrent identical calls share one request.
//!
//! Entries live under `target/niceeval/cache` (the Cargo target directory: `CARGO_TARGET_DIR`
//! when set, else `target/` at the workspace root found by walking up from the crate's manifest
//! directory). An entry is the provider's raw response body, stored under the SHA-256 of the
//! provider, the model, the base URL and the exact request body — never a credential, which only
//! ever travels in request headers. Writes go to a temporary file renamed into place, so a reader
//! never sees half an entry; an entry that cannot be read or decoded is ignored (and rewritten by
//! the next successful call), never fatal.
//!
//! Judge calls use the cache in `read-write` mode by default, so re-running an unchanged suite
//! costs nothing; agents leave it `off` unless asked, so `runs = N` samples the model N times.
//!
//! The cache itself ([`CacheKey`], [`ResponseCache`]) needs the `providers` feature; the
//! mode it runs in is a setting, [`CacheMode`](crate::config::CacheMode).

#[cfg(feature = "providers")]
use std::collections::HashMap;
#[cfg(feature = "providers")]
use std::future::Future;
#[cfg(feature = "providers")]
use std::path::{Path, PathBuf};
#[cfg(feature = "providers")]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "providers")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "providers")]
use sha2::{Digest, Sha256};

#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
/// The key of one cache entry: a SHA-256 in hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey(String);

#[cfg(feature = "providers")]
impl CacheKey {
    /// The key of a request: provider, model, base URL (trailing `/` ignored) and the exact
    /// request body. Credentials are not an input, so they cannot end up in a key.
    pub fn new(provider: &str, model: &str, base_url: &str, body: &[u8]) -> CacheKey {
        let mut hasher = Sha256::new();
        for part in [
            "niceeval-cache-v1",
            provider,
            model,
            base_url.trim_end_matches('/'),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0u8]);
        }
        hasher.update(body);
        CacheKey(format!("{:x}", hasher.finalize()))
    }

    /// The hex digest.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
/// A directory of cached responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseCache {
    dir: PathBuf,
}

#[cfg(feature = "providers")]
impl ResponseCache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> ResponseCache {
        ResponseCache { dir: dir.into() }
    }

    /// Where the judge cache of the crate at `manifest_dir` lives: `[judge] cache_dir` of
    /// `config`, relative to the directory of the `niceeval.toml` that sets it, else
    /// `niceeval/cache` in the Cargo target directory ([`ResponseCache::for_manifest_dir`]).
    ///
    /// ```
    /// use std::path::Path;
    /// use niceeval::__workspace::{cache::ResponseCache, config::Config};
    ///
    /// let mut config = Config::parse("[judge]\ncache_dir = \"judge-cache\"\n", "niceeval.toml")?;
    /// config.source = Some("/work/evals/niceeval.toml".into());
    /// assert_eq!(ResponseCache::judge_dir(&config, Path::new("/work/evals/sub")), Path::new("/work/evals/judge-cache"));
    /// # Ok::<(), niceeval::__workspace::config::ConfigError>(())
    /// ```
    pub fn judge_dir(config: &crate::config::Config, manifest_dir: &Path) -> PathBuf {
        match &config.judge.cache_dir {
            Some(dir) => {
                let base = config
                    .source
                    .as_deref()
                    .and_then(Path::parent)
                    .unwrap_or(manifest_dir);
                base.join(dir)
            }
            None => ResponseCache::for_manifest_dir(manifest_dir)
                .dir()
                .to_path_buf(),
        }
    }

    /// The cache of the crate at `manifest_dir`: `<target dir>/niceeval/cache`.
    pub fn for_manifest_dir(manifest_dir: &Path) -> ResponseCache {
        ResponseCache::new(target_dir(manifest_dir).join("niceeval").join("cache"))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        let hex = key.as_str();
        self.dir.join(&hex[..2]).join(format!("{hex}.json"))
    }

    /// The stored body, when there is a readable one. Whether it decodes is the caller's test:
    /// an entry that does not is to be treated as absent.
    pub fn get(&self, key: &CacheKey) -> Option<Vec<u8>> {
        std::fs::read(self.path(key)).ok().filter(|b| !b.is_empty())
    }

    /// Stores a body atomically (a temporary file in the same directory, renamed into place), so
    /// concurrent readers and writers never see a partial entry.
    pub fn put(&self, key: &CacheKey, body: &[u8]) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            key.as_str(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = std::fs::write(&tmp, body).and_then(|()| std::fs::rename(&tmp, &path));
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// The Cargo target directory for the crate at `manifest_dir`: `CARGO_TARGET_DIR` when set
/// (relative to the current directory, as Cargo reads it), else `target/` in the nearest ancestor
/// whose `Cargo.toml` declares `[workspace]`, else `target/` beside the manifest.
#[cfg(feature = "providers")]
pub fn target_dir(manifest_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let root = manifest_dir
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|text| text.lines().any(|l| l.trim() == "[workspace]"))
        })
        .unwrap_or(manifest_dir);
    root.join("target")
}

#[cfg(feature = "providers")]
/// Runs identical concurrent calls once: callers with the same key while one call is in flight
/// wait for it and get a clone of its result. If the running caller is cancelled, a waiting one
/// takes over.
pub(crate) struct SingleFlight<T> {
    calls: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<T>>>>,
}

#[cfg(feature = "providers")]
impl<T> Default for SingleFlight<T> {
    fn default() -> Self {
        SingleFlight {
            calls: Mutex::new(HashMap::new()),
        }
    }
}

#[cfg(feature = "providers")]
impl<T: Clone> SingleFlight<T> {
    pub(crate) async fn run<F: Future<Output = T>>(&self, key: &str, call: F) -> T {
        let cell = {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            calls.entry(key.to_string()).or_default().clone()
        };
        let value = cell.get_or_init(|| call).await.clone();
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if calls.get(key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            calls.remove(key);
        }
        value
    }
}

#[cfg(all(test, feature = "providers"))]
mod tests {
    use super::*;
    #[cfg(feature = "providers")]
    use std::sync::atomic::AtomicUsize;
    #[cfg(feature = "providers")]
    use std::time::{Duration, Instant};

    #[cfg(feature = "providers")]
    #[test]
    fn keys_depend_on_every_part() {
        let base = CacheKey::new("openai", "m", "http://a/v1", b"{}");
        assert_eq!(base, CacheKey::new("openai", "m", "http://a/v1/", b"{}"));
        assert_ne!(base, CacheKey::new("anthropic", "m", "http://a/v1", b"{}"));
        assert_ne!(base, CacheKey::new("openai", "n", "http://a/v1", b"{}"));
        assert_ne!(base, CacheKey::new("openai", "m", "http://b/v1", b"{}"));
        assert_ne!(base, CacheKey::new("openai", "m", "http://a/v1", b"{ }"));
        assert_eq!(base.as_str().len(), 64);
    }

    #[cfg(feature = "providers")]
    #[test]
    fn put_replaces_atomically_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ResponseCache::new(dir.path().join("c"));
        let key = CacheKey::new("p", "m", "u", b"x");
        cache.put(&key, b"one").unwrap();
        cache.put(&key, b"two").unwrap();
        assert_eq!(cache.get(&key).unwrap(), b"two");
        let sub = cache.path(&key).parent().unwrap().to_path_buf();
        let names: Vec<_> = std::fs::read_dir(sub)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(feature = "providers")]
    #[test]
    fn target_dir_walks_up_to_the_workspace_root() {
        if std::env::var_os("CARGO_TARGET_DIR").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace]\nmembers = [\"a\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
        assert_eq!(target_dir(&dir.path().join("a")), dir.path().join("target"));
    }

    #[cfg(feature = "providers")]
    #[test]
    fn concurrent_identical_calls_share_one() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let flights: Arc<SingleFlight<u32>> = Arc::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let results = rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..5 {
                let flights = flights.clone();
                let calls = calls.clone();
                let probe = flights.clone();
                set.spawn(async move {
                    flights
                        .run("k", async move {
                            calls.fetch_add(1, Ordering::SeqCst);
                            // The call ends once all five callers hold the flight (the map's
                            // reference and theirs), however late a loaded machine starts
                            // them; a fixed sleep let a late caller miss it. Bounded, so a
                            // flight that is not shared fails the count below, not hangs.
                            let holders = || {
                                let calls = probe.calls.lock().unwrap();
                                calls.get("k").map_or(0, Arc::strong_count)
                            };
                            let deadline = Instant::now() + Duration::from_secs(10);
                            while holders() < 6 && Instant::now() < deadline {
                                tokio::time::sleep(Duration::from_millis(1)).await;
                            }
                            7
                        })
                        .await
                });
            }
            set.join_all().await
        });
        assert_eq!(results, vec![7; 5]);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(flights.calls.lock().unwrap().is_empty());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        #[cfg(feature = "providers")]
        {
            use crate::config::CacheMode;
            use crate::resources::cache::{CacheKey, ResponseCache};

            let dir = tempfile::tempdir().unwrap();
            let cache = ResponseCache::new(dir.path());
            let key = CacheKey::new(
                "openai",
                "gpt-4o-mini",
                "https://api.openai.com/v1",
                b"{\"model\":\"gpt-4o-mini\"}",
            );
            assert!(cache.get(&key).is_none());
            cache.put(&key, b"{\"choices\":[]}").unwrap();
            assert_eq!(cache.get(&key).unwrap(), b"{\"choices\":[]}");
            assert!("read-write".parse::<CacheMode>().unwrap().reads());
        }
    }
}
