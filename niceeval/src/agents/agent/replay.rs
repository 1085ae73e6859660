//! The replay agent: plays back a recorded JSONL transcript of [`Event`]s, one turn per send.
//!
//! A transcript is one JSON event per line (blank lines ignored). `message` events with
//! `role: "user"` separate turns: the first send replays everything before the second user
//! message, and so on. The recorded user messages themselves are not re-emitted (the eval's own
//! input is recorded instead). A transcript without user messages is a single turn.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::agents::agent::{Agent, AgentError, Request};
use crate::base::event::{Event, Role};

/// Why a transcript could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file could not be read.
    #[error("cannot read transcript {path}: {message}")]
    Read {
        /// The transcript path.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// A line is not a valid event.
    #[error(
        "{source_name}:{line}: not a niceeval event ({message}); each line must be one JSON object with a \"type\" such as \"message\" or \"action.called\""
    )]
    Line {
        /// The transcript path, or `<inline>`.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What serde said.
        message: String,
    },
}

/// Parses JSONL text into events, naming the line of the first bad one.
pub(crate) fn parse_jsonl(text: &str, source_name: &str) -> Result<Vec<Event>, ReplayError> {
    let mut events = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let event = serde_json::from_str(line).map_err(|e| ReplayError::Line {
            source_name: source_name.to_string(),
            line: index + 1,
            message: e.to_string(),
        })?;
        events.push(event);
    }
    Ok(events)
}

/// An agent that replays a recorded transcript.
///
/// ```
/// use niceeval::agent::replay::Replay;
///
/// let agent = Replay::from_jsonl(r#"
/// {"type":"message","role":"user","text":"hi"}
/// {"type":"message","role":"assistant","text":"hello"}
/// "#).unwrap();
/// assert_eq!(agent.turn_count(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Replay {
    source: Source,
    loaded: Arc<OnceLock<Result<Vec<Vec<Event>>, ReplayError>>>,
    next_turn: Arc<Mutex<usize>>,
}

#[derive(Debug, Clone)]
enum Source {
    File(PathBuf),
    Events,
}

/// A replay agent over the transcript at `path`, read on the first send (a missing or malformed
/// file fails that send with an error naming the file and line).
///
/// Relative paths resolve against the current directory, which `cargo test` sets to the
/// package's root.
pub fn replay(path: impl AsRef<Path>) -> Replay {
    Replay {
        source: Source::File(path.as_ref().to_path_buf()),
        loaded: Arc::new(OnceLock::new()),
        next_turn: Arc::new(Mutex::new(0)),
    }
}

impl Replay {
    /// Replays these events.
    pub fn new(events: Vec<Event>) -> Self {
        let loaded = OnceLock::new();
        let _ = loaded.set(Ok(split_turns(events)));
        Replay {
            source: Source::Events,
            loaded: Arc::new(loaded),
            next_turn: Arc::new(Mutex::new(0)),
        }
    }

    /// Replays the events of a JSONL text.
    pub fn from_jsonl(text: &str) -> Result<Self, ReplayError> {
        Ok(Replay::new(parse_jsonl(text, "<inline>")?))
    }

    /// Reads and replays a JSONL file now, reporting a bad file immediately.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ReplayError> {
        let agent = replay(path);
        agent.turns()?;
        Ok(agent)
    }

    /// How many turns the transcript holds (0 when it cannot be loaded).
    pub fn turn_count(&self) -> usize {
        self.turns().map(|t| t.len()).unwrap_or(0)
    }

    fn turns(&self) -> Result<&Vec<Vec<Event>>, ReplayError> {
        self.loaded
            .get_or_init(|| match &self.source {
                Source::File(path) => {
                    let name = path.display().to_string();
                    let text = std::fs::read_to_string(path).map_err(|e| ReplayError::Read {
                        path: name.clone(),
                        message: e.to_string(),
                    })?;
                    Ok(split_turns(parse_jsonl(&text, &name)?))
                }
                Source::Events => Ok(Vec::new()),
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

fn split_turns(events: Vec<Event>) -> Vec<Vec<Event>> {
    let mut turns: Vec<Vec<Event>> = Vec::new();
    let mut current: Option<Vec<Event>> = None;
    for event in events {
        if matches!(
            event,
            Event::Message {
                role: Role::User,
                ..
            }
        ) {
            if let Some(done) = current.take() {
                turns.push(done);
            }
            current = Some(Vec::new());
        } else {
            current.get_or_insert_with(Vec::new).push(event);
        }
    }
    if let Some(done) = current {
        turns.push(done);
    }
    turns
}

#[async_trait::async_trait]
impl Agent for Replay {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let turns = self
            .turns()
            .map_err(|e| AgentError::new(e.to_string()).caused_by(e))?;
        let index = {
            let mut next = self.next_turn.lock().unwrap_or_else(|p| p.into_inner());
            let index = *next;
            *next += 1;
            index
        };
        let turn = turns.get(index).ok_or_else(|| {
            AgentError::new(format!(
                "the replayed transcript has {} turn(s) but the eval sent input #{}; record a longer transcript or send fewer messages",
                turns.len(),
                index + 1
            ))
        })?;
        for event in turn {
            request.events.emit(event.clone());
        }
        Ok(())
    }

    fn name(&self) -> String {
        match &self.source {
            Source::File(path) => format!("replay({})", path.display()),
            Source::Events => "replay".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_messages_split_turns() {
        let turns = split_turns(vec![
            Event::user("a"),
            Event::assistant("1"),
            Event::user("b"),
            Event::assistant("2"),
            Event::Thinking { text: "t".into() },
        ]);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[1].len(), 2);
    }

    #[test]
    fn transcript_without_user_messages_is_one_turn() {
        assert_eq!(
            split_turns(vec![Event::assistant("1"), Event::assistant("2")]).len(),
            1
        );
    }

    #[test]
    fn malformed_line_is_named() {
        let err = parse_jsonl(
            "{\"type\":\"message\",\"role\":\"user\",\"text\":\"a\"}\n\nnot json\n",
            "t.jsonl",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("t.jsonl:3:"), "{text}");
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let err = Replay::from_file("/definitely/not/here.jsonl").unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot read transcript /definitely/not/here.jsonl"),
            "{err}"
        );
    }
}
