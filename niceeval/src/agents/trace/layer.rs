//! The `tracing` layer for in-process Rust agents: spans (and events) with GenAI field names
//! created while an eval's agent handles a turn become spans of that run. The turn is known
//! from a task-local the handle sets around `Agent::send`, and from a span's parent for spans
//! entered in other tasks (`.instrument(..)`), so concurrent evals stay apart.

use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::registry::RunTrace;
use super::span::{Kind, Span, Status, now_nanos, random_id};

/// The turn an agent's work belongs to.
#[derive(Clone)]
struct Turn {
    run: Arc<RunTrace>,
    span_id: [u8; 8],
}

tokio::task_local! {
    static TURN: Turn;
}

/// Runs `future` (an agent's send) as the turn whose `traceparent` is given, so spans the
/// layer sees inside it reach `run`.
pub(crate) async fn in_turn<F: std::future::Future>(
    run: Arc<RunTrace>,
    traceparent: &str,
    future: F,
) -> F::Output {
    let span_id = super::span::span_of(traceparent).unwrap_or_else(random_id);
    TURN.scope(Turn { run, span_id }, future).await
}

/// A `tracing-subscriber` layer that makes the spans an in-process agent emits with GenAI
/// field names inside an eval that eval's events (see [the module](crate::agents::trace)).
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let subscriber = tracing_subscriber::registry().with(niceeval::trace::layer());
/// tracing::subscriber::set_global_default(subscriber).ok();
///
/// // Inside the agent, during an eval:
/// let span = tracing::info_span!(
///     "execute_tool",
///     gen_ai.operation.name = "execute_tool",
///     gen_ai.tool.name = "lookup_order",
///     gen_ai.tool.call.id = "call_1",
/// );
/// let _entered = span.enter();
/// ```
///
/// Fields recorded later (`span.record("gen_ai.usage.input_tokens", 120)`) count; `otel.name`
/// names the span, `otel.kind` gives its kind and `otel.status_code = "ERROR"` (or an `error`
/// field) marks it failed. An event with a `gen_ai.` field becomes a span without duration.
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    GenAiLayer
}

struct GenAiLayer;

/// What the layer keeps in a span's extensions.
struct Tracked {
    run: Arc<RunTrace>,
    span: Span,
    /// Spans without GenAI fields are not kept; their children hang from this one's parent.
    kept: bool,
}

#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_string(),
            Value::String(format!("{value:?}")),
        );
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        // JSON written as a string stays a string (the normalizer parses where it expects JSON).
        self.0
            .insert(field.name().to_string(), Value::String(value.to_string()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), Value::Bool(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().to_string(), Value::String(value.to_string()));
    }
}

/// A span of the layer beginning now, under `parent` in the trace `trace_id`: an internal span
/// with a fresh id and no duration yet (an event keeps none).
fn begun(
    trace_id: [u8; 16],
    parent: [u8; 8],
    name: String,
    attributes: Map<String, Value>,
) -> Span {
    let now = now_nanos();
    Span {
        trace_id,
        span_id: random_id(),
        parent: Some(parent),
        name,
        kind: Kind::Internal,
        start: now,
        end: now,
        status: Status::Unset,
        status_message: None,
        service: None,
        attributes,
        log: false,
    }
}

fn genai(name: &str, attributes: &Map<String, Value>) -> bool {
    name.starts_with("chat")
        || name.starts_with("execute_tool")
        || name.starts_with("invoke_agent")
        || attributes.keys().any(|k| {
            k.starts_with("gen_ai.")
                || k.starts_with("llm.")
                || k.starts_with("ai.")
                || k.starts_with("openinference.")
        })
}

/// Applies the `otel.*` fields to the span and drops them from its attributes.
fn apply_otel(span: &mut Span) {
    if let Some(Value::String(name)) = span.attributes.remove("otel.name") {
        span.name = name;
    }
    if let Some(Value::String(kind)) = span.attributes.remove("otel.kind") {
        span.kind = Kind::from_name(&kind);
    }
    if let Some(Value::String(code)) = span.attributes.remove("otel.status_code") {
        span.status = match code.to_ascii_lowercase().as_str() {
            "error" => Status::Error,
            "ok" => Status::Ok,
            _ => Status::Unset,
        };
    }
    if let Some(Value::String(message)) = span.attributes.remove("otel.status_message") {
        span.status_message = Some(message);
    }
    if span.attributes.contains_key("error") && span.status == Status::Unset {
        span.status = Status::Error;
    }
}

impl GenAiLayer {
    /// The run and parent span id of something created now under `parent`.
    fn context<S>(parent: Option<&Id>, ctx: &Context<'_, S>) -> Option<(Arc<RunTrace>, [u8; 8])>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        if let Some(parent) = parent.and_then(|id| ctx.span(id)) {
            let extensions = parent.extensions();
            if let Some(tracked) = extensions.get::<Tracked>() {
                let id = if tracked.kept {
                    tracked.span.span_id
                } else {
                    tracked.span.parent.unwrap_or(tracked.span.span_id)
                };
                return Some((tracked.run.clone(), id));
            }
        }
        TURN.try_with(|turn| (turn.run.clone(), turn.span_id)).ok()
    }
}

impl<S> Layer<S> for GenAiLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = if attrs.is_root() {
            None
        } else if let Some(parent) = attrs.parent() {
            Some(parent.clone())
        } else {
            ctx.current_span().id().cloned()
        };
        let Some((run, parent_id)) = Self::context(parent.as_ref(), &ctx) else {
            return;
        };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let name = attrs.metadata().name().to_string();
        let kept = genai(&name, &fields.0);
        let mut span = begun(run.trace_id(), parent_id, name, fields.0);
        if !kept {
            // Its children hang from its parent.
            span.span_id = parent_id;
        }
        if let Some(span_ref) = ctx.span(id) {
            span_ref
                .extensions_mut()
                .insert(Tracked { run, span, kept });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span_ref) = ctx.span(id) else {
            return;
        };
        let mut extensions = span_ref.extensions_mut();
        if let Some(tracked) = extensions.get_mut::<Tracked>() {
            let mut fields = Fields(std::mem::take(&mut tracked.span.attributes));
            values.record(&mut fields);
            tracked.span.attributes = fields.0;
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if !fields.0.keys().any(|k| k.starts_with("gen_ai.")) {
            return;
        }
        let parent = if event.is_root() {
            None
        } else if let Some(parent) = event.parent() {
            Some(parent.clone())
        } else {
            ctx.current_span().id().cloned()
        };
        let Some((run, parent_id)) = Self::context(parent.as_ref(), &ctx) else {
            return;
        };
        let name = match fields.0.remove("message") {
            Some(Value::String(message)) => message,
            _ => event.metadata().name().to_string(),
        };
        let mut span = begun(run.trace_id(), parent_id, name, fields.0);
        apply_otel(&mut span);
        run.push(vec![span]);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span_ref) = ctx.span(&id) else {
            return;
        };
        let Some(mut tracked) = span_ref.extensions_mut().remove::<Tracked>() else {
            return;
        };
        if !tracked.kept && !genai(&tracked.span.name, &tracked.span.attributes) {
            return;
        }
        if !tracked.kept {
            // Became a GenAI span after its creation: kept under its parent.
            tracked.span.span_id = random_id();
        }
        tracked.span.end = now_nanos();
        apply_otel(&mut tracked.span);
        tracked.run.push(vec![tracked.span]);
    }
}
