//! What a run's provider returned besides its text, and how it was configured
//! ([`ProviderResponse`], promptfoo's `providerResponse` and `provider.config`), and the spans
//! of its trace ([`TraceSpan`]): what the response, trace and service assertion types read
//! beyond the output.

use serde_json::Value;

pub use crate::checks::expect::trace_spans::TraceSpan;

/// What the provider returned besides its text, and how it was configured: the facts
/// `finish-reason`, `perplexity`, `perplexity-score`, `guardrails`, `is-valid-function-call`,
/// `is-valid-openai-function-call`, `is-valid-openai-tools-call`, `tool-call-f1` and `webhook`
/// read. Each field is optional; a type whose fact is missing fails or errors as promptfoo's
/// does without it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProviderResponse {
    /// Why the model stopped, as the provider spelled it (`stop`, `end_turn`, `max_tokens`,
    /// `tool_use`, ...); `finish-reason` puts it in promptfoo's common form (`stop`, `length`,
    /// `tool_calls`, `content_filter`). promptfoo's `finishReason`.
    pub finish_reason: Option<String>,
    /// The log-probability of each output token (`perplexity`, `perplexity-score`). promptfoo's
    /// `logProbs`.
    pub logprobs: Option<Vec<f64>>,
    /// The provider's own guardrail verdict, `{flagged, flaggedInput, flaggedOutput, reason}`
    /// (`guardrails`). promptfoo's `guardrails`.
    pub guardrails: Option<Value>,
    /// The provider's output when it is not plain text: function or tool calls as the provider
    /// returned them (an OpenAI message `{content, tool_calls}`, a `tool_calls` list or a
    /// `{name, arguments}` function call; Anthropic `tool_use` blocks; Google `functionCall`s).
    /// The function-call validators, `tool-call-f1` and `webhook` read it in place of a text
    /// output; an output that is data, and an item with a `transform`, are graded on what they
    /// hold instead. promptfoo's `output` when it is not a string.
    pub output: Option<Value>,
    /// The response's metadata (`guardrails` reads the last `redteamHistory` entry's
    /// `guardrails`). promptfoo's `metadata`.
    pub metadata: Option<Value>,
    /// The provider's id (`openai:gpt-4o-mini`, `google:gemini-2.0-flash`, ...): a function
    /// call is checked by Google's rules for `google:` and `vertex:` providers, by OpenAI's
    /// otherwise.
    pub provider_id: Option<String>,
    /// The provider's `config`, with `file://` references already read and `{{var}}`
    /// templates already rendered: the function-call validators read its `functions` (OpenAI
    /// function calls) and `tools` (OpenAI tool calls; Google `functionDeclarations`). `None`
    /// when the run does not say, which fails `is-valid-function-call` as promptfoo fails it
    /// for a provider without a validator.
    pub provider_config: Option<Value>,
}
