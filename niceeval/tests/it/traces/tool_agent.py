"""A weather agent on the real `openai` client, against the OpenAI-compatible fake at
OPENAI_BASE_URL, instrumented the way argv[1] says. The model names each `get_weather` call in
its chat span (or, for `genai-logs`, only in a log record); the agent runs it inside a tool span
of the same convention. It prints only its reply: the eval sees calls and tokens in the spans.

- `openllmetry`: OpenLLMetry's OpenAI instrumentation (opentelemetry-instrumentation-openai) and
  a tool span as OpenLLMetry's `@tool` decorator writes it (`<name>.tool`,
  `traceloop.span.kind=tool`, `traceloop.entity.input` = `{"args": [...], "kwargs": {...}}`),
  without a call id. The decorator is in traceloop-sdk, whose dependencies (every
  instrumentation OpenLLMetry has) do not resolve beside the pinned ones; its attributes are
  copied from `traceloop/sdk/decorators/base.py` (0.62.4).
- `openinference`: OpenInference's OpenAI instrumentation and its `@tracer.tool` decorator
  (`openinference.span.kind=TOOL`, `input.value`), without a call id.
- `genai`: the official openai-v2 instrumentation with message content on spans, and the
  GenAI `execute_tool` span of opentelemetry-util-genai without a call id.
- `genai-logs`: openai-v2 with message content in log records only
  (`gen_ai.client.inference.operation.details`, exported to /v1/logs), and `execute_tool`
  spans with the call id but no arguments: the arguments are only in the log records.
"""

import json
import os
import sys

mode = sys.argv[1]
if mode == "genai":
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
elif mode == "genai-logs":
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
if mode.startswith("genai"):
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"

from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator  # noqa: E402

endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
resource = Resource.create({"service.name": "weather-agent"})
if mode == "openinference":
    from openinference.instrumentation import TracerProvider
else:
    from opentelemetry.sdk.trace import TracerProvider
provider = TracerProvider(resource=resource)
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint + "/v1/traces")))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("weather-agent")
logs = None

if mode == "openllmetry":
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)

    def run_tool(call, function):
        kwargs = json.loads(call.function.arguments)
        with tracer.start_as_current_span(f"{call.function.name}.tool") as span:
            span.set_attribute("traceloop.span.kind", "tool")
            span.set_attribute("traceloop.entity.name", call.function.name)
            span.set_attribute("gen_ai.tool.name", call.function.name)
            span.set_attribute("traceloop.entity.input", json.dumps({"args": [], "kwargs": kwargs}))
            result = function(**kwargs)
            span.set_attribute("traceloop.entity.output", json.dumps(result))
            return result

elif mode == "openinference":
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    oi_tracer = provider.get_tracer("weather-agent")
    traced = {}

    def run_tool(call, function):
        name = call.function.name
        if name not in traced:
            traced[name] = oi_tracer.tool(name=name)(function)
        return traced[name](**json.loads(call.function.arguments))

else:
    from opentelemetry import _logs
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.util.genai.handler import get_telemetry_handler

    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint + "/v1/logs")))
    _logs.set_logger_provider(logs)
    OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logs)
    handler = get_telemetry_handler(tracer_provider=provider, logger_provider=logs)

    def run_tool(call, function):
        arguments = json.loads(call.function.arguments)
        call_id = call.id if mode == "genai-logs" else None
        with handler.tool(call.function.name, tool_call_id=call_id) as invocation:
            if invocation.should_capture_content_on_span:
                invocation.arguments = arguments
            result = function(**arguments)
            if invocation.should_capture_content_on_span:
                invocation.tool_result = result
            return result


import openai  # noqa: E402


def get_weather(city):
    return f"sunny in {city}"


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]

# The few lines that join the eval's trace (no SDK reads TRACEPARENT by itself).
parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ.get("TRACEPARENT", "")})
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="test-key", max_retries=0)
messages = [{"role": "user", "content": sys.stdin.read()}]
reply = ""
with tracer.start_as_current_span("invoke_agent weather-agent", context=parent):
    for _ in range(5):
        completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = completion.choices[0].message
        if not message.tool_calls:
            reply = message.content
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = run_tool(call, get_weather)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

print(json.dumps({"type": "message", "role": "assistant", "text": reply}))
sys.stdout.flush()
provider.shutdown()
if logs is not None:
    logs.shutdown()
