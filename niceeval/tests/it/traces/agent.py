"""A small agent instrumented with the OpenTelemetry SDK, as a user would write it.

It joins the eval's trace from TRACEPARENT, calls a "model" inside a `chat` span and two tools
inside `execute_tool` spans (GenAI semantic conventions), and prints only its reply: every tool
call and token the eval's checks see comes from the spans. argv[1] picks the exporter:
`protobuf` (opentelemetry-exporter-otlp-proto-http) or `json` (opentelemetry-exporter-otlp-json-http).
"""

import json
import os
import sys

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if sys.argv[1] == "json":
    from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
else:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces"
provider = TracerProvider(resource=Resource.create({"service.name": "refund-agent"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("refund-agent")

# The few lines that join the eval's trace (no SDK reads TRACEPARENT by itself).
parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ.get("TRACEPARENT", "")})

question = sys.stdin.read()
tokens = int(os.environ.get("AGENT_TOKENS", "120"))

with tracer.start_as_current_span("invoke_agent refund-agent", context=parent) as agent:
    agent.set_attribute("gen_ai.operation.name", "invoke_agent")
    with tracer.start_as_current_span("chat gpt-4o-mini", kind=trace.SpanKind.CLIENT) as chat:
        chat.set_attribute("gen_ai.operation.name", "chat")
        chat.set_attribute("gen_ai.provider.name", "openai")
        chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        chat.set_attribute("gen_ai.usage.input_tokens", tokens)
        chat.set_attribute("gen_ai.usage.output_tokens", 30)
        chat.set_attribute("gen_ai.response.finish_reasons", ["tool_calls"])
    for call_id, name, args in [
        ("call_1", "lookup_order", {"id": "123"}),
        ("call_2", "refund", {"id": "123", "amount": 40}),
    ]:
        with tracer.start_as_current_span("execute_tool " + name) as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", name)
            tool.set_attribute("gen_ai.tool.call.id", call_id)
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps(args))
            tool.set_attribute("gen_ai.tool.call.result", json.dumps({"ok": True}))

print(json.dumps({"type": "message", "role": "assistant", "text": "Refunded order 123."}))
sys.stdout.flush()
provider.shutdown()
