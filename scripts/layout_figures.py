"""The layout figures of the architecture issues, measured from the tree as it stands.

    python3 scripts/layout_figures.py        (from the repository root)

Counts: `App`'s methods, the variants of the GUI's command and task enums, the fields of the
view and session structs, functions over 100 and 150 lines (brace matching on rustfmt'd code),
the lines of gui/mod.rs and the README, and the lines `duplicates` reports shared (the first
run of each pair, both trees) over src/ and src/engine/models."""
import pathlib
import re
import subprocess

SRC = pathlib.Path("src")


def rust_files(root=SRC):
    return sorted(p for p in root.rglob("*.rs"))


def block_after(lines, start):
    """Lines of the brace block that opens on or after `start`; (body lines, end index)."""
    depth, opened = 0, False
    for i in range(start, len(lines)):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', lines[i])
        line = re.sub(r"//.*", "", line)
        for ch in line:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
        if opened and depth == 0:
            return lines[start : i + 1], i
        if not opened and line.rstrip().endswith(";"):
            return [], i
    return lines[start:], len(lines) - 1


def functions():
    fn = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")
    for path in rust_files():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = fn.match(line)
            if m:
                body, _ = block_after(lines, i)
                if body:
                    yield path, m.group(6), len(body)


def impl_app_methods():
    n = 0
    for path in rust_files(SRC / "gui"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^impl(<[^>]*>)? App\b", line) or re.match(r"^impl App\s*\{", line):
                body, _ = block_after(lines, i)
                n += sum(1 for l in body if re.match(r"^    (pub(\([^)]*\))? )?fn ", l))
    return n


def item_members(kind, name):
    for path in rust_files():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if re.match(rf"^\s*(pub(\([^)]*\))? )?{kind} {name}\b", line):
                body, _ = block_after(lines, i)
                inner = [l for l in body[1:-1] if re.match(r"^    [A-Za-z_]", l)]
                if kind == "trait":
                    return sum(1 for l in inner if re.match(r"^    fn ", l))
                if kind == "struct":
                    return sum(1 for l in inner if re.match(r"^    (pub(\([^)]*\))? )?\w+\s*:", l))
                return sum(1 for l in inner if re.match(r"^    [A-Z]\w*", l))
    return None


def shared_lines(repo):
    out = subprocess.run(
        ["duplicates", "--repo", repo, "--most", "200", "--seconds", "120"],
        capture_output=True, text=True).stdout
    total = 0
    for m in re.finditer(r"^D\d+ \S+:(\d+)-(\d+) ~", out, re.M):
        total += int(m.group(2)) - int(m.group(1)) + 1
    pairs = re.match(r"(\d+) pairs", out)
    return (int(pairs.group(1)) if pairs else 0), total


fns = list(functions())
print(f"App methods:               {impl_app_methods()}")
for kind, name in [("trait", "Model"), ("enum", "UiCommand"), ("enum", "TaskDone"), ("struct", "ViewState"),
                   ("struct", "Session"), ("struct", "Snapshot"), ("struct", "RunResult")]:
    print(f"{name + ' ' + {'enum': 'variants', 'trait': 'methods'}.get(kind, 'fields') + ':':27}{item_members(kind, name)}")
print(f"functions over 100 lines:  {sum(1 for f in fns if f[2] > 100)}")
print(f"functions over 150 lines:  {sum(1 for f in fns if f[2] > 150)}")
for path, name, n in sorted((f for f in fns if f[2] > 100), key=lambda f: -f[2]):
    print(f"    {n:4}  {path}::{name}")
print(f"gui/mod.rs lines:          {len((SRC / 'gui/mod.rs').read_text().splitlines())}")
print(f"README lines:              {len(pathlib.Path('README.md').read_text().splitlines())}")
for repo in ["src", "src/engine/models"]:
    pairs, lines = shared_lines(repo)
    print(f"duplicates in {repo + ':':19}{pairs} pairs, {lines} lines (first run of each)")
