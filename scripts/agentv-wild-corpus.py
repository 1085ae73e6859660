#!/usr/bin/env python3
"""The AgentV corpus from the wild: real AgentV eval files of repositories other than
EntityProcess/agentv, listed with their source in
niceeval-suites/tests/conformance/agentv-wild/manifest.json and assembled from local snapshots of
those repositories (the search tool's `fetch` puts them under /work/.mirror) into a directory
that is not committed.

    python3 scripts/agentv-wild-corpus.py draw [--mirrors /work/.mirror]
    python3 scripts/agentv-wild-corpus.py [assemble] [--mirrors /work/.mirror] [--out DIR]

`draw` fills the manifest's `repositories`, `suites` and `skipped` from its `pool`, `seed`,
`per_repository` and `files` (the rule is the manifest's `rule`): the files are chosen before
either tool runs them. `assemble` (the default; DIR defaults to
niceeval-suites/tests/conformance/agentv-wild/suites, which git ignores) copies, for each
repository of the manifest, the whole tree of its commit to DIR/<owner>--<name>/ (AgentV files
reach into the repository: targets files at its root, graders that read its files, cases files,
prompts), then makes the targets reach the loopback fake (scripts/fake-openai.py) and writes
DIR/corpus.json, the files to run, for scripts/agentv-conformance.py --corpus DIR.

Target edits (the same files for both tools; eval files and assertions are never edited), in every
`.agentv/targets.yaml` of the tree:
- a target of a model API (`openai`, `azure`, `anthropic`, `gemini`, …), of an agent that needs an
  account or a network (`codex`, `copilot*`, `claude*`, `pi*`, `vscode`, …), or a `use_target` set
  by an environment variable becomes the fake: `provider: openai` with the base URL, key and model
  of the fake's variables (OPENAI_BASE_URL, OPENAI_API_KEY, AGENTV_FAKE_MODEL), keeping its name
  and its `grader_target` / `judge_target`;
- a `cli` target stays when what it runs is here (its program on PATH, the files it names in the
  tree, the packages its script loads); otherwise it becomes the fake;
- `mock` targets and `use_target` aliases of other targets stay;
- a target an eval file names (its `execution.target`, a test's, or `default` when it names none)
  that no targets file between the eval file and the tree's root defines is added to the root's
  targets file (created if need be) as the fake.
Each edit is listed in the rewritten file's header, in DIR/corpus.json and in the manifest.
"""
import argparse
import importlib.util
import json
import os
import posixpath
import random
import re
import shutil
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "niceeval-suites", "tests", "conformance", "agentv-wild")
EVAL_NAME = re.compile(r"(^|/)([^/]+\.)?(eval|EVAL)\.ya?ml$")
LICENCES = ("MIT", "Apache", "BSD", "ISC", "MPL", "Mozilla Public", "CC0", "Unlicense", "The Unlicense")
API_KINDS = {"openai", "azure", "azure-openai", "anthropic", "gemini", "google", "google-gemini", "vertex",
             "openrouter", "bedrock", "ollama", "groq", "mistral", "deepseek", "xai", "together"}
FAKE = {"provider": "openai", "base_url": "${{ OPENAI_BASE_URL }}", "api_key": "${{ OPENAI_API_KEY }}",
        "model": "${{ AGENTV_FAKE_MODEL }}"}
NODE_BUILTINS = {"assert", "buffer", "child_process", "crypto", "events", "fs", "http", "https", "module", "net",
                 "os", "path", "process", "readline", "stream", "string_decoder", "timers", "url", "util", "zlib",
                 "worker_threads", "fs/promises", "stream/promises", "timers/promises", "perf_hooks", "tty", "vm"}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def mirror(mirrors, repo):
    return os.path.join(mirrors, repo.replace("/", "+"), "repo")


def tree_of(repo, commit):
    """{path: (mode, blob, size)} of a commit."""
    out = {}
    for line in git(repo, "ls-tree", "-r", "-l", "-z", commit).decode().split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, blob, size = meta.split()
        if kind == "blob":
            out[path] = (mode, blob, int(size) if size.isdigit() else -1)  # -1: absent from the snapshot
    return out


def licence(repo, commit, tree):
    for path in sorted(tree):
        if "/" not in path and re.match(r"(?i)^(licen[cs]e|copying)(\.md|\.txt)?$", path):
            head = git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace")[:400]
            for name in LICENCES:
                if name.lower() in head.lower():
                    return f"{head.strip().splitlines()[0].strip()} ({path})"
    if "package.json" in tree:
        try:
            pkg = json.loads(git(repo, "show", f"{commit}:package.json"))
        except (json.JSONDecodeError, subprocess.CalledProcessError):
            pkg = {}
        lic = pkg.get("license") if isinstance(pkg, dict) else None
        if isinstance(lic, str) and any(lic.startswith(n.split()[0]) for n in LICENCES):
            return f"{lic} (package.json)"
    return None


def is_agentv_eval(text):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(doc, dict) and "tests" in doc


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def wild_corpus():
    spec = importlib.util.spec_from_file_location("wild_corpus", os.path.join(ROOT, "scripts", "wild-corpus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def references(repo, commit, tree, path):
    """The repository files an eval file names, and the files those name (wild-corpus.py's
    rule: paths in their text, against the naming file's directory and the eval file's), two
    steps deep. For the record: the corpus holds the repository's whole tree."""
    wild = wild_corpus()
    base = posixpath.dirname(path)
    seen, level = {path}, [path]
    for _ in range(2):
        found = set()
        for p in level:
            if tree[p][2] > 400_000 or tree[p][2] < 0:
                continue
            text = git(repo, "show", f"{commit}:{p}").decode("utf-8", "replace")
            found |= wild.referenced(text, posixpath.dirname(p), tree) | wild.referenced(text, base, tree)
        level = sorted(f for f in found - seen if "node_modules/" not in f)
        seen |= set(level)
    return sorted(seen - {path})


def draw(args):
    manifest = json.load(open(args.manifest))
    pool = sorted((e["repo"] for e in manifest["pool"]), key=str.lower)
    found = {e["repo"]: e["found"] for e in manifest["pool"]}
    rng = random.Random(manifest["seed"])
    rng.shuffle(pool)
    repositories, suites, skipped = [], [], []
    for name in pool:
        if len(suites) >= manifest["files"]:
            skipped.append({"what": name, "why": "not looked at: the corpus is full"})
            continue
        repo = mirror(args.mirrors, name)
        if not os.path.isdir(repo):
            skipped.append({"what": name, "why": "no snapshot"})
            continue
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        tree = tree_of(repo, commit)
        if "package.json" in tree:
            try:
                if json.loads(git(repo, "show", f"{commit}:package.json")).get("name") == "agentv":
                    skipped.append({"what": name, "why": "a copy of AgentV"})
                    continue
            except (json.JSONDecodeError, AttributeError):
                pass
        evals = sorted(p for p in tree if EVAL_NAME.search(p) and "node_modules/" not in p)
        if not evals:
            skipped.append({"what": name, "why": "no AgentV eval file in the snapshot"})
            continue
        lic = licence(repo, commit, tree)
        if not lic:
            skipped.append({"what": name, "why": f"no licence that permits copying ({len(evals)} eval file(s))"})
            continue
        rng.shuffle(evals)
        taken, blobs = [], set()
        for i, path in enumerate(evals):
            if len(taken) >= manifest["per_repository"] or len(suites) + len(taken) >= manifest["files"]:
                skipped += [{"what": f"{name} {p}", "why": "not taken: the repository's share (or the corpus) is full"}
                            for p in evals[i:]]
                break
            blob = tree[path][1]
            if blob in blobs:
                skipped.append({"what": f"{name} {path}", "why": "identical to a file taken"})
                continue
            if not is_agentv_eval(git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace")):
                skipped.append({"what": f"{name} {path}", "why": "not an AgentV eval file (no `tests`)"})
                continue
            blobs.add(blob)
            taken.append(path)
        repositories.append({"repo": name, "commit": commit, "licence": lic, "found": found[name],
                             "dir": name.replace("/", "--").lower(),
                             "eval_files": len(evals)})
        for path in taken:
            # The targets files AgentV reads for it: those between its directory and the root.
            d, tfiles = posixpath.dirname(path), []
            while True:
                tfiles += [p for p in (posixpath.join(d, ".agentv/targets.yaml"), posixpath.join(d, ".agentv/targets.yml")) if p in tree]
                if not d:
                    break
                d = posixpath.dirname(d)
            refs = sorted(set(references(repo, commit, tree, path)) | set(tfiles))
            suites.append({"slug": slug(f"{name.replace('/', ' ')} {path}"), "repo": name, "path": path,
                           "commit": commit, "licence": lic, "references": refs})
    manifest["repositories"], manifest["suites"], manifest["skipped"] = repositories, suites, skipped
    # The target edits assembly makes, recorded for each repository (computed on its tree).
    for entry in repositories:
        entry["target_edits"] = plan_edits(mirror(args.mirrors, entry["repo"]), entry["commit"],
                                           [s["path"] for s in suites if s["repo"] == entry["repo"]])
    with open(args.manifest, "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(suites)} file(s) from {len(repositories)} repositories; {len(skipped)} skipped")
    return 0


def command_words(command):
    if isinstance(command, list):
        return [str(w) for w in command]
    return str(command or "").split()


def cli_runnable(target, tree, files):
    """Why a cli target cannot run here, or None when it can: its program is on PATH, the
    repository files its command names are in the tree (against the tree's root and the
    target's `cwd`), and the packages its scripts load are there."""
    words = command_words(target.get("command"))
    words = [w for w in words if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
    if not words:
        return "no command"
    if "${" in " ".join(words):
        return "its command needs an environment variable set to a checkout path"
    if not shutil.which(words[0]):
        return f"`{words[0]}` is not installed here"
    scripts = [w for w in words[1:] if re.search(r"\.(m?[jt]s|cjs|py|sh)$", w.strip("'\""))]
    for script in scripts:
        path = posixpath.normpath(script.strip("'\""))
        if path not in tree:
            # Relative to the target's `cwd` (resolved against the eval file): any file of the
            # tree ending so.
            path = next((p for p in sorted(tree) if p.endswith("/" + path.lstrip("./"))), None)
        if path is None:
            return f"`{script}` is not in the repository"
        if path.endswith((".js", ".mjs", ".cjs", ".ts")):
            text = files(path)
            for pkg in re.findall(r"""(?:from\s+|require\(\s*|import\(\s*|resolve\(\s*|resolvePackageBin\(\s*)['"]([^'"]+)['"]""", text):
                if pkg.startswith((".", "/", "node:")) or pkg in NODE_BUILTINS:
                    continue
                top = "/".join(pkg.split("/")[:2]) if pkg.startswith("@") else pkg.split("/")[0]
                if not any(p.startswith("node_modules/" + top + "/") or f"/node_modules/{top}/" in p for p in tree):
                    return f"`{script}` loads the package `{top}`, which is not installed here"
    return None


def needed_targets(doc):
    names = set()
    if not isinstance(doc, dict):
        return names
    execution = doc.get("execution") if isinstance(doc.get("execution"), dict) else {}
    top = execution.get("target") or doc.get("target")
    names.add(top if isinstance(top, str) else "default")
    tests = doc.get("tests")
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict) and isinstance(test.get("execution"), dict):
            t = test["execution"].get("target")
            if isinstance(t, str):
                names.add(t)
    return names


def targets_files(tree):
    return sorted(p for p in tree if re.search(r"(^|/)\.agentv/targets\.ya?ml$", p))


def plan_edits(repo, commit, evals):
    """The edits for a repository's tree: [{file, target, provider, action, why}]."""
    tree = tree_of(repo, commit)

    def files(path):
        return git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace")

    edits, defined = [], {}
    for tfile in targets_files(tree):
        try:
            doc = yaml.safe_load(files(tfile)) or {}
        except yaml.YAMLError as e:
            edits.append({"file": tfile, "target": None, "action": "kept", "why": f"not YAML: {e}"})
            continue
        targets = doc.get("targets") if isinstance(doc, dict) else None
        names = set()
        for t in targets if isinstance(targets, list) else []:
            if not isinstance(t, dict):
                continue
            name = t.get("name") or t.get("id")
            names.add(name)
            kind = str(t.get("provider") or "")
            if "use_target" in t:
                if "${{" in str(t["use_target"]):
                    edits.append({"file": tfile, "target": name, "provider": f"use_target {t['use_target']}",
                                  "action": "fake", "why": "chosen by an environment variable"})
                continue
            if kind == "mock":
                continue
            if kind == "cli":
                why = cli_runnable(t, tree, files)
                if why:
                    edits.append({"file": tfile, "target": name, "provider": "cli", "action": "fake", "why": why})
                continue
            why = "a model API" if kind in API_KINDS else f"`{kind}` needs an account or a network"
            edits.append({"file": tfile, "target": name, "provider": kind, "action": "fake", "why": why})
        defined[posixpath.dirname(posixpath.dirname(tfile))] = names
    added = set()
    for path in evals:
        doc = yaml.safe_load(files(path))
        for name in sorted(needed_targets(doc)):
            d, found = posixpath.dirname(path), False
            while True:
                if name in defined.get(d, ()):
                    found = True
                    break
                if not d:
                    break
                d = posixpath.dirname(d)
            if not found and name not in added:
                added.add(name)
                edits.append({"file": ".agentv/targets.yaml", "target": name, "provider": None, "action": "added",
                              "why": f"named by {path}, defined by no targets file"})
    return edits


def write_tree(repo, commit, dest):
    """Every file of the commit under dest (files the snapshot lacks, of 4 MiB and more, are
    left out; symbolic links are kept when they stay inside the tree)."""
    tree = tree_of(repo, commit)
    paths = sorted(tree)
    proc = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    missing = 0
    for path in paths:
        mode, blob, _ = tree[path]
        proc.stdin.write(blob.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3:
            missing += 1
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if mode == "120000":
            link = data.decode()
            if not posixpath.normpath(posixpath.join(posixpath.dirname(path), link)).startswith(".."):
                os.symlink(link, target)
            continue
        with open(target, "wb") as f:
            f.write(data)
        if mode == "100755":
            os.chmod(target, 0o755)
    proc.stdin.close()
    proc.wait()
    return len(paths) - missing, missing


def apply_edits(entry, dest):
    by_file = {}
    for e in entry["target_edits"]:
        by_file.setdefault(e["file"], []).append(e)
    for tfile, edits in sorted(by_file.items()):
        path = os.path.join(dest, tfile)
        doc = yaml.safe_load(open(path)) if os.path.exists(path) else {"targets": []}
        doc = doc if isinstance(doc, dict) else {"targets": []}
        targets = doc.setdefault("targets", [])
        for e in edits:
            fake = {"name": e["target"], **FAKE}
            if e["action"] == "added":
                targets.append(fake)
                continue
            if e["action"] != "fake":
                continue
            for i, t in enumerate(targets):
                if isinstance(t, dict) and (t.get("name") or t.get("id")) == e["target"]:
                    for key in ("grader_target", "judge_target"):
                        if key in t:
                            fake[key] = t[key]
                    targets[i] = fake
        header = [f"# niceeval AgentV corpus from the wild: github.com/{entry['repo']} at {entry['commit']},",
                  f"# `{tfile}`" + (" (added)" if not any(e["action"] != "added" for e in edits) else "")
                  + f"; licence: {entry['licence']}. Edits, so both tools reach the loopback fake:"]
        for e in edits:
            header.append(f"# - `{e['target']}` ({e.get('provider') or 'not defined'}): {e['action']}, {e['why']}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(header) + "\n")
            yaml.safe_dump(doc, f, sort_keys=False, allow_unicode=True, width=120)


def assemble(args):
    manifest = json.load(open(args.manifest))
    os.makedirs(args.out, exist_ok=True)
    files, missing = [], 0
    for entry in manifest["repositories"]:
        repo = mirror(args.mirrors, entry["repo"])
        dest = os.path.join(args.out, entry["dir"])
        try:
            git(repo, "cat-file", "-e", entry["commit"])
        except (subprocess.CalledProcessError, FileNotFoundError):
            missing += 1
            print(f"{entry['repo']}: not assembled; fetch github:{entry['repo']} first", file=sys.stderr)
            continue
        shutil.rmtree(dest, ignore_errors=True)
        n, absent = write_tree(repo, entry["commit"], dest)
        apply_edits(entry, dest)
        edits = [e for e in entry["target_edits"] if e["action"] != "kept"]
        print(f"{entry['repo']}: {n} file(s) ({absent} absent from the snapshot), {len(edits)} target edit(s)")
    for s in manifest["suites"]:
        entry = next(r for r in manifest["repositories"] if r["repo"] == s["repo"])
        files.append({"name": s["slug"], "dir": entry["dir"], "path": s["path"], "repo": s["repo"],
                      "commit": s["commit"]})
    with open(os.path.join(args.out, "corpus.json"), "w") as f:
        json.dump({"source": os.path.relpath(args.manifest, ROOT), "files": files,
                   "target_edits": {r["repo"]: r["target_edits"] for r in manifest["repositories"]}}, f, indent=1)
        f.write("\n")
    print(f"{len(files)} eval file(s) in {args.out}")
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action", nargs="?", default="assemble", choices=["assemble", "draw"])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "suites"))
    args = ap.parse_args()
    return draw(args) if args.action == "draw" else assemble(args)


if __name__ == "__main__":
    sys.exit(main())
