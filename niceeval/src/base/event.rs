//! The event stream: what an agent did during a run, as serde values.
//!
//! Every agent adapter reports its work as [`Event`]s. Scoped assertions, usage totals, reports
//! and transcripts are all computed from this one stream, so an event is the unit of truth about
//! a run. The JSON shape (a `type` tag plus snake_case fields) is the wire format of recorded
//! transcripts and of the command agent's stdout.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Shared, immutable text: the text of messages and thinking in [`Event`]s, of
/// [`crate::Turn::message`] and of the conversation history an agent receives.
///
/// One reply is stored once however many places hold it (the run's event log, the handle's
/// events, each [`crate::Turn`], the history): cloning a `Text` copies a pointer, not the
/// text. It reads like a `&str` (it derefs to one), compares with strings, and serializes as a
/// plain JSON string.
///
/// ```
/// use niceeval::Text;
///
/// let text = Text::from("Your refund is on its way.");
/// let copy = text.clone(); // shares the same bytes
/// assert_eq!(copy, "Your refund is on its way.");
/// assert!(text.contains("refund"));
/// assert_eq!(serde_json::to_string(&text).unwrap(), r#""Your refund is on its way.""#);
/// let owned: String = text.into();
/// assert_eq!(owned.len(), 26);
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Text {
    fn default() -> Self {
        Text(Arc::from(""))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(Arc::from(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(Arc::from(text))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text(Arc::from(text.as_str()))
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        Text(Arc::from(text))
    }
}

impl From<Arc<str>> for Text {
    fn from(text: Arc<str>) -> Self {
        Text(text)
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.0.to_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == &*other.0
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Text::from)
    }
}

/// One thing that happened during a run.
///
/// Serialized as an object tagged by `type`:
///
/// ```
/// use niceeval::Event;
///
/// let event = Event::ActionCalled {
///     call_id: "c1".into(),
///     name: "lookup_order".into(),
///     input: serde_json::json!({ "id": "123" }),
/// };
/// let line = serde_json::to_string(&event).unwrap();
/// assert_eq!(
///     line,
///     r#"{"type":"action.called","call_id":"c1","name":"lookup_order","input":{"id":"123"}}"#
/// );
/// let back: Event = serde_json::from_str(&line).unwrap();
/// assert_eq!(back, event);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Event {
    /// A message in the conversation (`role` is `user`, `assistant` or `system`).
    #[serde(rename = "message")]
    Message {
        /// Who spoke.
        role: Role,
        /// What was said.
        text: Text,
    },
    /// The agent called a tool (an action).
    #[serde(rename = "action.called")]
    ActionCalled {
        /// Identifier pairing this call with its [`Event::ActionResult`].
        call_id: String,
        /// Tool name.
        name: String,
        /// Tool input (arguments) as JSON.
        #[serde(default)]
        input: Value,
    },
    /// A tool call finished.
    #[serde(rename = "action.result")]
    ActionResult {
        /// The call this result belongs to.
        call_id: String,
        /// Tool output as JSON.
        #[serde(default)]
        output: Value,
        /// How the call ended.
        status: ActionStatus,
    },
    /// The agent delegated to a subagent.
    #[serde(rename = "subagent.called")]
    SubagentCalled {
        /// Identifier pairing this call with its [`Event::SubagentCompleted`].
        call_id: String,
        /// Subagent name.
        name: String,
        /// Where the subagent runs, for remote agents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remote_url: Option<String>,
    },
    /// A subagent call finished.
    #[serde(rename = "subagent.completed")]
    SubagentCompleted {
        /// The call this completion belongs to.
        call_id: String,
        /// How the subagent call ended.
        status: ActionStatus,
    },
    /// The agent loaded a skill.
    #[serde(rename = "skill.loaded")]
    SkillLoaded {
        /// Skill name.
        name: String,
    },
    /// The agent asked a human for input; the run parks until [`crate::Eval::respond`].
    #[serde(rename = "input.requested")]
    InputRequested {
        /// What the agent asked for (free-form JSON: a question, a form, ...).
        request: Value,
    },
    /// Reasoning text the agent exposed.
    #[serde(rename = "thinking")]
    Thinking {
        /// The reasoning text.
        text: Text,
    },
    /// The agent failed; the turn ends as [`crate::TurnStatus::Failed`].
    #[serde(rename = "error")]
    Error {
        /// What went wrong.
        message: String,
    },
    /// Tokens (and optionally money) spent by a model call.
    #[serde(rename = "usage")]
    Usage {
        /// Prompt tokens.
        #[serde(default)]
        input_tokens: u64,
        /// Completion tokens.
        #[serde(default)]
        output_tokens: u64,
        /// Prompt tokens served from the provider's cache.
        #[serde(default)]
        cache_read_tokens: u64,
        /// Cost reported by the agent, in USD; wins over the price-table estimate.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The model that spent the tokens, used to estimate cost from the price table.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Files of the working copy changed during a turn (evals with `#[eval(workspace = ..)]`):
    /// recorded by the eval handle after each `send`, from a snapshot before and after it.
    #[serde(rename = "workspace.changed")]
    WorkspaceChanged {
        /// Every path that changed, in path order.
        files: Vec<FileChange>,
        /// The unified diff of the change (binary files as "Binary files … differ").
        #[serde(default)]
        diff: Text,
        /// The change was over `[workspace] max_files` / `max_bytes`: `files` and `diff` hold
        /// only the first part of it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        partial: bool,
    },
    /// Something an adapter saw that has no event kind of its own (an unknown frame of a coding
    /// agent's stream, say), kept so nothing the agent reported is lost.
    #[serde(rename = "custom")]
    Custom {
        /// What it is, as the source names it (`"codex:web_search"`).
        name: String,
        /// Everything the source said, as JSON.
        #[serde(default)]
        data: Value,
    },
}

impl Event {
    /// The wire name of this event's kind, e.g. `"action.called"`.
    ///
    /// ```
    /// assert_eq!(niceeval::Event::SkillLoaded { name: "x".into() }.kind(), "skill.loaded");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Message { .. } => "message",
            Event::ActionCalled { .. } => "action.called",
            Event::ActionResult { .. } => "action.result",
            Event::SubagentCalled { .. } => "subagent.called",
            Event::SubagentCompleted { .. } => "subagent.completed",
            Event::SkillLoaded { .. } => "skill.loaded",
            Event::InputRequested { .. } => "input.requested",
            Event::Thinking { .. } => "thinking",
            Event::Error { .. } => "error",
            Event::Usage { .. } => "usage",
            Event::WorkspaceChanged { .. } => "workspace.changed",
            Event::Custom { .. } => "custom",
        }
    }

    /// Every kind name [`Event::kind`] can return, in declaration order.
    pub const KINDS: &'static [&'static str] = &[
        "message",
        "action.called",
        "action.result",
        "subagent.called",
        "subagent.completed",
        "skill.loaded",
        "input.requested",
        "thinking",
        "error",
        "usage",
        "workspace.changed",
        "custom",
    ];

    /// The text of the last assistant message among `events` (a turn's or a run's reply).
    pub fn last_reply(events: &[Event]) -> Option<&Text> {
        events.iter().rev().find_map(|e| match e {
            Event::Message {
                role: Role::Assistant,
                text,
            } => Some(text),
            _ => None,
        })
    }

    /// An assistant message event.
    pub fn assistant(text: impl Into<Text>) -> Self {
        Event::Message {
            role: Role::Assistant,
            text: text.into(),
        }
    }

    /// A user message event.
    pub fn user(text: impl Into<Text>) -> Self {
        Event::Message {
            role: Role::User,
            text: text.into(),
        }
    }

    /// Masks the secrets `redactor` knows in this event's texts and JSON values (see
    /// [`crate::base::redact`]); text without a secret is not copied.
    pub(crate) fn redact_texts(&mut self, redactor: &crate::base::redact::Redactor) {
        use std::borrow::Cow;
        let text = |t: &mut Text| {
            if let Cow::Owned(masked) = redactor.text(t) {
                *t = Text::from(masked);
            }
        };
        match self {
            Event::Message { text: t, .. } | Event::Thinking { text: t } => text(t),
            Event::WorkspaceChanged { diff, .. } => text(diff),
            Event::Error { message } => redactor.in_place(message),
            Event::ActionCalled { input, .. } => redactor.json(input),
            Event::ActionResult { output, .. } => redactor.json(output),
            Event::InputRequested { request } => redactor.json(request),
            Event::Custom { data, .. } => redactor.json(data),
            Event::SubagentCalled { .. }
            | Event::SubagentCompleted { .. }
            | Event::SkillLoaded { .. }
            | Event::Usage { .. } => {}
        }
    }

    /// Caps this event's texts and JSON values (message and thinking text, tool input and
    /// output, input request, error message) to about `max` bytes each, as reports store them
    /// (see [`crate::base::excerpt::cap`] and [`crate::base::excerpt::cap_json`]). Text that fits is not
    /// copied.
    pub(crate) fn cap_texts(&mut self, max: usize) {
        use crate::base::excerpt::{cap, cap_json};
        use std::borrow::Cow;
        match self {
            Event::Message { text, .. } | Event::Thinking { text } => {
                if let Cow::Owned(kept) = cap(text, max) {
                    *text = Text::from(kept);
                }
            }
            Event::Error { message } => {
                if let Cow::Owned(kept) = cap(message, max) {
                    *message = kept;
                }
            }
            Event::ActionCalled { input, .. } => {
                cap_json(input, max);
            }
            Event::ActionResult { output, .. } => {
                cap_json(output, max);
            }
            Event::InputRequested { request } => {
                cap_json(request, max);
            }
            Event::Custom { data, .. } => {
                cap_json(data, max);
            }
            Event::WorkspaceChanged { diff, .. } => {
                if let Cow::Owned(kept) = cap(diff, max) {
                    *diff = Text::from(kept);
                }
            }
            Event::SubagentCalled { .. }
            | Event::SubagentCompleted { .. }
            | Event::SkillLoaded { .. }
            | Event::Usage { .. } => {}
        }
    }
}

/// One path of a working copy that changed (see [`Event::WorkspaceChanged`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileChange {
    /// The path relative to the working copy, with `/` separators.
    pub path: String,
    /// How it changed.
    pub change: Change,
    /// The old or new contents are binary (the diff says only that they differ).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// How a path of the working copy changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// It did not exist before.
    Created,
    /// Its contents (or mode) changed.
    Modified,
    /// It no longer exists.
    Deleted,
}

impl Change {
    /// The wire name: `created`, `modified` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Modified => "modified",
            Change::Deleted => "deleted",
        }
    }
}

/// What an action does, whatever its tool is called: agents name the same tools differently
/// (Claude Code's `Bash`, Codex's `command_execution`, a chat agent's `shell`), and checks such as
/// `no_failed_shell_commands()` read this normalized kind instead of one agent's names.
///
/// ```
/// use niceeval::ActionKind;
/// use serde_json::json;
///
/// assert_eq!(ActionKind::of("Bash", &json!({"command": "ls"})), ActionKind::Shell);
/// assert_eq!(ActionKind::of("command_execution", &json!({})), ActionKind::Shell);
/// assert_eq!(ActionKind::of("Edit", &json!({})), ActionKind::FileEdit);
/// assert_eq!(ActionKind::of("file_change", &json!({"kind": "add"})), ActionKind::FileWrite);
/// assert_eq!(ActionKind::of("lookup_order", &json!({})), ActionKind::Other);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ActionKind {
    /// Runs a shell command.
    Shell,
    /// Reads a file.
    FileRead,
    /// Changes part of an existing file.
    FileEdit,
    /// Writes a whole file (creating it when missing).
    FileWrite,
    /// Deletes a file.
    FileDelete,
    /// Anything else.
    Other,
}

impl ActionKind {
    /// The kind of a call of tool `name` with `input`. Names are matched exactly, as the agents
    /// spell them: `Bash`, `bash`, `shell`, `local_shell`, `exec_command`, `command_execution`,
    /// `run_shell_command` are shell commands; `Read`, `read_file`, `view` read; `Edit`,
    /// `MultiEdit`, `NotebookEdit`, `edit_file`, `apply_patch`, `str_replace_based_edit_tool`
    /// edit; `Write`, `write_file`, `create_file` write; `delete_file` deletes. A `file_change`
    /// (Codex) is a write, an edit or a deletion after its input's `kind` (`add`, `update`,
    /// `delete`).
    pub fn of(name: &str, input: &Value) -> ActionKind {
        match name {
            "Bash" | "bash" | "shell" | "local_shell" | "exec_command" | "command_execution"
            | "run_shell_command" => ActionKind::Shell,
            "Read" | "read_file" | "view" => ActionKind::FileRead,
            "Edit"
            | "MultiEdit"
            | "NotebookEdit"
            | "edit_file"
            | "apply_patch"
            | "str_replace_based_edit_tool" => ActionKind::FileEdit,
            "Write" | "write_file" | "create_file" => ActionKind::FileWrite,
            "delete_file" => ActionKind::FileDelete,
            "file_change" => match input.get("kind").and_then(Value::as_str) {
                Some("add") => ActionKind::FileWrite,
                Some("delete") => ActionKind::FileDelete,
                _ => ActionKind::FileEdit,
            },
            _ => ActionKind::Other,
        }
    }

    /// The wire name: `shell`, `file_read`, `file_edit`, `file_write`, `file_delete`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Shell => "shell",
            ActionKind::FileRead => "file_read",
            ActionKind::FileEdit => "file_edit",
            ActionKind::FileWrite => "file_write",
            ActionKind::FileDelete => "file_delete",
            ActionKind::Other => "other",
        }
    }
}

/// Who authored a [`Event::Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person (or eval) talking to the agent.
    User,
    /// The agent under test.
    Assistant,
    /// A system prompt.
    System,
}

/// How a tool, subagent or skill call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionStatus {
    /// The call succeeded.
    Completed,
    /// The call failed.
    Failed,
    /// The call was refused (by a permission check or a human).
    Rejected,
}

impl ActionStatus {
    /// The wire name: `completed`, `failed` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Completed => "completed",
            ActionStatus::Failed => "failed",
            ActionStatus::Rejected => "rejected",
        }
    }
}

/// Token usage, summed over `usage` events.
///
/// ```
/// use niceeval::{Event, Usage};
///
/// let events = [
///     Event::Usage { input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cost_usd: None, model: None },
///     Event::Usage { input_tokens: 7, output_tokens: 1, cache_read_tokens: 3, cost_usd: Some(0.01), model: None },
/// ];
/// let total = Usage::from_events(&events);
/// assert_eq!(total.input_tokens, 17);
/// assert_eq!(total.total_tokens(), 23);
/// assert_eq!(total.cost_usd, Some(0.01));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from a cache.
    pub cache_read_tokens: u64,
    /// Cost reported by the agent, when it reported one (USD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// No tokens and no cost: nothing was spent (or nothing reported).
    ///
    /// ```
    /// assert!(niceeval::Usage::default().is_zero());
    /// ```
    pub fn is_zero(&self) -> bool {
        self.total_tokens() == 0 && self.cache_read_tokens == 0 && self.cost_usd.is_none()
    }

    /// Input plus output tokens (cache reads are part of the input count and not added again).
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds another usage to this one; reported costs add up, an unreported cost stays unknown
    /// only while no event reported one (an agent may report its tokens as it goes and its
    /// cost once, at the end).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Adds the usage of one whole call priced on its own (a judge's): tokens and known costs
    /// add up, but a call that spent tokens at a cost nobody knows makes the sum's cost unknown
    /// — a cached judge answer's $0 plus an unpriced call is not $0. A usage that spent
    /// nothing leaves the sum's cost as it is.
    ///
    /// ```
    /// use niceeval::Usage;
    /// let priced = |tokens, cost| Usage { input_tokens: tokens, cost_usd: cost, ..Usage::default() };
    /// let mut sum = priced(10, Some(0.0));
    /// sum.add_call(&priced(10, None));
    /// assert_eq!(sum.cost_usd, None);
    /// let mut sum = priced(10, Some(0.5));
    /// sum.add_call(&Usage::default());
    /// assert_eq!(sum.cost_usd, Some(0.5));
    /// ```
    pub fn add_call(&mut self, other: &Usage) {
        let spent =
            |u: &Usage| u.input_tokens > 0 || u.output_tokens > 0 || u.cache_read_tokens > 0;
        let (mine_spent, theirs_spent) = (spent(self), spent(other));
        let cost = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (Some(a), None) if !theirs_spent => Some(a),
            (None, Some(b)) if !mine_spent => Some(b),
            _ => None,
        };
        self.add(other);
        self.cost_usd = cost;
    }

    /// Sums every `usage` event in `events`.
    pub fn from_events(events: &[Event]) -> Usage {
        let mut total = Usage::default();
        for event in events {
            if let Event::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cost_usd,
                ..
            } = event
            {
                total.add(&Usage {
                    input_tokens: *input_tokens,
                    output_tokens: *output_tokens,
                    cache_read_tokens: *cache_read_tokens,
                    cost_usd: *cost_usd,
                });
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_round_trips_with_its_wire_name() {
        let events = vec![
            Event::user("hi"),
            Event::ActionCalled {
                call_id: "1".into(),
                name: "t".into(),
                input: json!({"a": 1}),
            },
            Event::ActionResult {
                call_id: "1".into(),
                output: json!("ok"),
                status: ActionStatus::Rejected,
            },
            Event::SubagentCalled {
                call_id: "2".into(),
                name: "r".into(),
                remote_url: Some("https://a.example".into()),
            },
            Event::SubagentCompleted {
                call_id: "2".into(),
                status: ActionStatus::Failed,
            },
            Event::SkillLoaded { name: "s".into() },
            Event::InputRequested {
                request: json!({"question": "ok?"}),
            },
            Event::Thinking { text: "hm".into() },
            Event::Error {
                message: "boom".into(),
            },
            Event::Usage {
                input_tokens: 1,
                output_tokens: 2,
                cache_read_tokens: 3,
                cost_usd: Some(0.5),
                model: None,
            },
            Event::WorkspaceChanged {
                files: vec![FileChange {
                    path: "src/lib.rs".into(),
                    change: Change::Modified,
                    binary: false,
                }],
                diff: "--- a/src/lib.rs".into(),
                partial: false,
            },
            Event::Custom {
                name: "codex:web_search".into(),
                data: json!({"query": "rust"}),
            },
        ];
        for (event, kind) in events.iter().zip(Event::KINDS) {
            let value = serde_json::to_value(event).unwrap();
            assert_eq!(value["type"], json!(kind));
            assert_eq!(event.kind(), *kind);
            let back: Event = serde_json::from_value(value).unwrap();
            assert_eq!(&back, event);
        }
        assert_eq!(
            serde_json::to_value(&events[2]).unwrap(),
            json!({"type": "action.result", "call_id": "1", "output": "ok", "status": "rejected"})
        );
        assert_eq!(
            serde_json::to_value(&events[9]).unwrap(),
            json!({"type": "usage", "input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3, "cost_usd": 0.5})
        );
    }

    #[test]
    fn unknown_type_is_an_error_naming_it() {
        let err = serde_json::from_str::<Event>(r#"{"type":"tool.called"}"#).unwrap_err();
        assert!(err.to_string().contains("tool.called"), "{err}");
    }

    #[test]
    fn usage_defaults_missing_counts_to_zero() {
        let e: Event = serde_json::from_str(r#"{"type":"usage","output_tokens":4}"#).unwrap();
        assert_eq!(Usage::from_events(&[e]).total_tokens(), 4);
    }
}
