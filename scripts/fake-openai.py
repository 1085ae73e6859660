#!/usr/bin/env python3
"""A loopback fake of the OpenAI Chat Completions API (and OpenAI Responses, Anthropic Messages) with
deterministic answers, for the promptfoo conformance corpus and scripts/bench-promptfoo.sh.

    python3 scripts/fake-openai.py [PORT] [--answers FILE] [--record FILE]   # prints "PORT <n>" once listening; 0 = any port

With --record, every request is appended to FILE as one JSON line {"path", "body"} (tests read
what a suite sent).

With --answers, FILE (a suite's `fake-answers.json`) is a list of {"match": TEXT, "answer": TEXT}:
a model request whose text (its messages' text, or the whole body for a request that is not a
chat, such as an HTTP target's) contains `match` gets that `answer` (the first entry that
matches; `match` and the text compared case-insensitively). Requests no entry matches, and
every request without --answers, get the answers below.

Answers to the last user message U:
- U asks for JSON ("json" in it): {"answer": <first 40 chars of U>, "words": <word count>}
- U contains "refuse": "I'm sorry, I can't help with that."
- otherwise: "Answer: " + U
Graders: a request with a forced tool (niceeval's judge) gets a tool call scoring 1 (choice
"Y" / "C"), or 0 ("N" / "D") when the request mentions "sorry" — unless its model's name holds
"text-only": then the verdict comes in the reply's text, as promptfoo's JSON in a code fence
(`pass`, `score`, `reason`; a choice "Y" / "A", or "N" / "D"); promptfoo's rubric prompt
("user-specified rubric") gets {"reason", "pass", "score"}, its closed-QA prompt ("[BEGIN
DATA]" … "Criterion") a final "Y" / "N", its factuality prompt {"category": "C" / "D"} and its
g-eval prompts (and niceeval's) {"steps": [...]}, then {"score": 10 / 0, "reason"}, by the same rule.
Embeddings (`/embeddings`, `{model, input}`): each text's words counted into 64 buckets (by
their MD5), so equal word sets have cosine similarity 1 and texts without a shared word 0.
AgentV (4.42.4): streamed requests (`"stream": true`) get the same answer as server-sent events;
its LLM grader ("a single JSON object matching this schema") gets {"score", "assertions"} and its
rubric grader ("each rubric item") one check per rubric id, and its score-range grader ("each
criterion") a score of 10 (or 0) per criterion, by the same rule; niceeval's requests in AgentV's
protocol ("reply with one JSON object", with `"score"`, `"satisfied"`, or "criterion by
criterion") get the same. A last user message asking
to "count the turns" gets "turns: <n>" (the user and assistant messages of the request).
"""
import hashlib
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content)


def enum_of(value):
    """The first `enum` list inside a tool definition."""
    if isinstance(value, dict):
        if isinstance(value.get("enum"), list):
            return value["enum"]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = enum_of(item)
            if found:
                return found
    return None


ANSWERS = []


def canned(text):
    low = text.lower()
    for entry in ANSWERS:
        if entry["match"].lower() in low:
            return entry["answer"]
    return None


def embedding(text):
    vector = [0.0] * 64
    for word in re.findall(r"[a-z0-9]+", str(text).lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


def answer(user):
    if "json" in user.lower():
        return json.dumps({"answer": user[:40], "words": len(user.split())})
    if "refuse" in user.lower():
        return "I'm sorry, I can't help with that."
    return "Answer: " + user


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle's algorithm and the
    # client's delayed ACK stall every response by ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) or b"{}"
        if RECORD:
            with open(RECORD[0], "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "body": raw.decode("utf-8", "replace")}) + "\n")
        body = json.loads(raw)
        if self.path.rstrip("/").endswith("/embeddings"):
            given = body.get("input") or ""
            texts = given if isinstance(given, list) else [given]
            data = [{"object": "embedding", "index": i, "embedding": embedding(t)} for i, t in enumerate(texts)]
            return self.send(200, {"object": "list", "data": data, "model": body.get("model", ""),
                                   "usage": {"prompt_tokens": 1, "total_tokens": 1}})
        messages = body.get("messages") or []
        responses = self.path.rstrip("/").endswith("/responses")
        if responses:
            # OpenAI's Responses API (promptfoo uses it for some models): `input` is the text or
            # the messages, `instructions` the system prompt.
            given = body.get("input") or ""
            messages = given if isinstance(given, list) else [{"role": "user", "content": given}]
            if body.get("instructions"):
                messages = [{"role": "system", "content": body["instructions"]}] + messages
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            # As the real API does: a request whose `messages` is not a list of messages is
            # rejected.
            return self.send(400, {"error": {"message": "'messages' must be an array of messages",
                                             "type": "invalid_request_error"}})
        whole = json.dumps(body).lower()
        passing = "sorry" not in whole
        users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        user = users[-1] if users else ""
        tools = body.get("tools") or []
        anthropic = self.path.rstrip("/").endswith("/messages")
        if tools and "text-only" in str(body.get("model", "")):
            # A model without tool calls (its name holds "text-only"): a grader's verdict comes
            # as promptfoo's JSON in a code fence, a choice as {"choice", "reason"}.
            choices = enum_of(tools) or (["Y", "N"] if "criterion" in whole else None)
            if choices or "select_choice" in whole:
                pick = ("Y" if passing else "N") if "criterion" in whole else ("A" if passing else "D")
                verdict = {"reason": "fake text grader", "choice": pick}
            else:
                verdict = {"reason": "fake text grader", "pass": passing, "score": 1.0 if passing else 0.0}
            content = "My verdict:\n```json\n" + json.dumps(verdict) + "\n```"
            return self.send(200, self.chat(body, content, None))
        if tools:
            choice = body.get("tool_choice") or {}
            name = (choice.get("function") or {}).get("name") or choice.get("name")
            if not name:
                first = tools[0]
                name = (first.get("function") or first).get("name")
            choices = enum_of(tools)
            if not choices and name == "select_choice":
                # niceeval's judge names its choices in the prompt: Y/N for a criterion
                # (closed QA), A-E for factuality.
                choices = ["Y", "N"] if "criterion" in whole else ["A", "B", "C", "D", "E"]
            if choices:
                if "Y" in choices:
                    pick = "Y" if passing else "N"
                else:
                    pick = "C" if passing else "D"
                args = {"reasons": ["fake"], "choice": pick}
            else:
                args = {"reasons": ["fake"], "score": 1.0 if passing else 0.0}
            if anthropic:
                reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", ""),
                         "content": [{"type": "tool_use", "id": "t1", "name": name, "input": args}],
                         "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}
            else:
                reply = self.chat(body, None, [{"id": "call_1", "type": "function",
                                                "function": {"name": name, "arguments": json.dumps(args)}}])
        else:
            system = " ".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
            if body.get("system"):
                system += text_of(body["system"])
            prompt = (system + "\n" + user).lower()
            graded = agentv_grade(system, user, passing)
            if graded is not None:
                content = graded
            elif "count the turns" in user.lower():
                content = agentv_turns(messages)
            elif "[begin data]" in prompt and "criterion" in prompt:
                letter = "Y" if passing else "N"
                content = f"The submission was checked.\n{letter}\n{letter}"
            elif "<submitted_answer>" in prompt and "<expert_answer>" in prompt:
                # promptfoo's factuality prompt: a category, C (same details) or D (disagrees).
                content = json.dumps({"category": "C" if passing else "D", "reason": "fake grader"})
            elif ("concise evaluation steps" in prompt or "list the steps you will follow" in prompt) and '"steps"' in prompt:
                # promptfoo's g-eval, first call: the evaluation steps.
                content = json.dumps({"steps": ["Check the reply against the criteria"]})
            elif ("**evaluation steps**" in prompt and '"score" key' in prompt) or ("following the steps" in prompt and "score from 0" in prompt):
                # promptfoo's g-eval, second call: a score out of 10.
                content = json.dumps({"score": 10 if passing else 0, "reason": "fake grader"})
            elif "user-specified rubric" in (system + user).lower():
                content = json.dumps({"reason": "fake grader", "pass": passing, "score": 1.0 if passing else 0.0})
            else:
                if messages or body.get("system"):
                    text = system + "\n" + "\n".join(text_of(m.get("content")) for m in messages)
                else:
                    text = json.dumps(body, ensure_ascii=False)
                content = canned(text)
                if content is None:
                    content = answer(user)
            if anthropic:
                reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", ""),
                         "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
                         "usage": {"input_tokens": 10, "output_tokens": 5}}
            elif responses:
                reply = {"id": "resp_1", "object": "response", "created_at": 0, "status": "completed",
                         "model": body.get("model", ""),
                         "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                                     "content": [{"type": "output_text", "text": content, "annotations": []}]}],
                         "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
            else:
                reply = self.chat(body, content, None)
        if body.get("stream") and not anthropic:
            return agentv_stream(self, reply)
        self.send(200, reply)

    def send(self, status, reply):
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    @staticmethod
    def chat(body, content, tool_calls):
        message = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if tool_calls else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


# --- AgentV (scripts/agentv-conformance.py) -------------------------------------------------
# AgentV 4.42.4 streams its chat completions (`"stream": true`): the same answer as server-sent
# events, one content delta (or one tool-call delta) and a usage chunk.


def agentv_grade(system, user, passing):
    """AgentV's LLM grader asks for one JSON object ("matching this schema"): a score of 1 with
    every check passed, or 0 with every check failed when the request mentions "sorry"."""
    low = system.lower()
    # niceeval speaks the same protocol in its own words ("reply with one json object").
    if "evaluate the candidate answer against each rubric item" in low or (
            "reply with one json object" in low and '"satisfied"' in low):
        # The rubric grader: one check per `- [id]` line of the rubric list.
        ids = re.findall(r"^- \[([^\]]+)\]", user, re.M)
        return json.dumps({"checks": [{"id": i, "satisfied": passing, "reasoning": "fake"} for i in ids],
                           "overall_reasoning": "fake grader"})
    if "score the candidate answer on each criterion" in low or (
            "reply with one json object" in low and "criterion by criterion" in low):
        # The score-range rubric grader: 0-10 per `### Criterion: id`.
        ids = re.findall(r"^### Criterion: (\S+)", user, re.M)
        return json.dumps({"checks": [{"id": i, "score": 10 if passing else 0, "reasoning": "fake"} for i in ids],
                           "overall_reasoning": "fake grader"})
    if "respond with a single json object matching this schema" not in low and not (
            "reply with one json object" in low and '"score"' in low):
        return None
    return json.dumps({"score": 1.0 if passing else 0.0,
                       "assertions": [{"text": "fake grader", "passed": passing}]})


def agentv_turns(messages):
    """For a conversation test: "turns: <n>", the user and assistant messages received."""
    return f"turns: {sum(1 for m in messages if m.get('role') in ('user', 'assistant'))}"


def agentv_stream(handler, reply):
    choice = reply["choices"][0]
    message = choice["message"]
    delta = {"role": "assistant"}
    if message.get("content") is not None:
        delta["content"] = message["content"]
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": 0, "model": reply["model"]}
    chunks = [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]),
        dict(base, choices=[], usage=reply["usage"]),
    ]
    data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    data = data.encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


RECORD = []


def main():
    args = sys.argv[1:]
    if "--answers" in args:
        i = args.index("--answers")
        with open(args[i + 1], encoding="utf-8") as f:
            ANSWERS.extend(json.load(f))
        del args[i:i + 2]
    if "--record" in args:
        i = args.index("--record")
        RECORD.append(args[i + 1])
        del args[i:i + 2]
    port = int(args[0]) if args else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    # A client that hangs up between requests is not an error worth a traceback.
    server.handle_error = lambda request, address: None
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
