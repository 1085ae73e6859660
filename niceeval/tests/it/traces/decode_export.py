"""Decodes an OTLP/HTTP protobuf trace export with the official Python `opentelemetry-proto`
package and prints its spans as JSON (name, ids, events with their attributes)."""

import json
import sys

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

request = ExportTraceServiceRequest()
request.ParseFromString(open(sys.argv[1], "rb").read())


def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {a.key: value(a.value) for a in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


spans = []
for resource in request.resource_spans:
    service = {a.key: value(a.value) for a in resource.resource.attributes}.get("service.name")
    for scope in resource.scope_spans:
        for span in scope.spans:
            spans.append(
                {
                    "service": service,
                    "name": span.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent": span.parent_span_id.hex(),
                    "status": span.status.code,
                    "attributes": {a.key: value(a.value) for a in span.attributes},
                    "events": [
                        {"name": e.name, "attributes": {a.key: value(a.value) for a in e.attributes}}
                        for e in span.events
                    ],
                }
            )
print(json.dumps(spans))
