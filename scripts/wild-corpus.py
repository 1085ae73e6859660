#!/usr/bin/env python3
"""Assembles the corpus from the wild: real public promptfoo configs of other repositories,
listed with their source in niceeval-suites/tests/conformance/wild/manifest.json, copied from local
snapshots of those repositories (the search tool's `fetch` puts them under /work/.mirror) into
a directory that is not committed (default niceeval-suites/tests/conformance/wild/suites/).

    python3 scripts/wild-corpus.py [--mirrors /work/.mirror] [--out DIR]

Each suite is the source repository's tree of files the config reads (found by the paths its
text names, and the paths those files name), with the config renamed `promptfooconfig.yaml`,
a header naming its source, commit and licence, and one kind of edit so it runs offline: a
provider that is not an OpenAI or Anthropic model (or one with its own base URL) is replaced by
`openai:chat:gpt-4o-mini` labelled with the original's label or id, so that both tools ask the
loopback fake (scripts/fake-openai.py). Assertions are never edited.
"""
import argparse
import fnmatch
import json
import os
import posixpath
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WILD = os.path.join(ROOT, "niceeval-suites", "tests", "conformance", "wild")
FAKE = "openai:chat:gpt-4o-mini"
PATHS = re.compile(r"""(?:file://)?((?:\.{1,2}/)?[\w@ .*/-]*?[\w*-]+\.(?:ya?ml|json|jsonl|csv|tsv|txt|md|js|mjs|cjs|ts|py|j2|njk|html|xml|png|jpe?g|webp|gif|pdf))\b""")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def offline(pid, config):
    """Whether a provider id reaches the fake as it is (OpenAI or Anthropic through the base URL
    environment variables, or promptfoo's built-in echo)."""
    if not isinstance(pid, str):
        return False
    if isinstance(config, dict) and any(k in config for k in ("apiBaseUrl", "apiHost", "basePath", "baseUrl", "apiKeyEnvar")):
        return False
    if pid in ("echo", "openai"):
        return True
    if pid.startswith("openai:") and not pid.startswith(("openai:assistant", "openai:realtime", "openai:codex", "openai:agents")):
        return True
    return pid.startswith("anthropic:") and not pid.startswith(("anthropic:claude-agent-sdk", "anthropic:claude-code"))


def provider_nodes(node, path=()):
    """The nodes of a config that are providers: the top-level `providers`/`targets` items and
    every `provider` of an `options` mapping or an assertion (recursing into graders given
    as {text, embedding})."""
    found = []
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if key in ("providers", "targets") and not path:
                found += [(v, "provider")] if not isinstance(v, yaml.SequenceNode) else [(i, "provider") for i in v.value]
            elif key == "provider":
                found.append((v, "grader"))
            else:
                found += provider_nodes(v, path + (key,))
    elif isinstance(node, yaml.SequenceNode):
        for i in node.value:
            found += provider_nodes(i, path + ("[]",))
    return found


def to_py(node):
    return yaml.safe_load(yaml.serialize(node)) if node is not None else None


def rewrite(text, edits, top=True):
    """Replaces the providers that cannot reach the fake; returns the new text (spans outside
    the replaced nodes are kept byte for byte)."""
    try:
        tree = yaml.compose(text)
    except yaml.YAMLError:
        return text, []
    if tree is None:
        return text, []
    nodes = provider_nodes(tree) if top else [(i, "provider") for i in (tree.value if isinstance(tree, yaml.SequenceNode) else [])]
    spans = []
    for node, role in nodes:
        if isinstance(node, yaml.MappingNode):
            keys = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
            if "id" not in keys and ("text" in keys or "embedding" in keys):
                for sub in ("text", "embedding"):
                    if sub in keys:
                        nodes.append((keys[sub], sub))
                continue
            value = to_py(node)
            pid, config, label = value.get("id"), value.get("config"), value.get("label")
        elif isinstance(node, yaml.ScalarNode):
            pid, config, label = node.value, None, None
        else:
            continue
        if isinstance(pid, str) and pid.startswith("file://") and pid.endswith((".yaml", ".yml", ".json")):
            edits.append(("file", pid[len("file://"):]))
            continue
        if offline(pid, config):
            continue
        name = label or pid or "provider"
        model = "openai:embedding:text-embedding-3-small" if role == "embedding" or "embed" in str(pid) else FAKE
        if role == "provider":
            new = "{id: %s, label: %s}" % (model, json.dumps(str(name)))
        else:
            new = model
        spans.append((node.start_mark.index, node.end_mark.index, new))
        edits.append(("provider", f"{pid} -> {model}"))
    for start, end, new in sorted(spans, reverse=True):
        old = text[start:end]
        tail = old[len(old.rstrip()):]
        text = text[:start] + new + tail + text[end:]
    return text, spans


def referenced(text, base, tree):
    """Repository paths a file's text names, relative to `base` (its directory), that exist in
    the tree (globs matched against it)."""
    out = set()
    for m in PATHS.finditer(text):
        raw = m.group(1).strip().lstrip("-").strip().strip("'\"")
        raw = raw.split(":")[0]
        names = {raw, raw.split()[-1]} if raw.split() else {raw}
        for candidate in {posixpath.normpath(p) for name in names for p in (posixpath.join(base, name), name)}:
            if candidate.startswith(".."):
                continue
            if "*" in candidate:
                out |= {f for f in tree if fnmatch.fnmatch(f, candidate)}
            elif candidate in tree:
                out.add(candidate)
    return out


def assemble(entry, mirrors, out):
    repo = os.path.join(mirrors, entry["repo"].replace("/", "+"), "repo")
    commit = entry["commit"]
    tree = set(git(repo, "ls-tree", "-r", "--name-only", commit).decode().split("\n")) - {""}
    config = entry["path"]
    base = posixpath.dirname(config)
    dest = os.path.join(out, entry["slug"])
    todo, seen, extra = [config], set(), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        try:
            data = git(repo, "show", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            continue  # listed, but absent from the snapshot (files of 4 MiB and more)
        seen.add(path)
        if len(data) > 200_000 or path.endswith((".png", ".jpg", ".jpeg", ".webp", ".gif", ".pdf")):
            continue  # copied, not searched for paths
        text = data.decode("utf-8", "replace")
        # Paths are resolved against the config's directory and the file's own.
        todo += sorted(referenced(text, posixpath.dirname(path), tree) | referenced(text, base, tree))
        if path.endswith(".py") and path not in extra:
            # A Python file's own imports: the other modules of its top-level package (copied
            # as they are, when the package is small).
            top = path.split("/")[0] if "/" in path else ""
            package = [f for f in tree if f.endswith(".py") and top and f.startswith(top + "/")]
            if len(package) <= 200:
                extra.update(package)
    edits = []
    for path in sorted(seen | extra):
        data = git(repo, "show", f"{commit}:{path}")
        rel = posixpath.relpath(path, base) if base else path
        if path == config:
            rel = "promptfooconfig.yaml"
        if rel.startswith(".."):
            rel = posixpath.join("_outside", posixpath.normpath(path))
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    with open(os.path.join(dest, "promptfooconfig.yaml"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    text, _ = rewrite(text, edits)
    for kind, what in list(edits):
        if kind == "file":
            p = os.path.normpath(os.path.join(dest, what))
            if os.path.isfile(p):
                sub = []
                t, _ = rewrite(open(p).read(), sub, top=False)
                open(p, "w").write(t)
                edits += [(k, f"{w} (in {what})") for k, w in sub]
    changes = [w for k, w in edits if k == "provider"]
    header = [f"# From the wild: github.com/{entry['repo']} at {commit}, `{config}`"
              + ("" if posixpath.basename(config) == "promptfooconfig.yaml" else " (renamed promptfooconfig.yaml)"),
              f"# Licence: {entry['licence']}. Copied with the files it reads ({len(seen) - 1}).",
              "# Edits: " + ("; ".join(f"provider {c}" for c in changes) if changes else "none") + "."]
    with open(os.path.join(dest, "promptfooconfig.yaml"), "w") as f:
        f.write("\n".join(header) + "\n" + text)
    return len(seen), changes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(WILD, "suites"))
    ap.add_argument("--manifest", default=os.path.join(WILD, "manifest.json"))
    ap.add_argument("--only", action="append", help="assemble only these suites (by slug)")
    args = ap.parse_args()
    manifest = json.load(open(args.manifest))
    missing = 0
    for entry in manifest["suites"]:
        if args.only and entry["slug"] not in args.only:
            continue
        try:
            n, changes = assemble(entry, args.mirrors, args.out)
            print(f"{entry['slug']}: {n} file(s), {len(changes)} provider edit(s)")
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            missing += 1
            print(f"{entry['slug']}: not assembled ({e}); fetch github:{entry['repo']} first", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
