"""An agent using the real `openai` client, instrumented by the official
opentelemetry-instrumentation-openai-v2, against the OpenAI-compatible fake at OPENAI_BASE_URL.
It prints only its reply: the tokens the eval counts come from the `chat` spans."""

import json
import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

provider = TracerProvider()
provider.add_span_processor(
    BatchSpanProcessor(OTLPSpanExporter(endpoint=os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces"))
)
trace.set_tracer_provider(provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)

import openai  # noqa: E402

parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ.get("TRACEPARENT", "")})
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="test-key", max_retries=0)
question = sys.stdin.read()
reply = ""
with trace.get_tracer("agent").start_as_current_span("invoke_agent", context=parent):
    for _ in range(2):
        completion = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
        )
        reply = completion.choices[0].message.content

print(json.dumps({"type": "message", "role": "assistant", "text": reply}))
sys.stdout.flush()
provider.shutdown()
